// Benchmark: the Agent read tools on the real gateway in a fleet of 1,000 robots
// with 500 online (simulated robots on the real robot link, 1 Hz telemetry so every online robot has
// a live snapshot):
//   - POST /v1/agent/query-entities {kind: robot, limit: 100}: one page of 100 with live status;
//   - POST /v1/agent/resolve with 50 names (exact, case-insensitive and unmatched ones);
//   - GET /v1/me as the baseline, in the same run, alternating block by block so drift hits all three.
// Requests go one at a time (latency, not throughput). Server time is the gateway's own `durationMs`
// from its access log (0.1 ms resolution: from the request's arrival to the last byte handed to the
// socket); client time is measured around fetch. CPU per request is the gateway process's
// utime+stime from /proc over each block, minus its idle rate (telemetry ingest of the 500 robots)
// measured over a quiet interval of the same run. Figures: bench/README.md#agent-read-tools.
//
//   taskset -c 1 node bench/agent-read.mjs [--robots 1000] [--online 500] [--requests 1000] [--rounds 3] [--server-cpus 0]
//                                          [--idle-s 5] [--cpu-prof DIR]
// --cpu-prof DIR starts the gateway under `node --cpu-prof` (summarize with bench/profile-summary.mjs).
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSimFleet } from '../dist/sim/index.js';
import { openStore } from '../dist/store/lmdb.js';
import { createApiKey } from '../dist/auth/key-admin.js';
import { provisionRobots } from './lib/provision.mjs';
import { cpuSeconds, FLEETGW, machineInfo, parseArgs, spawnNode, stopChild } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { robots: 1000, online: 500, requests: 1000, rounds: 3, 'server-cpus': '0', 'idle-s': 5, 'cpu-prof': '' });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function pct(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}
const summary = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return { n: s.length, p50: pct(s, 50), p90: pct(s, 90), p99: pct(s, 99), max: s.at(-1) };
};

