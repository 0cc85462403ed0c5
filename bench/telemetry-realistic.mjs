// Benchmark (telemetry target 2, and the agent's memory: bench/notes/telemetry-ingest.md): realistic telemetry load, many robots at a
// low rate with one sample per message (1,000 robots x 10 Hz by default), held for --duration seconds.
// For each server in --against (run one after the other, same simulator, same robots):
//   gateway  the gateway (bench/lib/gateway-child.mjs: the same startGateway() as `fleetgw serve`; chdb,
//            or --clickhouse-url), the full pipe with rows counted afterwards
//   bare     bench/lib/bare-grpc.mjs, a grpc-js server that drops every message: the robot link's floor
//   bare-http2  bench/lib/bare-http2.mjs: node:http2 alone with the gRPC framing by hand, same drop
//   bare-late-headers  the same as bare, answering PublishTelemetry with headers only at the end (as gateways
//            older gateways did): the agents' memory must stay flat against it too
// Every --sample-s seconds: CPU (cores, from /proc) and RSS of the server and of the simulator. The
// summary gives cores over the window after --warmup-s, RSS at the window's start and end, its slope
// (MiB per minute, least squares) and maximum, for both processes. Figures: bench/README.md#telemetry-ingest-at-realistic-load.
//
//   node bench/telemetry-realistic.mjs [--robots 1000] [--hz 10] [--duration 600] [--warmup-s 30]
//       [--sample-s 10] [--against gateway,bare] [--clickhouse-url URL|local] [--gateway-env K=V,K=V]
//       [--generator sim|replay] [--samples-per-msg K] [--cpu-prof DIR] [--gateway-node-args "A B"] [--keep]
// --gateway-node-args passes Node/V8 flags to the gateway's process (e.g. "--min-semi-space-size=4", which
// NODE_OPTIONS refuses), space-separated.
// --generator replay sends pre-encoded batches (bench/lib/replay-child.mjs) instead of the simulator.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startClickHouse } from './lib/clickhouse-server.mjs';
import { countStored } from './lib/store-check.mjs';
import { provisionRobots } from './lib/provision.mjs';
import {
  cpuSeconds, machineCpu, busyBetween, machineInfo, parseArgs, ROOT, rssBytes, spawnNode, stopChild, threadCpu, threadCpuByName, threadGroups,
} from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), {
  robots: 1000, hz: 10, duration: 600, 'warmup-s': 30, 'sample-s': 10, against: 'gateway,bare', 'clickhouse-url': '',
  'gateway-env': '', generator: 'sim', 'samples-per-msg': 0, 'cpu-prof': '', 'gateway-node-args': '', keep: false,
});
const log = (s) => process.stderr.write(`${s}\n`);
const MiB = 1024 * 1024;
const round = (v, d = 2) => Number(v.toFixed(d));

