// Benchmark (telemetry target 3: bench/notes/telemetry-ingest.md): live fan-out latency and CPU per delivered message, the gateway
// against a bare uWebSockets.js publish of the same lines, in the same run.
//
//   gateway  bench/lib/gateway-child.mjs (the same startGateway() as `fleetgw serve`, chdb store);
//            robots from bench/lib/replay-child.mjs (gRPC, one sample per message); dashboards from
//            bench/lib/fanout-subscribers.mjs (a separate process) holding stream tickets
//   bare     bench/lib/bare-fanout.mjs: uWS publishing each robot's line at the same rate, stamped
//            at publish; the same subscriber process
// Latency: the subscriber's clock at arrival minus the message's `received_at_ms` (the gateway's clock
// when the robot's message arrived; the bare server's when it published): same machine, same clock.
// CPU per delivered message: the server process's CPU (all threads, /proc) over the window divided by
// the messages the reading subscribers received in it; the gateway's main thread is also reported
// alone (the fan-out runs there; the rest is the store's ingest, which the bare server does not do).
//
//   node bench/live-fanout.mjs [--robots 100] [--hz 10] [--subs 10] [--robots-per-sub 0] [--slow 0]
//       [--encoding json|binary] [--max-hz 0] [--warmup-s 5] [--window-s 20] [--against gateway,bare]
//       [--rounds 1] [--cpu-prof DIR (the gateway's main thread)]
// --against also takes `ingest`: the same gateway and robots without subscribers, so the fan-out's own
// share of the gateway's CPU is reported (fanoutCpuUsPerDelivered).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { machineInfo, parseArgs, ROOT, cpuSeconds, rssBytes, spawnNode, stopChild, threadCpu } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), {
  robots: 100, hz: 10, subs: 10, 'robots-per-sub': 0, slow: 0, encoding: 'json', 'max-hz': 0, 'warmup-s': 5, 'window-s': 20,
  against: 'gateway,bare', rounds: 1, 'cpu-prof': '',
});
const log = (s) => process.stderr.write(`${s}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const MiB = 1024 * 1024;
const round = (v, d = 2) => Number(v.toFixed(d));

async function provision(dataDir) {
  const { openStore } = await import('../dist/store/lmdb.js');
  const { addRobot, createFleet, createOrg } = await import('../dist/store/identity.js');
  const { createApiKey } = await import('../dist/auth/key-admin.js');
  const store = openStore(dataDir);
  try {
    const org = createOrg(store, 'bench');
    const fleet = createFleet(store, org.orgId, 'bench');
    const robots = [];
    for (let i = 0; i < opts.robots; i++) {
      const r = addRobot(store, { fleetId: fleet.fleetId, name: `bench-${i}`, capabilities: ['stop'], active: true });
      robots.push({ robotId: r.record.robotId, robotToken: r.robotToken });
    }
    const key = createApiKey(store, { orgId: org.orgId, fleetId: fleet.fleetId, permissions: ['robots:read'], expiresAtMs: null });
    return { orgId: org.orgId, fleetId: fleet.fleetId, robots, apiKey: key.apiKey };
  } finally {
    await store.close();
  }
}

function subscriberArgs(mode, ws, p, robotsFile, nSubs) {
  return [join(ROOT, 'bench', 'lib', 'fanout-subscribers.mjs'), '--mode', mode, '--ws', ws, '--fleet', p.fleetId,
    '--robots-file', robotsFile, '--subs', String(nSubs), '--robots-per-sub', String(opts['robots-per-sub']),
    '--slow', String(nSubs === 0 ? 0 : opts.slow), '--encoding', opts.encoding, '--max-hz', String(opts['max-hz']),
    ...(mode === 'gateway' ? ['--http', p.http, '--api-key', p.apiKey, '--org', p.orgId] : [])];
}

async function mark(subs) {
  const sentAt = Date.now();
  subs.kill('SIGUSR1');
  return subs.waitJson((o) => o.event === 'mark' && o.tMs >= sentAt, 30_000);
}

async function runOne(kind, round_) {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-fanout-'));
  let server;
  let subs;
  let robotsProc;
  try {
    const p = await provision(dataDir);
    const robotsFile = join(dataDir, 'robots.json');
    writeFileSync(robotsFile, JSON.stringify(p.robots));
    const sockets = String(opts.subs + opts.slow + 10);
    const gw = kind === 'gateway' || kind === 'ingest';
    if (gw) {
      const prof = opts['cpu-prof'] !== '' ? ['--cpu-prof', `--cpu-prof-dir=${opts['cpu-prof']}`] : [];
      server = spawnNode([...prof, join(ROOT, 'bench', 'lib', 'gateway-child.mjs'), '--data-dir', dataDir, '--stats-ms', '1000', '--loop-delay'], {
        env: {
          FLEETGW_RATE_LIMIT_RPS: '1000000', FLEETGW_RATE_LIMIT_BURST: '1000000', FLEETGW_STREAM_MAX_SOCKETS: sockets,
          FLEETGW_STREAM_MAX_SOCKETS_PER_KEY: sockets, FLEETGW_STREAM_MAX_SOCKETS_PER_ORG: sockets,
        },
      });
    } else {
      server = spawnNode([join(ROOT, 'bench', 'lib', 'bare-fanout.mjs'), '--robots-file', robotsFile, '--fleet', p.fleetId,
        '--hz', String(opts.hz), '--encoding', opts.encoding]);
    }
    const ready = await server.waitJson((o) => o.event === 'ready', 120_000);
    await sleep(1000);
    const rssIdle = rssBytes(server.pid);
    const ws = gw ? `${ready.http.replace(/^http/, 'ws')}/v1/telemetry/stream` : ready.ws;
    // `ingest`: the same gateway and robots without subscribers (what the store's ingest costs alone).
    const nSubs = kind === 'ingest' ? 0 : opts.subs;
    subs = spawnNode(subscriberArgs(gw ? 'gateway' : 'bare', ws, { ...p, http: ready.http }, robotsFile, nSubs));
    await subs.waitJson((o) => o.event === 'ready', 300_000);
    await sleep(1000);
    const rssSubs = rssBytes(server.pid);
    if (gw) {
      robotsProc = spawnNode([join(ROOT, 'bench', 'lib', 'replay-child.mjs'), '--grpc', ready.grpc, '--robots-file', robotsFile,
        '--hz', String(opts.hz), '--duration', String(opts['warmup-s'] + opts['window-s'] + 5), '--samples-per-msg', '1', '--report-ms', '60000']);
      const c = await robotsProc.waitJson((o) => o.event === 'connected' || o.event === 'error', 120_000);
      if (c.event !== 'connected') throw new Error(c.message);
    } else {
      server.kill('SIGUSR2');
    }
    log(`${kind} round ${round_}: ${opts.robots} robots x ${opts.hz} Hz -> ${opts.subs} subscribers (+${opts.slow} slow), ${opts.encoding}; warming up`);
    await sleep(opts['warmup-s'] * 1000);
    const m0 = await mark(subs);
    const cpu0 = cpuSeconds(server.pid);
    const th0 = threadCpu(server.pid);
    const subCpu0 = cpuSeconds(subs.pid);
    const t0 = Date.now();
    await sleep(opts['window-s'] * 1000);
    const m1 = await mark(subs);
    const cpu1 = cpuSeconds(server.pid);
    const th1 = threadCpu(server.pid);
    const subCpu1 = cpuSeconds(subs.pid);
    const winS = (Date.now() - t0) / 1000;
    const rssRun = rssBytes(server.pid);
    // The gateway's own count of samples withheld from slow sockets (its /metrics counter).
    let gatewayDropped = null;
    if (gw) {
      const token = readFileSync(join(dataDir, 'metrics-token'), 'utf8').trim();
      const text = await (await fetch(`${ready.http}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
      gatewayDropped = Number(/^fleetgw_stream_samples_dropped_total (\d+)/m.exec(text)?.[1] ?? NaN);
    }
    // The gateway's event-loop delay over the window (its 1 s stats lines), worst line.
    const loopDelayMs = gw ? server.lines.map((l) => JSON.parse(l)).filter((o) => o.event === 'stats' && o.tMs >= t0 && o.loopDelayMs)
      .reduce((w, o) => ({ p99: Math.max(w.p99, o.loopDelayMs.p99), max: Math.max(w.max, o.loopDelayMs.max) }), { p99: 0, max: 0 }) : null;
    const delivered = m1.received - m0.received;
    const mainCpu = (th1.get(String(server.pid))?.cpu ?? 0) - (th0.get(String(server.pid))?.cpu ?? 0);
    const expectedPerS = opts.robots * (opts['max-hz'] > 0 ? Math.min(opts.hz, opts['max-hz']) : opts.hz) *
      opts.subs * (opts['robots-per-sub'] > 0 ? Math.min(1, opts['robots-per-sub'] / opts.robots) : 1);
    return {
      server: kind,
      round: round_,
      windowS: round(winS, 1),
      delivered,
      deliveredPerS: round(delivered / winS, 0),
      expectedPerS: round(expectedPerS, 0),
      latencyMs: m1.latency,
      serverCores: round((cpu1 - cpu0) / winS, 3),
      cpuUsPerDelivered: delivered > 0 ? round(((cpu1 - cpu0) / delivered) * 1e6, 2) : null,
      mainThreadCores: round(mainCpu / winS, 3),
      mainThreadUsPerDelivered: delivered > 0 ? round((mainCpu / delivered) * 1e6, 2) : null,
      subscriberCores: round((subCpu1 - subCpu0) / winS, 3),
      droppedToReading: m1.droppedReading,
      gatewayDroppedTotal: gatewayDropped,
      closedReading: m1.closedReading,
      slowReceived: m1.slowReceived,
      slowDropped: m1.slowDropped,
      perSubReceived: { min: m1.perSubMin, max: m1.perSubMax },
      ...(loopDelayMs ? {
        gatewayLoopDelayMs: { worstSecondP99: round(loopDelayMs.p99, 1), max: round(loopDelayMs.max, 1) },
        // Per second of the window: the longest event-loop stall (ms), to tell a few stalls from a slow loop.
        gatewayLoopDelayMaxBySecond: server.lines.map((l) => JSON.parse(l)).filter((o) => o.event === 'stats' && o.tMs >= t0 && o.loopDelayMs)
          .map((o) => round(o.loopDelayMs.max, 0)),
      } : {}),
      rssMiB: { idle: round(rssIdle / MiB, 1), withSubs: round(rssSubs / MiB, 1), running: round(rssRun / MiB, 1) },
      rssKiBPerSubscriber: round((rssSubs - rssIdle) / 1024 / Math.max(1, opts.subs + opts.slow), 1),
    };
  } finally {
    if (robotsProc) await stopChild(robotsProc, 'SIGTERM', 10_000);
    if (subs) await stopChild(subs, 'SIGTERM', 10_000);
    if (server) await stopChild(server, 'SIGTERM', 60_000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const machine = machineInfo();
const results = [];
/** Fan-out's own cost: the gateway's CPU beyond the same run's `ingest` (no subscribers), per delivered message. */
function fanoutOnly(res) {
  const ingest = results.find((r) => r.server === 'ingest' && r.round === res.round);
  if (!ingest || res.server !== 'gateway') return;
  res.fanoutCpuUsPerDelivered = round(((res.serverCores - ingest.serverCores) / res.deliveredPerS) * 1e6, 2);
  res.fanoutMainThreadUsPerDelivered = round(((res.mainThreadCores - ingest.mainThreadCores) / res.deliveredPerS) * 1e6, 2);
}
for (let r = 1; r <= opts.rounds; r++) {
  for (const kind of opts.against.split(',')) {
    if (kind !== 'gateway' && kind !== 'bare' && kind !== 'ingest') throw new Error(`--against: unknown server ${kind}`);
    const res = await runOne(kind, r);
    results.push(res);
    for (const r of results) fanoutOnly(r);
    log(`  ${kind}: p50 ${res.latencyMs.p50} / p99 ${res.latencyMs.p99} ms, ${res.deliveredPerS}/s delivered (expected ${res.expectedPerS}),` +
      ` ${res.cpuUsPerDelivered} us CPU per delivered (main thread ${res.mainThreadUsPerDelivered}), ${res.serverCores} cores;` +
      ` dropped to readers ${res.droppedToReading}, gateway dropped (slow) ${res.gatewayDroppedTotal}, loop delay ${JSON.stringify(res.gatewayLoopDelayMs)}; load ${machineInfo().loadavg}`);
  }
}
process.stdout.write(`${JSON.stringify({ bench: 'live-fanout', machine, loadavgAtEnd: machineInfo().loadavg, options: opts, results }, null, 2)}\n`);