async function main() {
  const machine = machineInfo();
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-agent-'));
  let gateway;
  let fleet;
  try {
    const { fleetId, robots } = await provisionRobots(dataDir, opts.robots);
    const store = openStore(dataDir);
    const fleetRec = store.fleets.get(fleetId);
    const { apiKey } = createApiKey(store, {
      orgId: fleetRec.orgId, fleetId: null, expiresAtMs: null,
      permissions: ['robots:read', 'features:read', 'operations:read', 'missions:read', 'history:read', 'fleet:read'],
    });
    const orgId = fleetRec.orgId;
    await store.close();

    const profFlags = opts['cpu-prof'] !== '' ? ['--cpu-prof', `--cpu-prof-dir=${opts['cpu-prof']}`] : [];
    // The log goes to a file: a pipe this busy process drains late would block the gateway's
    // synchronous log writes and charge that wait to its CPU.
    const logPath = join(dataDir, 'gateway.log');
    const logFd = openSync(logPath, 'w');
    gateway = spawnNode([...profFlags, FLEETGW, 'serve', '--data-dir', dataDir, '--port', '0', '--grpc-port', '0', '--insecure-http', '--log-format', 'json', '--log-level', 'info'], {
      cpus: opts['server-cpus'],
      env: { FLEETGW_RATE_LIMIT_RPS: '100000000', FLEETGW_RATE_LIMIT_BURST: '100000000' },
      stderrFd: logFd,
    });
    closeSync(logFd);
    // Server time per request from the access log, by route, for the block just measured.
    let logOffset = 0;
    const durationsSinceLast = () => {
      const text = readFileSync(logPath, 'utf8');
      const fresh = text.slice(logOffset, text.lastIndexOf('\n') + 1);
      logOffset += fresh.length;
      const byRoute = {};
      for (const line of fresh.split('\n')) {
        if (!line.includes('"durationMs"')) continue;
        try {
          const o = JSON.parse(line);
          if (typeof o.durationMs === 'number' && o.route) (byRoute[o.route] ??= []).push(o.durationMs);
        } catch { /* not a log line */ }
      }
      return byRoute;
    };
    const ready = await gateway.waitJson((o) => o.event === 'ready', 60_000);

    fleet = runSimFleet({ grpc: ready.grpc, robots: robots.slice(0, opts.online), hz: 1 });
    const deadline = Date.now() + 120_000;
    while (fleet.stats().connected < opts.online) {
      if (Date.now() > deadline) throw new Error(`only ${fleet.stats().connected}/${opts.online} robots connected`);
      await sleep(250);
    }
    await sleep(3000); // every online robot has reported telemetry (1 Hz) and a snapshot is written

    const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
    const me = () => fetch(`${ready.http}/v1/me`, { headers: { authorization: headers.authorization } });
    const queryBody = JSON.stringify({ org_id: orgId, fleet_id: fleetId, kind: 'robot', limit: 100 });
    const query = () => fetch(`${ready.http}/v1/agent/query-entities`, { method: 'POST', headers, body: queryBody });
    const names = [];
    for (let i = 0; i < 50; i++) names.push(i % 5 === 3 ? `BENCH-${i * 17}` : i % 5 === 4 ? `nobody-${i}` : `bench-${i * 17}`);
    const resolveBody = JSON.stringify({ org_id: orgId, fleet_id: fleetId, names });
    const resolve = () => fetch(`${ready.http}/v1/agent/resolve`, { method: 'POST', headers, body: resolveBody });

    // Sanity: the page is 100 robots with live status, about half online; resolve finds the names.
    const page = await (await query()).json();
    if (page.items?.length !== 100) throw new Error(`query-entities answered ${JSON.stringify(page).slice(0, 300)}`);
    const onlineInPage = page.items.filter((i) => i.status.online).length;
    const withSnapshot = page.items.filter((i) => i.status.battery_pct !== null).length;
    const resolved = await (await resolve()).json();

    // Idle rate: what the gateway burns with no request (telemetry of the online robots).
    const idle0 = cpuSeconds(gateway.pid);
    const idleT0 = performance.now();
    await sleep(opts['idle-s'] * 1000);
    const idleRate = (cpuSeconds(gateway.pid) - idle0) / ((performance.now() - idleT0) / 1000);

    const targets = { me: { call: me, route: '/v1/me' }, query: { call: query, route: '/v1/agent/query-entities' }, resolve: { call: resolve, route: '/v1/agent/resolve' } };
    const results = Object.fromEntries(Object.keys(targets).map((k) => [k, { server: [], client: [], cpuMsPerReq: [] }]));
    // Warm-up.
    for (const t of Object.values(targets)) for (let i = 0; i < 200; i++) await (await t.call()).arrayBuffer();
    for (let round = 0; round < opts.rounds; round++) {
      for (const [name, t] of Object.entries(targets)) {
        await sleep(300);
        durationsSinceLast(); // skip what came before the block
        const c0 = cpuSeconds(gateway.pid);
        const t0 = performance.now();
        for (let i = 0; i < opts.requests; i++) {
          const s = performance.now();
          const res = await t.call();
          await res.arrayBuffer();
          results[name].client.push(performance.now() - s);
          if (res.status !== 200) throw new Error(`${name} answered ${res.status}`);
        }
        const wall = (performance.now() - t0) / 1000;
        const cpu = cpuSeconds(gateway.pid) - c0 - idleRate * wall;
        await sleep(300); // the last access-log lines are written
        results[name].server.push(...(durationsSinceLast()[t.route] ?? []));
        results[name].cpuMsPerReq.push((cpu * 1000) / opts.requests);
      }
    }

    const report = {
      machine: { ...machine, loadavgAfter: machineInfo().loadavg },
      setup: { robots: opts.robots, online: opts.online, hz: 1, requestsPerBlock: opts.requests, rounds: opts.rounds, idleCpuCoreFraction: Number(idleRate.toFixed(3)) },
      sanity: { pageItems: page.items.length, onlineInPage, withSnapshot, resolveItems: resolved.items.length, resolveUnmatched: resolved.unmatched.length },
      results: Object.fromEntries(Object.entries(results).map(([k, r]) => [k, {
        serverMs: summary(r.server),
        clientMs: Object.fromEntries(Object.entries(summary(r.client)).map(([a, b]) => [a, a === 'n' ? b : Number(b.toFixed(3))])),
        cpuMsPerReq: r.cpuMsPerReq.map((x) => Number(x.toFixed(3))),
      }])),
    };
    console.log(JSON.stringify(report, null, 2));
  } finally {
    await fleet?.stop();
    if (gateway) await stopChild(gateway);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
