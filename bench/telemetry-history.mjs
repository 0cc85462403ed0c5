// Benchmark: GET /v1/robots/{id}/telemetry/series for the last 10 minutes of one
// robot at 10 Hz (6,000 samples) downsampled to 500 points, through the real gateway
// (`fleetgw serve`), with 100 robots' data in the store (each robot `--minutes` of 10 Hz history,
// rows inserted directly with INSERT ... SELECT FROM numbers()). Target: p50 under 50 ms.
// Run on both stores in one run: the embedded chdb (in the gateway's process) and a private
// ClickHouse server (Debian's 18.16 here, bench/lib/clickhouse-server.mjs).
// Baseline in the same run, alternating block by block: GET /v1/robots/{id} (auth, lookup, JSON: the
// HTTP floor). Requests go one at a time (latency). CPU per request is the gateway's utime+stime from
// /proc over each block (plus the ClickHouse server's, for that store), minus the idle rate measured
// over a quiet interval of the same run. Figures: bench/README.md#telemetry-history.
//
//   node bench/telemetry-history.mjs [--robots 100] [--minutes 30] [--requests 200] [--rounds 3] [--server-cpus 0] [--stores chdb,server]
//
// With `--exports N` (chdb only) it measures worst-case MCAP exports instead: one robot with
// `--export-samples` samples whose every string sits at its ingest bound (docs/robot-link.md), N
// exports of its range at once (read as fast as the client can), while a second robot, online on the
// robot link, gets a stop (`wait_for_ack`) every 500 ms. Reported: the gateway's RSS before and at
// peak (sampled every 20 ms from /proc), each export's bytes and time, and the stops' latency.
//
//   node bench/telemetry-history.mjs --exports 5 [--export-samples 20000] [--export-rounds 3]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openChdbStore } from '../dist/telemetry/store/chdb-store.js';
import { openClickHouseStore } from '../dist/telemetry/store/clickhouse-store.js';
import { openStore } from '../dist/store/lmdb.js';
import { createApiKey } from '../dist/auth/key-admin.js';
import { startClickHouse } from './lib/clickhouse-server.mjs';
import { provisionRobots } from './lib/provision.mjs';
import { cpuSeconds, FLEETGW, machineInfo, parseArgs, spawnNode, stopChild } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), {
  robots: 100, minutes: 30, requests: 200, rounds: 3, 'server-cpus': '0', stores: 'chdb,server', 'idle-s': 3, exports: 0, 'export-samples': 20_000, 'export-rounds': 3,
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (s, p) => s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
const summary = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: +pct(s, 50).toFixed(2), p90: +pct(s, 90).toFixed(2), p99: +pct(s, 99).toFixed(2), max: +s.at(-1).toFixed(2) };
};

/**
 * 10 Hz rows for every robot over `minutes` ending at `endMs`: a robot driving a circle, battery
 * draining. Bench-only SQL built from the bench's own numbers (never from a request).
 */
function insertSql(fleetId, robotId, endMs, minutes) {
  const n = minutes * 600;
  const start = endMs - n * 100;
  return `INSERT INTO telemetry_samples (robot_id, fleet_id, ts_ms, received_at_ms, lat, lon, elevation_m, pose_x_m, pose_y_m, pose_z_m,
    heading_deg, speed_mps, yaw_rate_dps, battery_pct, voltage_v, charging, mode, estop, gps_fix, mission_run_id, mission_state, progress_pct,
    step_index, remaining_distance_m, eta_s, health_level, faults, cpu_temp_c)
  SELECT '${robotId}', '${fleetId}', toInt64(${start} + number * 100), toInt64(${start} + number * 100 + 20),
    52 + sin(number / 600) * 0.0005, 5 + cos(number / 600) * 0.0008, 3, sin(number / 600) * 50, cos(number / 600) * 50, 0,
    (number / 10) % 360, 1.5, 6, toFloat32(100 - number / 1000), toFloat32(48), 0, 'autonomous', 0, 4, '', '', toFloat32(0),
    toInt32(0), 0, 0, 'ok', emptyArrayString(), toFloat32(40 + (number % 100) / 10)
  FROM numbers(${n})`;
}