/** Least-squares slope of y over x. */
function slope(xs, ys) {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

/** Waits until the process uses under 10% of a core for two 250 ms polls in a row. */
async function waitIdle(pid, maxS = 120) {
  const t0 = Date.now();
  let prev = cpuSeconds(pid);
  let quiet = 0;
  while (quiet < 2 && Date.now() - t0 < maxS * 1000) {
    await new Promise((r) => setTimeout(r, 250));
    const now = cpuSeconds(pid);
    quiet = now - prev < 0.025 ? quiet + 1 : 0;
    prev = now;
  }
}

/**
 * Batches the gateway's ingest decoded in the pool and on the main thread, between its first stats
 * line at or after `fromMs` (the window's start; lines come every 5 s) and its last one (which may
 * fall in the flush after generation stopped), and its learned main-thread decode cost at the end.
 */
function decodeBatches(lines, fromMs, lastStats) {
  let from = null;
  for (const l of lines) {
    const o = JSON.parse(l);
    if (o.event === 'stats' && o.tMs >= fromMs) {
      from = o;
      break;
    }
  }
  if (from === null) return null;
  return {
    pool: lastStats.batches - from.batches,
    main: lastStats.batchesInline - from.batchesInline,
    inlineNsPerByteAtEnd: round(lastStats.inlineDecodeNsPerByte, 2),
  };
}

function envPairs(s) {
  const env = {};
  for (const kv of s.split(',').filter(Boolean)) {
    const i = kv.indexOf('=');
    env[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return env;
}

async function runOne(kind, dataDir, fleetId, robots, robotsFile) {
  let server;
  let sim;
  try {
    if (kind === 'gateway') {
      const prof = opts['cpu-prof'] !== '' ? ['--cpu-prof', `--cpu-prof-dir=${opts['cpu-prof']}`] : [];
      const nodeArgs = opts['gateway-node-args'].split(' ').filter(Boolean);
      server = spawnNode([...nodeArgs, ...prof, join(ROOT, 'bench', 'lib', 'gateway-child.mjs'), '--data-dir', dataDir,
        ...(opts['clickhouse-url'] !== '' ? ['--clickhouse-url', opts['clickhouse-url']] : []), '--stats-ms', '5000'], { env: envPairs(opts['gateway-env']) });
    } else if (kind === 'bare-http2') {
      server = spawnNode([join(ROOT, 'bench', 'lib', 'bare-http2.mjs')]);
    } else {
      server = spawnNode([join(ROOT, 'bench', 'lib', 'bare-grpc.mjs'), ...(kind === 'bare-late-headers' ? ['--late-headers'] : [])]);
    }
    const ready = await server.waitJson((o) => o.event === 'ready', 120_000);
    const generator = opts.generator === 'replay'
      ? [join(ROOT, 'bench', 'lib', 'replay-child.mjs'), '--samples-per-msg', String(opts['samples-per-msg'])]
      : [join(ROOT, 'bench', 'lib', 'sim-child.mjs')];
    sim = spawnNode([...generator, '--grpc', ready.grpc, '--robots-file', robotsFile,
      '--hz', String(opts.hz), '--duration', String(opts.duration), '--report-ms', String(opts['sample-s'] * 1000)]);
    const connected = await sim.waitJson((o) => o.event === 'connected' || o.event === 'error', 120_000);
    if (connected.event !== 'connected') throw new Error(connected.message);
    log(`${kind}: ready (${JSON.stringify(ready)}); ${robots.length} robots connected; ${opts.duration} s at ${opts.hz} Hz`);

    const point = () => ({
      t: Date.now(), srvCpu: cpuSeconds(server.pid), simCpu: cpuSeconds(sim.pid), srvRss: rssBytes(server.pid),
      simRss: rssBytes(sim.pid), storeCpu: storePid && kind === 'gateway' ? cpuSeconds(storePid) : 0, m: machineCpu(),
    });
    const points = [point()];
    const threads0 = { at: null };
    const timer = setInterval(() => {
      const b = point();
      const a = points.at(-1);
      points.push(b);
      const s = (b.t - a.t) / 1000;
      const tS = Math.round((b.t - points[0].t) / 1000);
      if (threads0.at === null && tS >= opts['warmup-s']) threads0.at = threadCpu(server.pid);
      const machine = busyBetween(a.m, b.m);
      log(`  ${kind} t=${String(tS).padStart(4)} s  server ${((b.srvCpu - a.srvCpu) / s).toFixed(3)} cores, RSS ${(b.srvRss / MiB).toFixed(0)} MiB` +
        `  | sim ${((b.simCpu - a.simCpu) / s).toFixed(3)} cores, RSS ${(b.simRss / MiB).toFixed(0)} MiB  | machine ${(machine.all * machine.cpus.length).toFixed(2)} cores`);
    }, opts['sample-s'] * 1000);
    const genStop = await sim.waitJson((o) => o.event === 'generation-stopped', (opts.duration + 120) * 1000);
    clearInterval(timer);
    points.push(point());
    const threads1 = threadCpu(server.pid);
    let lastStats = null;
    for (let i = server.lines.length - 1; i >= 0 && !lastStats; i--) {
      const o = JSON.parse(server.lines[i]);
      if (o.event === 'stats') lastStats = o;
    }

    const win = points.filter((p) => (p.t - points[0].t) / 1000 >= opts['warmup-s']);
    const first = win[0] ?? points[0];
    const last = points.at(-1);
    const winS = (last.t - first.t) / 1000;
    const mins = win.map((p) => (p.t - first.t) / 60_000);
    const machine = busyBetween(first.m, last.m);
    const summary = {
      server: kind,
      ready,
      windowS: round(winS, 1),
      sentInWindow: genStop.stats.samplesSent,
      serverCores: round((last.srvCpu - first.srvCpu) / winS, 3),
      simCores: round((last.simCpu - first.simCpu) / winS, 3),
      ...(storePid && kind === 'gateway' ? { storeProcessCores: round((last.storeCpu - first.storeCpu) / winS, 3) } : {}),
      machineCores: round(machine.all * machine.cpus.length, 2),
      serverRssMiB: { start: round(first.srvRss / MiB, 1), end: round(last.srvRss / MiB, 1), max: round(Math.max(...win.map((p) => p.srvRss)) / MiB, 1), slopeMiBPerMin: round(slope(mins, win.map((p) => p.srvRss / MiB)), 2) },
      simRssMiB: { start: round(first.simRss / MiB, 1), end: round(last.simRss / MiB, 1), max: round(Math.max(...win.map((p) => p.simRss)) / MiB, 1), slopeMiBPerMin: round(slope(mins, win.map((p) => p.simRss / MiB)), 2) },
      serverCpuSecondsByThread: threads0.at ? threadCpuByName(threads0.at, threads1).slice(0, 10) : [],
      ...(kind === 'gateway' && threads0.at ? {
        gatewayCpuSecondsByGroup: threadGroups(server.pid, threads0.at, threads1, { startupTids: ready.startupTids ?? [], decodeTids: lastStats?.decodeThreadIds ?? [] }),
      } : {}),
      // Where the ingest decoded batches in the window (the pool, or the main thread for small ones) and
      // its learned main-thread decode cost at the end (src/telemetry/ingest/inline-decode.ts).
      ...(kind === 'gateway' && lastStats ? { decodeBatchesInWindow: decodeBatches(server.lines, first.t, lastStats) } : {}),
      timeline: points.map((p, i) => (i === 0 ? null : {
        tS: Math.round((p.t - points[0].t) / 1000),
        serverCores: round((p.srvCpu - points[i - 1].srvCpu) / ((p.t - points[i - 1].t) / 1000), 3),
        serverRssMiB: round(p.srvRss / MiB, 1),
        simCores: round((p.simCpu - points[i - 1].simCpu) / ((p.t - points[i - 1].t) / 1000), 3),
        simRssMiB: round(p.simRss / MiB, 1),
      })).slice(1),
    };
    summary.serverCpuUsPerSample = round(((last.srvCpu - first.srvCpu) / Math.max(1, opts.robots * opts.hz * winS)) * 1e6, 2);

    await sim.waitJson((o) => o.event === 'flushed', 120_000);
    await waitIdle(server.pid);
    sim.kill('SIGTERM');
    const done = await sim.waitJson((o) => o.event === 'done', 60_000);
    await sim.exited;
    summary.samplesSent = done.final.samplesSent;
    summary.samplesDroppedAtRobots = done.final.samplesDropped;
    server.kill('SIGTERM');
    const exit = await server.exited;
    if (exit.code !== 0) throw new Error(`${kind} exited with ${exit.code ?? exit.signal}: ${server.stderrText.slice(-3000)}`);
    if (kind === 'gateway') {
      const stored = await countStored({ dataDir, clickhouseUrl: opts['clickhouse-url'], fleetId, robots, stopAtMs: done.stoppingAtMs });
      summary.rowsStored = stored.rows;
      summary.lost = done.final.samplesSent - stored.rows;
      summary.duplicates = stored.duplicates;
      summary.snapshotsOk = stored.snapshots.ok;
    }
    return summary;
  } finally {
    if (sim) await stopChild(sim, 'SIGTERM', 10_000);
    if (server) await stopChild(server, 'SIGTERM', 60_000);
  }
}

async function main() {
  const machine = machineInfo();
  // `--clickhouse-url local`: a private server, so its CPU is reported apart from the gateway's.
  let clickhouse = null;
  if (opts['clickhouse-url'] === 'local') {
    clickhouse = await startClickHouse();
    opts['clickhouse-url'] = clickhouse.url;
    storePid = clickhouse.pid;
  }
  try {
    await runAll(machine);
  } finally {
    await clickhouse?.dispose();
  }
}

let storePid = null;

async function runAll(machine) {
  const results = [];
  for (const kind of opts.against.split(',')) {
    if (!['gateway', 'bare', 'bare-late-headers', 'bare-http2'].includes(kind)) throw new Error(`--against: unknown server ${kind}`);
    const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-real-'));
    try {
      const { fleetId, robots } = await provisionRobots(dataDir, opts.robots);
      const robotsFile = join(dataDir, 'robots.json');
      writeFileSync(robotsFile, JSON.stringify(robots));
      results.push(await runOne(kind, dataDir, fleetId, robots, robotsFile));
    } finally {
      if (!opts.keep) rmSync(dataDir, { recursive: true, force: true });
      else log(`data dir kept: ${dataDir}`);
    }
  }
  const out = { bench: 'telemetry-realistic', machine, loadavgAtEnd: machineInfo().loadavg, options: opts, results };
  process.stdout.write(`${JSON.stringify(out, null, 2)}\n`);
  for (const r of results) {
    log(`${r.server}: ${r.serverCores} cores (${r.serverCpuUsPerSample} us/sample), RSS ${r.serverRssMiB.start} -> ${r.serverRssMiB.end} MiB` +
      ` (slope ${r.serverRssMiB.slopeMiBPerMin} MiB/min); sim ${r.simCores} cores, RSS ${r.simRssMiB.start} -> ${r.simRssMiB.end} MiB` +
      ` (slope ${r.simRssMiB.slopeMiBPerMin} MiB/min, max ${r.simRssMiB.max})` + (r.lost !== undefined ? `; lost ${r.lost}, dup ${r.duplicates}, snapshots ok ${r.snapshotsOk}` : ''));
  }
}

await main();
