// Benchmark: a fleet of VDA 5050 robots over MQTT against the same fleet size on the gRPC robot link,
// in one run and one gateway process (`fleetgw serve` with its embedded broker, embedded chdb store).
// Phases, one after the other:
//   idle  the gateway with nobody connected (its fixed cost, subtracted from nothing; reported)
//   grpc  --robots robots of the gRPC link (bench/lib/sim-child.mjs: the simulator, one message per
//         robot per 100 ms at 10 Hz)
//   vda   --robots VDA 5050 robots, state at --state-hz and visualization at --vis-hz, from
//         --generator publisher: bench/lib/vda-publisher-child.mjs (one MQTT connection each, messages
//         built in place), or agv: `fleetgw sim --vda5050` (vda-5050-lib AgvController + VirtualAgvAdapter
//         per robot, the real third-party stack; costs more on the generator side, see the notes)
// For each phase after --warmup-s: gateway CPU from /proc (cores, and µs per message received), RSS at
// the window's start, end and maximum. Figures: bench/README.md, notes: bench/notes/vda5050.md.
//
//   node bench/vda5050-fleet.mjs [--robots 1000] [--duration 120] [--warmup-s 20] [--sample-s 10]
//       [--state-hz 1] [--vis-hz 10] [--grpc-hz 10] [--grpc-robots N (default --robots)] [--phases idle,grpc,vda]
//       [--generator publisher|agv] [--keep]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from './lib/free-port.mjs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { addRobot, createFleet, createOrg } from '../dist/store/identity.js';
import { openStore } from '../dist/store/lmdb.js';
import { cpuSeconds, FLEETGW, machineInfo, parseArgs, ROOT, rssBytes, spawnNode, stopChild } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), {
  robots: 1000, duration: 120, 'warmup-s': 20, 'sample-s': 10, 'state-hz': 1, 'vis-hz': 10, 'grpc-hz': 10, 'grpc-robots': 0, phases: 'idle,grpc,vda', generator: 'publisher', keep: false,
});
const log = (s) => process.stderr.write(`${s}\n`);
const MiB = 1024 * 1024;
const round = (v, d = 2) => Number(v.toFixed(d));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** One org and fleet; `count` gRPC robots and `count` VDA 5050 robots (identity Bench/V-i). */
async function provision(dataDir, count) {
  const store = openStore(dataDir);
  try {
    const org = createOrg(store, 'bench');
    const fleet = createFleet(store, org.orgId, 'bench');
    const grpc = [];
    const vda = [];
    for (let i = 0; i < count; i++) {
      const g = addRobot(store, { fleetId: fleet.fleetId, name: `grpc-${i}`, capabilities: ['stop'], active: true });
      grpc.push({ robotId: g.record.robotId, robotToken: g.robotToken });
      const serialNumber = `V-${String(i).padStart(5, '0')}`;
      const v = addRobot(store, { fleetId: fleet.fleetId, name: `vda-${i}`, capabilities: ['stop'], active: true, vda5050: { manufacturer: 'Bench', serialNumber } });
      vda.push({ robotId: v.record.robotId, robotToken: v.robotToken, manufacturer: 'Bench', serialNumber, vda5050: `Bench/${serialNumber}` });
    }
    return { grpc, vda };
  } finally {
    await store.close();
  }
}

/** Samples CPU and RSS of `pid` every --sample-s until `done` resolves; returns the window summary. */
async function measure(name, pid, messagesPerS, done) {
  const points = [];
  const point = () => ({ t: Date.now(), cpu: cpuSeconds(pid), rss: rssBytes(pid) });
  points.push(point());
  let finished = false;
  void done.then(() => { finished = true; });
  while (!finished) {
    await Promise.race([sleep(opts['sample-s'] * 1000), done]);
    const b = point();
    const a = points.at(-1);
    points.push(b);
    log(`  ${name} t=${Math.round((b.t - points[0].t) / 1000)} s  gateway ${((b.cpu - a.cpu) / ((b.t - a.t) / 1000)).toFixed(3)} cores, RSS ${(b.rss / MiB).toFixed(0)} MiB`);
  }
  const win = points.filter((p) => (p.t - points[0].t) / 1000 >= opts['warmup-s']);
  const first = win[0] ?? points[0];
  const last = points.at(-1);
  const s = (last.t - first.t) / 1000;
  const cores = (last.cpu - first.cpu) / s;
  return {
    phase: name,
    windowS: round(s, 1),
    gatewayCores: round(cores, 3),
    messagesPerS,
    gatewayUsPerMessage: messagesPerS > 0 ? round((cores / messagesPerS) * 1e6, 2) : null,
    gatewayRssMiB: { start: round(first.rss / MiB, 1), end: round(last.rss / MiB, 1), max: round(Math.max(...win.map((p) => p.rss)) / MiB, 1) },
  };
}