async function runStore(kind) {
  const dataDir = mkdtempSync(join(tmpdir(), `fleetgw-bench-hist-${kind}-`));
  let gateway;
  let ch;
  try {
    const { fleetId, robots } = await provisionRobots(dataDir, opts.robots);
    const store = openStore(dataDir);
    const { apiKey } = createApiKey(store, { orgId: store.fleets.get(fleetId).orgId, fleetId: null, expiresAtMs: null, permissions: ['robots:read'] });
    await store.close();
    const endMs = Math.floor(Date.now() / 1000) * 1000;
    const t0 = performance.now();
    let extra = [];
    if (kind === 'chdb') {
      const s = await openChdbStore({ dataDir });
      for (const r of robots) await s.queryText(insertSql(fleetId, r.robotId, endMs, opts.minutes));
      await s.close();
    } else {
      ch = await startClickHouse();
      await fetch(`${ch.url}/`, { method: 'POST', body: 'CREATE DATABASE IF NOT EXISTS bench' });
      const s = await openClickHouseStore({ url: `${ch.url}/bench` });
      await s.close();
      for (const r of robots) {
        const res = await fetch(`${ch.url}/?database=bench`, { method: 'POST', body: insertSql(fleetId, r.robotId, endMs, opts.minutes) });
        if (!res.ok) throw new Error(`insert: ${await res.text()}`);
      }
      extra = ['--clickhouse-url', `${ch.url}/bench`];
    }
    const rows = opts.robots * opts.minutes * 600;
    const loadS = (performance.now() - t0) / 1000;

    gateway = spawnNode([FLEETGW, 'serve', '--data-dir', dataDir, '--port', '0', '--grpc-port', '0', '--insecure-http', '--log-level', 'warn', ...extra], {
      cpus: opts['server-cpus'],
      env: { FLEETGW_RATE_LIMIT_RPS: '100000000', FLEETGW_RATE_LIMIT_BURST: '100000000' },
    });
    const ready = await gateway.waitJson((o) => o.event === 'ready', 120_000);
    const robotId = robots[Math.floor(robots.length / 2)].robotId;
    const headers = { authorization: `Bearer ${apiKey}` };
    const seriesUrl = `${ready.http}/v1/robots/${robotId}/telemetry/series?from_ms=${endMs - 600_000}&to_ms=${endMs}&max_points=500`;
    const robotUrl = `${ready.http}/v1/robots/${robotId}`;
    const check = await (await fetch(seriesUrl, { headers })).json();
    const counted = check.points?.reduce((n, p) => n + p.count, 0);
    if (check.points?.length !== 300 || counted !== 6000) throw new Error(`series answered ${JSON.stringify(check).slice(0, 300)}`);

    const pids = () => [gateway.pid, ...(ch ? [ch.pid] : [])];
    const cpu = () => pids().reduce((s, pid) => s + cpuSeconds(pid), 0);
    await sleep(1000);
    const idle0 = cpu();
    const idleT = performance.now();
    await sleep(opts['idle-s'] * 1000);
    const idleRate = (cpu() - idle0) / ((performance.now() - idleT) / 1000);

    const results = { series: { ms: [], cpuUs: [] }, robot: { ms: [], cpuUs: [] } };
    const block = async (name, url) => {
      const c0 = cpu();
      const w0 = performance.now();
      for (let i = 0; i < opts.requests; i++) {
        const t = performance.now();
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) throw new Error(`${name}: ${res.status}`);
        results[name].ms.push(performance.now() - t);
      }
      const wall = (performance.now() - w0) / 1000;
      results[name].cpuUs.push(((cpu() - c0 - idleRate * wall) / opts.requests) * 1e6);
    };
    for (let i = 0; i < 20; i++) await (await fetch(seriesUrl, { headers })).arrayBuffer(); // warm-up
    for (let round = 0; round < opts.rounds; round++) {
      await block('series', seriesUrl);
      await block('robot', robotUrl);
    }
    const out = {
      store: kind === 'chdb' ? 'chdb (embedded, in the gateway process)' : `ClickHouse server ${(await (await fetch(`${ch.url}/?query=SELECT%20version()`)).text()).trim()}`,
      rowsInStore: rows, loadSeconds: +loadS.toFixed(1), idleCpuCores: +idleRate.toFixed(3),
      seriesPoints: check.points.length, bucketMs: check.bucketMs,
      series: { ...summary(results.series.ms), cpuUsPerRequest: results.series.cpuUs.map((x) => Math.round(x)) },
      baselineRobotGet: { ...summary(results.robot.ms), cpuUsPerRequest: results.robot.cpuUs.map((x) => Math.round(x)) },
    };
    console.log(JSON.stringify(out, null, 2));
    return out;
  } finally {
    if (gateway) await stopChild(gateway);
    if (ch) await ch.dispose();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** `n` worst-case rows (every string at its bound: 64 bytes, 64 fault codes of 64 bytes), 10 ms apart, ending at `endMs`. */
function worstSql(fleetId, robotId, endMs, n) {
  const start = endMs - n * 10;
  return `INSERT INTO telemetry_samples (robot_id, fleet_id, ts_ms, received_at_ms, lat, lon, elevation_m, pose_x_m, pose_y_m, pose_z_m,
    heading_deg, speed_mps, yaw_rate_dps, battery_pct, voltage_v, charging, mode, estop, gps_fix, mission_run_id, mission_state, progress_pct,
    step_index, remaining_distance_m, eta_s, health_level, faults, cpu_temp_c)
  SELECT '${robotId}', '${fleetId}', toInt64(${start} + number * 10), toInt64(${start} + number * 10 + 20),
    52 + number * 1e-7, 5, 3, number * 0.01, 0, 0, 90, 1.5, 6, toFloat32(80), toFloat32(48), 0, repeat('a', 64), 0, 4,
    repeat('r', 64), repeat('s', 64), toFloat32(1), toInt32(0), 0, 0, 'warn',
    arrayMap(k -> concat(toString(k), repeat('f', 64 - length(toString(k)))), range(64)), toFloat32(40)
  FROM numbers(${n})`;
}

const rssBytes = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

async function runExports() {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-export-'));
  let gateway;
  let agent;
  try {
    const { fleetId, robots } = await provisionRobots(dataDir, 2);
    const store = openStore(dataDir);
    const orgId = store.fleets.get(fleetId).orgId;
    const { apiKey } = createApiKey(store, { orgId, fleetId: null, expiresAtMs: null, permissions: ['robots:read', 'robots:write'] });
    await store.close();
    const endMs = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    const n = opts['export-samples'];
    const [heavy, stopped] = robots;
    const s = await openChdbStore({ dataDir });
    await s.queryText(worstSql(fleetId, heavy.robotId, endMs, n));
    await s.close();
    gateway = spawnNode([FLEETGW, 'serve', '--data-dir', dataDir, '--port', '0', '--grpc-port', '0', '--insecure-http', '--log-level', 'warn'], {
      cpus: opts['server-cpus'],
      env: { FLEETGW_RATE_LIMIT_RPS: '100000000', FLEETGW_RATE_LIMIT_BURST: '100000000' },
    });
    const ready = await gateway.waitJson((o) => o.event === 'ready', 120_000);
    const { RobotAgent } = await import('../dist/agent/index.js');
    let acks = 0;
    agent = new RobotAgent({ address: ready.grpc, robotId: stopped.robotId, robotToken: stopped.robotToken, dedicatedConnection: true, onCommand: () => (acks++, { accept: true }) });
    agent.start();
    while (!agent.connected) await sleep(50);
    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const exportUrl = `${ready.http}/v1/robots/${heavy.robotId}/telemetry/export.mcap?from_ms=${endMs - n * 10}&to_ms=${endMs}`;
    const body = JSON.stringify({ org_id: orgId, fleet_id: fleetId, action: 'stop', robot_id: stopped.robotId, wait_for_ack: true });
    const stop = async () => {
      const t = performance.now();
      const res = await fetch(`${ready.http}/v1/agent/control-robot`, { method: 'POST', headers, body });
      const j = await res.json();
      if (res.status !== 200 || j.outcomes?.[0]?.delivery?.state !== 'agent_received') throw new Error(`stop: ${res.status} ${JSON.stringify(j).slice(0, 300)}`);
      return performance.now() - t;
    };
    for (let i = 0; i < 5; i++) await stop(); // warm-up
    const idleStops = [];
    for (let i = 0; i < 10; i++) idleStops.push(await stop());
    const rounds = [];
    for (let round = 0; round < opts['export-rounds']; round++) {
      const before = rssBytes(gateway.pid);
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(gateway.pid))), 20);
      const stops = [];
      let running = true;
      const stopper = (async () => {
        while (running) {
          stops.push(await stop());
          await sleep(500);
        }
      })();
      const t0 = performance.now();
      const files = await Promise.all(Array.from({ length: opts.exports }, async () => {
        const t = performance.now();
        const res = await fetch(exportUrl, { headers });
        if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`);
        const bytes = (await res.arrayBuffer()).byteLength;
        return { bytes, s: +((performance.now() - t) / 1000).toFixed(2) };
      }));
      const wallS = (performance.now() - t0) / 1000;
      running = false;
      await stopper;
      clearInterval(sampler);
      rounds.push({
        rssBeforeMB: Math.round(before / 2 ** 20), rssPeakMB: Math.round(peak / 2 ** 20), wallS: +wallS.toFixed(2),
        exports: files, stopsDuringExports: summary(stops),
      });
    }
    const out = { mode: 'worst-case MCAP exports', samplesInRange: n, concurrentExports: opts.exports, idleStops: summary(idleStops), stopsAcked: acks, rounds };
    console.log(JSON.stringify(out, null, 2));
    return out;
  } finally {
    if (agent) await agent.stop();
    if (gateway) await stopChild(gateway);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function main() {
  const machine = machineInfo();
  console.log(JSON.stringify({ date: new Date().toISOString(), machine, opts }));
  if (opts.exports > 0) {
    await runExports();
    return;
  }
  for (const kind of opts.stores.split(',')) await runStore(kind);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
