// Scheduler benchmark: 1,000 active schedules with 1-second intervals over 100 simulated robots.
//
// The gateway (dist/gateway startGateway, the same composition `fleetgw serve` runs) lives in THIS
// process so its scheduler's lateness samples can be read directly; the 100 simulated robots run in
// a child process (bench/lib/sim-child.mjs) so their CPU is not counted as the gateway's. Each
// schedule's template is one 0.5 s `wait` step, so robots really execute runs while the fires keep
// coming.
//
// Fire lateness = time the occurrence was settled - its due time: for an occurrence that fires, when
// its LMDB commit finished (the fire is durable and handed to the dispatcher at that moment); for one
// skipped because its schedule's previous fire is still open, when the scheduler decided so (nothing
// is written for it). `latenessMs` covers every occurrence, `firedLatenessMs` the fired ones only. CPU share = gateway process CPU time / wall time over the
// measured window (1.0 = one full core; the machine has 2).
//
//   npm run build && node bench/scheduler.mjs [--schedules 1000] [--robots 100] [--seconds 60] [--clickhouse-url URL]
// (default telemetry store: embedded chdb, as `fleetgw serve` without --clickhouse-url)
import { randomUUID } from 'node:crypto';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tunablesFromEnv } from '../dist/config.js';
import { startGateway } from '../dist/gateway/gateway.js';
import { addRobot, createFleet, createOrg } from '../dist/store/identity.js';
import { createApiKey } from '../dist/auth/key-admin.js';
import { openStore } from '../dist/store/lmdb.js';
import { LIVE_PERMISSIONS } from '../dist/auth/permissions.js';
import { parseArgs, spawnNode, stopChild } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { schedules: 1000, robots: 100, seconds: 60, 'clickhouse-url': '' });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (xs, p) => {
  if (xs.length === 0) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-sched-'));
const store = openStore(dataDir);
const org = createOrg(store, 'bench');
const fleet = createFleet(store, org.orgId, 'bench');
const robots = Array.from({ length: opts.robots }, (_, i) => {
  const r = addRobot(store, { fleetId: fleet.fleetId, name: `r${i}`, capabilities: [], active: true });
  return { robotId: r.record.robotId, robotToken: r.robotToken };
});
const key = createApiKey(store, { orgId: org.orgId, fleetId: null, permissions: [...LIVE_PERMISSIONS], expiresAtMs: null }).apiKey;
await store.close();
const robotsFile = join(dataDir, 'robots.json');
writeFileSync(robotsFile, JSON.stringify(robots));

const gw = await startGateway({
  dataDir, host: '127.0.0.1', httpPort: 0, grpcPort: 0, clickhouseUrl: opts['clickhouse-url'] === '' ? null : opts['clickhouse-url'], tls: 'insecure',
  // Creating 1,000 schedules is setup, not the measured load: lift the per-key rate limit for it.
  tunables: { ...tunablesFromEnv(), rateLimitPerSecond: 100_000, rateLimitBurst: 100_000 }, log: (line) => { if (!/stream ended|connected/.test(line)) process.stderr.write(`${line}\n`); },
});
const call = async (path, body, idem = true) => {
  const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  if (idem) headers['idempotency-key'] = randomUUID();
  const res = await fetch(`${gw.httpUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
};

// Telemetry at 1 Hz: the robots still stream, but the run measures the scheduler, not ingest.
const sim = spawnNode(['bench/lib/sim-child.mjs', '--grpc', gw.grpcAddress, '--robots-file', robotsFile, '--hz', '1', '--duration', String(opts.seconds + 60)]);
await sim.waitJson((m) => m.event === 'connected', 60_000);

const base = `/v1/orgs/${org.orgId}/fleets/${fleet.fleetId}`;
const feature = await call(`${base}/features`, { name: 'yard', geometry: { type: 'Polygon', coordinates: [[[8, 47], [8.001, 47], [8.001, 47.001], [8, 47]]] } });
const tpl = await call(`${base}/mission-templates`, { name: 'patrol', featureId: feature.featureId, steps: [{ kind: 'wait', config: { seconds: 0.5 } }] });
await call('/v1/agent/control-operation', { org_id: org.orgId, fleet_id: fleet.fleetId, action: 'start' }, false);

// Starts spread over one second, so fires arrive as a steady stream (about one per ms).
const t0 = Date.now() + 5000;
const createStart = Date.now();
for (let i = 0; i < opts.schedules; i++) {
  await call('/v1/agent/schedule-mission', {
    org_id: org.orgId, fleet_id: fleet.fleetId, mission_id: tpl.missionId, robot_ids: [], deployment_deadline_ms: 30_000,
    schedule: { timezone: 'UTC', startTimeMs: t0 + Math.floor((i * 1000) / opts.schedules), kind: { interval: { everySeconds: 1 } } },
  });
}
const createMs = Date.now() - createStart;
await sleep(Math.max(0, t0 + 2000 - Date.now()));

const sched = gw.missions.scheduler;
sched.resetLateness();
const eld = monitorEventLoopDelay({ resolution: 5 });
eld.enable();
const before = { ...sched.stats(), runs: gw.store.runs.getKeysCount(), cpu: process.cpuUsage(), t: Date.now() };
await sleep(opts.seconds * 1000);
const after = { ...sched.stats(), runs: gw.store.runs.getKeysCount(), cpu: process.cpuUsage(before.cpu), t: Date.now() };
const wallS = (after.t - before.t) / 1000;
const lat = after.recentLatenessMs;
const result = {
  loadAverage1m: (await import('node:os')).loadavg()[0],
  schedules: opts.schedules,
  robots: opts.robots,
  windowS: wallS,
  createSchedulesMs: createMs,
  occurrences: (after.fired - before.fired) + (after.skipped - before.skipped),
  fired: after.fired - before.fired,
  skippedPreviousOpen: after.skipped - before.skipped,
  runsCreated: after.runs - before.runs,
  latenessMs: { p50: pct(lat, 50), p99: pct(lat, 99), max: pct(lat, 100), samples: lat.length },
  firedLatenessMs: { p50: pct(after.recentFiredLatenessMs, 50), p99: pct(after.recentFiredLatenessMs, 99), max: pct(after.recentFiredLatenessMs, 100), samples: after.recentFiredLatenessMs.length },
  commitMs: { p50: pct(after.recentCommitMs, 50), p99: pct(after.recentCommitMs, 99), max: pct(after.recentCommitMs, 100), commits: after.recentCommitMs.length },
  gatewayCpu: { seconds: (after.cpu.user + after.cpu.system) / 1e6, shareOfOneCore: (after.cpu.user + after.cpu.system) / 1e6 / wallS },
  openFiresAtEnd: gw.missions.dispatcher.openCount,
  eventLoopDelayMs: { p50: eld.percentile(50) / 1e6, p99: eld.percentile(99) / 1e6, max: eld.max / 1e6 },
};
process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);

await stopChild(sim, 'SIGTERM', 10_000);
await gw.close();
rmSync(dataDir, { recursive: true, force: true });
process.exit(0);