async function main() {
  const machine = machineInfo();
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-vda-'));
  const results = [];
  let gw;
  try {
    const grpcRobots = opts['grpc-robots'] > 0 ? opts['grpc-robots'] : opts.robots;
    const { grpc, vda } = await provision(dataDir, opts.robots);
    grpc.splice(grpcRobots);
    writeFileSync(join(dataDir, 'grpc-robots.json'), JSON.stringify(grpc));
    writeFileSync(join(dataDir, 'vda-robots.json'), JSON.stringify(vda));
    const mqttPort = await freePort();
    gw = spawnNode([FLEETGW, 'serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--grpc-port', '0', '--insecure-http', '--vda5050-mqtt-port', String(mqttPort), '--log-level', 'warn']);
    const ready = await gw.waitJson((o) => o.event === 'ready', 120_000);
    const mqttUrl = `mqtt://127.0.0.1:${mqttPort}`;
    log(`gateway ready: http ${ready.http}, grpc ${ready.grpc}, mqtt ${mqttUrl}; ${opts.robots} + ${opts.robots} robots provisioned`);
    for (const phase of opts.phases.split(',')) {
      try {
        await runPhase(phase, gw, ready, mqttUrl, dataDir, grpcRobots, results);
      } catch (e) {
        // One phase failing (a load generator that cannot connect on a loaded machine) still reports the others.
        log(`${phase}: failed: ${e.message}`);
        results.push({ phase, error: e.message });
      } finally {
        for (const child of phaseChildren.splice(0)) await stopChild(child, 'SIGTERM', 30_000);
      }
      // Let the gateway settle (flushes, disconnect handling) before the next phase.
      await sleep(5000);
    }
  } finally {
    if (gw) await stopChild(gw, 'SIGTERM', 60_000);
    if (!opts.keep) rmSync(dataDir, { recursive: true, force: true });
    else log(`data dir kept: ${dataDir}`);
  }
  process.stdout.write(`${JSON.stringify({ bench: 'vda5050-fleet', machine, loadavgAtEnd: machineInfo().loadavg, options: opts, results }, null, 2)}\n`);
  for (const r of results) {
    if (r.error !== undefined) continue;
    log(`${r.phase}: ${r.gatewayCores} cores${r.gatewayUsPerMessage !== null ? ` (${r.gatewayUsPerMessage} µs/message at ${r.messagesPerS}/s)` : ''}, RSS ${r.gatewayRssMiB.start} -> ${r.gatewayRssMiB.end} MiB (max ${r.gatewayRssMiB.max})`);
  }
}

/** Replaces the asked-for message rate of a phase by the one its generator achieved, and the CPU per message with it. */
function actualRate(r, messages, seconds) {
  r.messagesPerSAsked = r.messagesPerS;
  r.messagesPerS = round(messages / seconds, 0);
  r.gatewayUsPerMessage = r.messagesPerS > 0 ? round((r.gatewayCores / r.messagesPerS) * 1e6, 2) : null;
}

/** The load generators of the running phase (stopped when it ends, also on a failure). */
const phaseChildren = [];

/** Spawns a load generator of the running phase. */
function spawnGenerator(args) {
  const child = spawnNode(args);
  phaseChildren.push(child);
  return child;
}

