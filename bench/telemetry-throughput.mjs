// Benchmark (b): telemetry samples per second through the whole pipe — simulated robots (own process)
// -> gRPC robot link -> ingest -> decode workers -> chdb (or a ClickHouse server) + LMDB snapshots.
// Afterwards: rows counted in the store vs samples the simulator wrote, every robot's snapshot checked.
// Usage and figures: bench/README.md#telemetry-ingest-at-peak.
//
//   node bench/telemetry-throughput.mjs [--robots 100] [--hz 1000] [--duration 60]
//       [--generator sim|replay] [--samples-per-msg K] [--connections N] [--replay-transport grpc-js|http2]
//       [--clickhouse-url URL|local] [--gateway-cpus LIST] [--sim-cpus LIST] [--cpu-prof DIR]
//       [--sample-ms 5000] [--ingest-stats] [--gateway-env K=V,...] [--gateway-node-args "A B"] [--gc-stats]
//       [--target-rate N] [--target-us U] [--keep]
// --generator replay (telemetry target 4: bench/notes/telemetry-ingest.md) sends pre-encoded batches (bench/lib/replay-child.mjs) so
// the generator is not the bottleneck; its own CPU is reported either way (`simCpuUsPerSample`).
// --clickhouse-url local starts a private clickhouse-server (bench/lib/clickhouse-server.mjs) so its
// CPU is reported apart from the gateway's (`storeCpuUsPerSample`).
// --ingest-stats runs the gateway through bench/lib/gateway-child.mjs (the same startGateway() as
// `fleetgw serve`) so the timeline also shows the ingest's stages (rows written/s, queued bytes,
// decode tasks and inserts in flight, robots paused), and the gateway's CPU is split per thread group
// (main, decode workers, V8 platform threads = GC helpers and JIT, libuv pool, chdb engine threads),
// over the whole window and per timeline interval (`gatewayCoresByGroup`: where a warm-up goes);
// with --gc-stats each interval also counts the main thread's full GCs (`ingest.majorGcs`).
// The replay generator implies it. --replay-transport http2 has it write the telemetry streams with
// node:http2 instead of grpc-js (bench/lib/replay-child.mjs: same bytes, less generator CPU).
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startClickHouse } from './lib/clickhouse-server.mjs';
import { provisionRobots } from './lib/provision.mjs';
import { countStored } from './lib/store-check.mjs';
import {
  busyBetween, cpuSeconds, FLEETGW, machineCpu, machineInfo, parseArgs, ROOT, rssBytes, spawnNode, stopChild, threadCpu, threadCpuByName,
  threadGroups,
} from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), {
  robots: 100, hz: 1000, duration: 60, generator: 'sim', 'samples-per-msg': 0, connections: 1, 'clickhouse-url': '',
  'gateway-cpus': '', 'sim-cpus': '', 'cpu-prof': '', 'sample-ms': 5000, 'ingest-stats': false, 'stats-ms': 1000,
  'gateway-env': '', 'gateway-node-args': '', 'gc-stats': false, 'target-rate': 100_000, 'target-us': 0, keep: false, 'replay-transport': 'grpc-js',
});
if (opts.generator !== 'sim' && opts.generator !== 'replay') throw new Error('--generator must be sim or replay');
// The replay generator and --gc-stats need the stats lines of bench/lib/gateway-child.mjs.
if (opts.generator === 'replay' || opts['gc-stats']) opts['ingest-stats'] = true;
const pin = (s) => (s === '' ? undefined : s);
const log = (s) => process.stderr.write(`${s}\n`);
const envPairs = (s) => Object.fromEntries(s.split(',').filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
let storePid = null;

function cpuPoint(gwPid, simPid) {
  return { t: Date.now(), gw: cpuSeconds(gwPid), sim: cpuSeconds(simPid), store: storePid ? cpuSeconds(storePid) : 0, m: machineCpu() };
}

/**
 * Seconds from `sinceMs` until the process used under 10% of a core for two 250 ms polls in a row,
 * and its cores used per second meanwhile (the shape of the catch-up).
 */
async function waitIdle(pid, sinceMs, maxS = 180) {
  let prev = cpuSeconds(pid);
  let quiet = 0;
  let lastBusyAt = Date.now();
  const trace = [];
  let secStart = prev;
  let polls = 0;
  while (quiet < 2 && Date.now() - sinceMs < maxS * 1000) {
    await new Promise((r) => setTimeout(r, 250));
    const now = cpuSeconds(pid);
    if (now - prev < 0.025) quiet++;
    else { quiet = 0; lastBusyAt = Date.now(); }
    prev = now;
    if (++polls % 4 === 0) { trace.push(Number((now - secStart).toFixed(2))); secStart = now; }
  }
  return { seconds: Math.max(0, (lastBusyAt - sinceMs) / 1000), coresPerSecond: trace };
}

function interval(a, b) {
  const s = (b.t - a.t) / 1000;
  const busy = busyBetween(a.m, b.m);
  const gwCores = (b.gw - a.gw) / s;
  const simCores = (b.sim - a.sim) / s;
  const storeCores = (b.store - a.store) / s;
  const machineCores = busy.all * busy.cpus.length;
  return { seconds: s, gwCores, simCores, storeCores, machineCores, otherCores: Math.max(0, machineCores - gwCores - simCores - storeCores) };
}

async function main() {
  const machine = machineInfo();
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-tel-'));
  let gateway;
  let sim;
  let clickhouse = null;
  try {
    if (opts['clickhouse-url'] === 'local') {
      clickhouse = await startClickHouse();
      storePid = clickhouse.pid;
      opts['clickhouse-url'] = clickhouse.url;
    }
    const { fleetId, robots } = await provisionRobots(dataDir, opts.robots);
    const robotsFile = join(dataDir, 'robots.json');
    writeFileSync(robotsFile, JSON.stringify(robots));

    // --gateway-node-args: Node/V8 flags for the gateway's process (e.g. "--trace-gc"), split on spaces.
    const nodeFlags = opts['gateway-node-args'].split(' ').filter(Boolean);
    if (opts['cpu-prof'] !== '') {
      mkdirSync(resolve(opts['cpu-prof']), { recursive: true });
      nodeFlags.push('--cpu-prof', `--cpu-prof-dir=${resolve(opts['cpu-prof'])}`);
    }
    const serveArgs = ['serve', '--data-dir', dataDir, '--port', '0', '--grpc-port', '0', '--insecure-http'];
    if (opts['clickhouse-url'] !== '') serveArgs.push('--clickhouse-url', opts['clickhouse-url']);
    const entry = opts['ingest-stats']
      ? [join(ROOT, 'bench', 'lib', 'gateway-child.mjs'), '--data-dir', dataDir, '--stats-ms', String(opts['stats-ms']),
        ...(opts['gc-stats'] ? ['--gc-stats'] : []), ...(opts['clickhouse-url'] !== '' ? ['--clickhouse-url', opts['clickhouse-url']] : [])]
      : [FLEETGW, ...serveArgs];
    gateway = spawnNode([...nodeFlags, ...entry], { cpus: pin(opts['gateway-cpus']), env: envPairs(opts['gateway-env']) });
    const ready = await gateway.waitJson((o) => o.event === 'ready', 120_000);
    // Every stored row is processed after this point, so CPU from here / rows stored is a per-row
    // cost that does not depend on how many samples robots sent before the window opened.
    const gwCpuAtReady = cpuSeconds(gateway.pid);
    log(`gateway ready (${ready.telemetryStore}); ${opts.robots} robots x ${opts.hz} Hz = ${opts.robots * opts.hz} samples/s offered, ${opts.duration} s`);

    const generatorArgs = opts.generator === 'replay'
      ? [join(ROOT, 'bench', 'lib', 'replay-child.mjs'), '--samples-per-msg', String(opts['samples-per-msg']), '--connections', String(opts.connections), '--transport', opts['replay-transport']]
      : [join(ROOT, 'bench', 'lib', 'sim-child.mjs')];
    sim = spawnNode([...generatorArgs, '--grpc', ready.grpc, '--robots-file', robotsFile,
      '--hz', String(opts.hz), '--duration', String(opts.duration), '--report-ms', '1000'], { cpus: pin(opts['sim-cpus']) });
    const connected = await sim.waitJson((o) => o.event === 'connected' || o.event === 'error', 90_000);
    if (connected.event !== 'connected') throw new Error(connected.message);

    // Timeline over the measured window: every --sample-ms, CPU of each process and the sim's counters.
    const lastProgress = () => {
      for (let i = sim.lines.length - 1; i >= 0; i--) {
        const o = JSON.parse(sim.lines[i]);
        if (o.event === 'progress' || o.event === 'connected') return o;
      }
      return connected;
    };
    // With --ingest-stats: rows written per second and queue state from the gateway's last stats line.
    let prevIngest = null;
    const ingestLine = (now) => {
      if (!opts['ingest-stats']) return null;
      let st = null;
      for (let i = gateway.lines.length - 1; i >= 0 && !st; i--) {
        const o = JSON.parse(gateway.lines[i]);
        if (o.event === 'stats') st = o;
      }
      if (!st) return null;
      const out = {
        rowsPerS: prevIngest ? Math.round((st.rowsWritten - prevIngest.rowsWritten) / ((st.tMs - prevIngest.tMs) / 1000)) : 0,
        rowsWritten: st.rowsWritten, queueMiB: Number((st.queueBytes / 1048576).toFixed(1)), tasksInFlight: st.tasksInFlight,
        insertsInFlight: st.insertsInFlight, inserts: st.inserts, paused: st.paused, ageMs: now - st.tMs,
        rowArenaBuffers: st.rowArenaBuffers, rowArenaAllocated: st.rowArenaAllocated,
        // Pool tasks in this interval, and of them those without a shared slot (frames and rows in buffers of their own).
        tasks: st.batches - (prevIngest?.batches ?? 0), tasksWithoutSlot: (st.batchesWithoutSlot ?? 0) - (prevIngest?.batchesWithoutSlot ?? 0),
        // --gc-stats: full GCs (count) in this interval, from the running totals of the stats lines.
        // and V8's heap and external memory (MiB) at the interval's end: what its GC heuristics see.
        ...(st.gc ? { majorGcs: (st.gc.major?.n ?? 0) - (prevIngest?.gc?.major?.n ?? 0), mem: st.gc.mem } : {}),
        // Native inserts (ClickHouse server store): blocks converted and the thread pool's CPU for them in this interval.
        ...(st.nativeInsert ? {
          nativeBlocks: st.nativeInsert.blocks - (prevIngest?.nativeInsert?.blocks ?? 0),
          nativeConvertCores: prevIngest?.nativeInsert ? Number(((st.nativeInsert.cpuS - prevIngest.nativeInsert.cpuS) / ((st.tMs - prevIngest.tMs) / 1000)).toFixed(3)) : null,
          nativeFallbacks: st.nativeInsert.fallbacks,
        } : {}),
      };
      prevIngest = st;
      return out;
    };
    const points = [{ ...cpuPoint(gateway.pid, sim.pid), p: connected }];
    const threads0 = threadCpu(gateway.pid);
    const timeline = [];
    // With --ingest-stats: the gateway's cores by thread group in each interval (where a warm-up goes).
    let threadsPrev = threads0;
    let groupsStatsLine = null;
    const groupCores = (seconds) => {
      if (!opts['ingest-stats']) return null;
      for (let i = gateway.lines.length - 1; i >= 0 && !groupsStatsLine; i--) {
        const o = JSON.parse(gateway.lines[i]);
        if (o.event === 'stats' && o.decodeThreadIds?.length) groupsStatsLine = o;
      }
      const now = threadCpu(gateway.pid);
      const g = threadGroups(gateway.pid, threadsPrev, now, { startupTids: ready.startupTids ?? [], decodeTids: groupsStatsLine?.decodeThreadIds ?? [] });
      threadsPrev = now;
      return Object.fromEntries(Object.entries(g).filter(([, v]) => typeof v === 'number').map(([k, v]) => [k, Number((v / seconds).toFixed(3))]));
    };
    const tick = () => {
      const b = { ...cpuPoint(gateway.pid, sim.pid), p: lastProgress() };
      const a = points.at(-1);
      points.push(b);
      if (b.p === a.p || b.t - a.t < 500) return;
      const iv = interval(a, b);
      const byGroup = groupCores((b.t - a.t) / 1000);
      const rate = (b.p.stats.samplesSent - a.p.stats.samplesSent) / ((b.p.tMs - a.p.tMs) / 1000);
      const ing = ingestLine(b.t);
      const row = {
        tS: Math.round((b.p.tMs - connected.tMs) / 1000), sentPerS: Math.round(rate), robotQueue: b.p.stats.samplesQueued,
        dropped: b.p.stats.samplesDropped, gatewayCores: Number(iv.gwCores.toFixed(2)), simCores: Number(iv.simCores.toFixed(2)),
        ...(storePid ? { storeCores: Number(iv.storeCores.toFixed(2)) } : {}),
        otherCores: Number(iv.otherCores.toFixed(2)),
        ...(ing ? { ingest: ing } : {}),
        ...(byGroup ? { gatewayCoresByGroup: byGroup } : {}),
      };
      timeline.push(row);
      log(`  t=${String(row.tS).padStart(3)} s  sent ${String(row.sentPerS).padStart(7)}/s  robot queue ${row.robotQueue}` +
        `  dropped ${row.dropped}  cores: gateway ${row.gatewayCores}${storePid ? ` store ${row.storeCores}` : ''} sim ${row.simCores} others ${row.otherCores}` +
        (ing ? `  | stored ${ing.rowsPerS}/s, queued ${ing.queueMiB} MiB, tasks ${ing.tasksInFlight}, inserts ${ing.insertsInFlight}${ing.paused ? ', PAUSED' : ''}` : ''));
    };
    const timer = setInterval(tick, opts['sample-ms']);
    const genStop = await sim.waitJson((o) => o.event === 'generation-stopped', (opts.duration + 60) * 1000);
    clearInterval(timer);
    tick();
    const window = interval(points[0], points.at(-1));

    // Catch-up: the robots' queues empty into gRPC, then the gateway works off its backlog. Measured
    // until the gateway is idle, before SIGTERM, so it is not mixed with the shutdown's own cost.
    const flushed = await sim.waitJson((o) => o.event === 'flushed', 300_000);
    // With --ingest-stats the catch-up is also read off the gateway's own counter: the first stats
    // line whose rowsWritten covers every sample sent.
    const rowsCaughtUp = opts['ingest-stats']
      ? gateway.waitJson((o) => o.event === 'stats' && o.rowsWritten >= flushed.stats.samplesSent, 300_000).then((o) => (o.tMs - genStop.tMs) / 1000)
      : Promise.resolve(null);
    const catchUp = await waitIdle(gateway.pid, genStop.tMs);
    const catchUpS = catchUp.seconds;
    const catchUpByRowsS = await rowsCaughtUp;
    const gwCpuBeforeDrain = cpuSeconds(gateway.pid);
    const storeCpuBeforeDrain = storePid ? cpuSeconds(storePid) : 0;
    const gwRssBeforeDrain = rssBytes(gateway.pid);
    const threads1 = threadCpu(gateway.pid);
    const gatewayThreads = threadCpuByName(threads0, threads1);
    let lastStats = null;
    for (let i = gateway.lines.length - 1; i >= 0 && !lastStats; i--) {
      const o = JSON.parse(gateway.lines[i]);
      if (o.event === 'stats') lastStats = o;
    }
    const groups = opts['ingest-stats']
      ? threadGroups(gateway.pid, threads0, threads1, { startupTids: ready.startupTids ?? [], decodeTids: lastStats?.decodeThreadIds ?? [] })
      : null;
    const done = await (async () => {
      sim.kill('SIGTERM');
      return sim.waitJson((o) => o.event === 'done', 30_000);
    })();
    await sim.exited;
    const simCpuTotal = done.cpuSeconds;

    const t0 = Date.now();
    gateway.kill('SIGTERM');
    const exit = await gateway.exited;
    const drainS = (Date.now() - t0) / 1000;
    writeFileSync(join(dataDir, 'gateway.stderr.log'), gateway.stderrText);
    writeFileSync(join(dataDir, 'gateway.stdout.log'), `${gateway.lines.join('\n')}\n`);
    if (exit.code !== 0) throw new Error(`gateway exited with ${exit.code ?? exit.signal}: ${gateway.stderrText.slice(-3000)}`);

    const f = done.final;
    const windowSent = done.atGenerationStop.samplesSent - done.atConnect.samplesSent;
    const windowS = (done.stoppingAtMs - done.connectedAtMs) / 1000;
    const stored = await countStored({ dataDir, clickhouseUrl: opts['clickhouse-url'], fleetId, robots, stopAtMs: done.stoppingAtMs });
    const lost = f.samplesSent - stored.rows;
    const result = {
      bench: 'telemetry-throughput',
      machine,
      options: opts,
      store: ready.telemetryStore,
      offeredPerS: opts.robots * opts.hz,
      measuredWindowS: Number(windowS.toFixed(2)),
      sentInWindow: windowSent,
      sustainedSentPerS: Math.round(windowSent / windowS),
      samplesSent: f.samplesSent,
      samplesDroppedAtRobots: f.samplesDropped,
      samplesQueuedAtRobotsAtStop: f.samplesQueued,
      batchesSent: f.batchesSent,
      rowsStored: stored.rows,
      lost,
      duplicates: stored.duplicates,
      robotsWithRows: stored.robotsWithRows,
      snapshots: stored.snapshots,
      // --gc-stats: the gateway main thread's GCs by kind from its start through the catch-up (the
      // last stats line before the robots stopped).
      gcThroughCatchUp: lastStats?.gc,
      gatewayCatchUpS: Number(catchUpS.toFixed(2)),
      gatewayCatchUpCoresPerSecond: catchUp.coresPerSecond,
      ...(catchUpByRowsS !== null ? { catchUpByRowsWrittenS: Number(catchUpByRowsS.toFixed(2)) } : {}),
      storedPerS: Math.round((stored.rows - done.atConnect.samplesSent) / (windowS + catchUpS)),
      gatewayDrainS: Number(drainS.toFixed(2)),
      // Gateway CPU from the window's start through the catch-up, per stored row (robust to other tenants' load).
      gatewayCpuUsPerSample: Number((((gwCpuBeforeDrain - points[0].gw) / Math.max(1, f.samplesSent - done.atConnect.samplesSent)) * 1e6).toFixed(2)),
      // Gateway CPU from ready (start-up excluded) through the catch-up, per row stored.
      gatewayCpuUsPerStoredRow: Number((((gwCpuBeforeDrain - gwCpuAtReady) / Math.max(1, stored.rows)) * 1e6).toFixed(2)),
      simCpuUsPerSample: Number((((points.at(-1).sim - points[0].sim) / Math.max(1, windowSent)) * 1e6).toFixed(2)),
      generator: opts.generator,
      ...(storePid ? { storeCpuUsPerSample: Number((((storeCpuBeforeDrain - points[0].store) / Math.max(1, f.samplesSent - done.atConnect.samplesSent)) * 1e6).toFixed(2)) } : {}),
      // Same window as gatewayCpuUsPerSample, split by thread group (see threadGroups in bench/lib/procs.mjs).
      ...(groups ? {
        gatewayCpuUsPerSampleByGroup: Object.fromEntries(Object.entries(groups).filter(([k]) => k !== 'namedByName')
          .map(([k, v]) => [k, Number(((v / Math.max(1, f.samplesSent - done.atConnect.samplesSent)) * 1e6).toFixed(2))])),
        gatewayThreadGroupsCpuS: groups,
      } : {}),
      gatewayRssMiBAtEnd: Number((gwRssBeforeDrain / 1048576).toFixed(1)),
      cores: {
        gateway: Number(window.gwCores.toFixed(2)),
        ...(storePid ? { store: Number(window.storeCores.toFixed(2)) } : {}),
        simulator: Number(window.simCores.toFixed(2)),
        others: Number(window.otherCores.toFixed(2)),
        machine: Number(window.machineCores.toFixed(2)),
      },
      simCpuSecondsTotal: Number(simCpuTotal.toFixed(1)),
      // Gateway CPU seconds by thread name, window start through catch-up (where the time goes, natively too).
      gatewayCpuSecondsByThread: gatewayThreads.slice(0, 12),
      robotStreamEndsByStatus: done.streamEnds,
      gatewayStderrTail: gateway.stderrText.split('\n').slice(-6).join('\n'),
      timeline,
      target: `${opts['target-rate']} samples/s for ${opts.duration} s, lost = 0${opts['target-us'] > 0 ? `, gateway CPU (store threads excluded) <= ${opts['target-us']} us/sample` : ''}`,
      // Sustained means the store kept up: sent at >= the rate and stored at >= the rate including the catch-up.
      targetMet: windowSent / windowS >= opts['target-rate'] && (stored.rows - done.atConnect.samplesSent) / (windowS + catchUpS) >= opts['target-rate']
        && windowS >= opts.duration - 1 && lost === 0 && f.samplesDropped === 0 && stored.snapshots.ok === robots.length
        && (opts['target-us'] <= 0 || (groups !== null && ((groups.main + groups.decode + groups.v8Platform) / Math.max(1, f.samplesSent - done.atConnect.samplesSent)) * 1e6 <= opts['target-us'])),
      profileDir: opts['cpu-prof'] !== '' ? resolve(opts['cpu-prof']) : null,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    log(`telemetry: sustained ${result.sustainedSentPerS} samples/s sent over ${result.measuredWindowS} s; stored ${stored.rows}` +
      ` of ${f.samplesSent} sent (lost ${lost}, dropped at robots ${f.samplesDropped}); snapshots ok ${stored.snapshots.ok}/${robots.length};` +
      ` stored at ${result.storedPerS}/s incl. ${result.gatewayCatchUpS} s catch-up;` +
      ` cores gateway ${result.cores.gateway}, sim ${result.cores.simulator}, others ${result.cores.others};` +
      ` CPU per sample gateway ${result.gatewayCpuUsPerSample} us (${result.gatewayCpuUsPerStoredRow} us per stored row from ready), sim ${result.simCpuUsPerSample} us` +
      (result.storeCpuUsPerSample !== undefined ? `, store process ${result.storeCpuUsPerSample} us` : '') +
      (result.gatewayCpuUsPerSampleByGroup ? ` (gateway by thread group, us: ${JSON.stringify(result.gatewayCpuUsPerSampleByGroup)})` : '') +
      `; drain ${result.gatewayDrainS} s;` +
      ` target ${result.targetMet ? 'met' : 'NOT met'}`);
    if (lost !== 0 || stored.snapshots.ok !== robots.length) process.exitCode = 1;
  } finally {
    if (sim) await stopChild(sim, 'SIGTERM', 10_000);
    if (gateway) await stopChild(gateway, 'SIGTERM', 120_000);
    if (clickhouse) await clickhouse.dispose();
    if (!opts.keep) rmSync(dataDir, { recursive: true, force: true });
    else log(`data dir kept: ${dataDir}`);
  }
}

await main();
