// Benchmark (issue 13 part 1): GET /v1/robots/{id}/telemetry/series for the last 10 minutes of one
// robot at 10 Hz (6,000 samples) downsampled to 500 points, through the real gateway
// (`fleetgw serve`), with 100 robots' data in the store (each robot `--minutes` of 10 Hz history,
// rows inserted directly with INSERT ... SELECT FROM numbers()). Target: p50 under 50 ms.
// Run on both stores in one run: the embedded chdb (in the gateway's process) and a private
// ClickHouse server (Debian's 18.16 here, bench/lib/clickhouse-server.mjs).
// Baseline in the same run, alternating block by block: GET /v1/robots/{id} (auth, lookup, JSON: the
// HTTP floor). Requests go one at a time (latency). CPU per request is the gateway's utime+stime from
// /proc over each block (plus the ClickHouse server's, for that store), minus the idle rate measured
// over a quiet interval of the same run. Figures: bench/README.md.
//
//   node bench/telemetry-history.mjs [--robots 100] [--minutes 30] [--requests 200] [--rounds 3] [--server-cpus 0] [--stores chdb,server]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openChdbStore } from '../dist/telemetry/chdb-store.js';
import { openClickHouseStore } from '../dist/telemetry/clickhouse-store.js';
import { openStore } from '../dist/store/lmdb.js';
import { createApiKey } from '../dist/store/identity.js';
import { startClickHouse } from './lib/clickhouse-server.mjs';
import { provisionRobots } from './lib/provision.mjs';
import { cpuSeconds, FLEETGW, machineInfo, parseArgs, spawnNode, stopChild } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { robots: 100, minutes: 30, requests: 200, rounds: 3, 'server-cpus': '0', stores: 'chdb,server', 'idle-s': 3 });
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

async function main() {
  const machine = machineInfo();
  console.log(JSON.stringify({ date: new Date().toISOString(), machine, opts }));
  for (const kind of opts.stores.split(',')) await runStore(kind);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