async function runPhase(phase, gw, ready, mqttUrl, dataDir, grpcRobots, results) {
  if (phase === 'idle') {
    results.push(await measure('idle', gw.pid, 0, sleep(opts.duration * 1000)));
  } else if (phase === 'grpc') {
    const sim = spawnGenerator([join(ROOT, 'bench', 'lib', 'sim-child.mjs'), '--grpc', ready.grpc, '--robots-file', join(dataDir, 'grpc-robots.json'),
      '--hz', String(opts['grpc-hz']), '--duration', String(opts.duration), '--report-ms', String(opts['sample-s'] * 1000)]);
    const connected = await sim.waitJson((o) => o.event === 'connected' || o.event === 'error', 180_000);
    if (connected.event !== 'connected') throw new Error(connected.message);
    const simCpu0 = cpuSeconds(sim.pid);
    // The simulator sends one message per robot per 100 ms tick (each with the samples of that tick).
    const stopped = sim.waitJson((o) => o.event === 'generation-stopped', (opts.duration + 120) * 1000);
    const r = await measure('grpc', gw.pid, grpcRobots * Math.min(10, opts['grpc-hz']), stopped);
    r.loadGeneratorCores = round((cpuSeconds(sim.pid) - simCpu0) / (opts.duration), 3);
    // What was sent, not what was asked for: a starved generator sends less.
    const end = await stopped;
    actualRate(r, end.stats.batchesSent - connected.stats.batchesSent, (end.tMs - connected.tMs) / 1000);
    r.robots = grpcRobots;
    r.samplesPerS = grpcRobots * opts['grpc-hz'];
    results.push(r);
    sim.kill('SIGTERM');
    await stopChild(sim, 'SIGTERM', 60_000);
  } else if (phase === 'vda' && opts.generator === 'agv') {
    const sim = spawnGenerator([FLEETGW, 'sim', '--vda5050', '--mqtt', mqttUrl, '--robots-file', join(dataDir, 'vda-robots.json'),
      '--hz', String(opts['vis-hz']), '--state-ms', String(Math.round(1000 / opts['state-hz'])), '--log-level', 'warn']);
    await sim.waitJson((o) => o.event === 'sim-started', 180_000);
    // The AGVs connect in the background: the warm-up covers it, and the window starts after it.
    const simCpu0 = cpuSeconds(sim.pid);
    const r = await measure('vda', gw.pid, opts.robots * (opts['state-hz'] + opts['vis-hz']), sleep(opts.duration * 1000));
    r.robots = opts.robots;
    r.loadGeneratorCores = round((cpuSeconds(sim.pid) - simCpu0) / opts.duration, 3);
    r.loadGeneratorRssMiB = round(rssBytes(sim.pid) / MiB, 1);
    r.generator = 'agv';
    sim.kill('SIGTERM');
    const stopped = await sim.waitJson((o) => o.event === 'sim-stopped', 120_000);
    r.agvsAtStop = stopped;
    results.push(r);
    await stopChild(sim, 'SIGTERM', 60_000);
  } else if (phase === 'vda') {
    const pub = spawnGenerator([join(ROOT, 'bench', 'lib', 'vda-publisher-child.mjs'), '--mqtt', mqttUrl, '--robots-file', join(dataDir, 'vda-robots.json'),
      '--state-hz', String(opts['state-hz']), '--vis-hz', String(opts['vis-hz']), '--duration', String(opts.duration), '--report-ms', String(opts['sample-s'] * 1000)]);
    const connected = await pub.waitJson((o) => o.event === 'connected' || o.event === 'error', 180_000);
    if (connected.event !== 'connected') throw new Error(connected.message);
    const pubCpu0 = cpuSeconds(pub.pid);
    const stopped = pub.waitJson((o) => o.event === 'generation-stopped', (opts.duration + 120) * 1000);
    const r = await measure('vda', gw.pid, opts.robots * (opts['state-hz'] + opts['vis-hz']), stopped);
    r.robots = opts.robots;
    const end = await stopped;
    r.loadGeneratorCores = round((cpuSeconds(pub.pid) - pubCpu0) / opts.duration, 3);
    actualRate(r, end.counts.state + end.counts.visualization, (end.tMs - connected.tMs) / 1000);
    r.loadGeneratorRssMiB = round(rssBytes(pub.pid) / MiB, 1);
    r.generator = 'publisher';
    r.published = end.counts;
    r.publisherLateSlots = end.lateSlots;
    results.push(r);
    pub.kill('SIGTERM');
    await stopChild(pub, 'SIGTERM', 60_000);
  } else {
    throw new Error(`--phases: unknown phase ${phase}`);
  }
}

await main();
