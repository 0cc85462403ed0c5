// Simulated fleet for telemetry-throughput.mjs, in its own process so its CPU is measured apart from
// the gateway's. Runs dist/sim's runSimFleet unchanged (one message per robot per 100 ms tick).
//
// Ending without losing what was counted as sent: the agent counts a sample as sent when it is written
// to the gRPC stream, and its stop() cancels a stream the gateway has not finished within 1 s, which
// discards whatever the gateway had not read yet (a backpressured gateway reads late). So the run ends
// in steps, driven by the parent:
//   1. after --duration s: generation stops (each agent's sendSamples becomes a no-op);
//   2. when every agent's queue is empty: "flushed";
//   3. the parent waits until the gateway is idle (it has read and stored everything), then SIGTERM:
//      fleet.stop() half-closes the streams and "done" reports the exact counters.
// JSON lines on stdout: connected | progress | generation-stopped | flushed | done | error.
//
//   node bench/lib/sim-child.mjs --grpc HOST:PORT --robots-file F --hz N --duration S [--report-ms 5000]
import { readFileSync } from 'node:fs';
import { runSimFleet } from '../../dist/sim/index.js';
import { parseArgs } from './procs.mjs';

const opts = parseArgs(process.argv.slice(2), { grpc: '', 'robots-file': '', hz: 1000, duration: 60, 'report-ms': 5000 });
const robots = JSON.parse(readFileSync(opts['robots-file'], 'utf8'));
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpuS = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };

// Stream ends are logged by the agent ("stream ended (code details)"); count them by status code.
const streamEnds = {};
const log = (line) => {
  const m = /stream ended \((\d+)/.exec(line);
  if (m) streamEnds[m[1]] = (streamEnds[m[1]] ?? 0) + 1;
};

let stopRequested = false;
process.once('SIGTERM', () => { stopRequested = true; });
process.once('SIGINT', () => { stopRequested = true; });

const startedAtMs = Date.now();
const fleet = runSimFleet({ grpc: opts.grpc, robots, hz: opts.hz, log });
while (fleet.stats().connected < robots.length) {
  if (Date.now() - startedAtMs > 60_000 || stopRequested) {
    emit({ event: 'error', message: `only ${fleet.stats().connected}/${robots.length} robots connected` });
    await fleet.stop();
    process.exit(1);
  }
  await sleep(20);
}
const connectedAtMs = Date.now();
const atConnect = fleet.stats();
emit({ event: 'connected', tMs: connectedAtMs, stats: atConnect });

const endAtMs = connectedAtMs + opts.duration * 1000;
let nextReport = connectedAtMs + opts['report-ms'];
while (Date.now() < endAtMs && !stopRequested) {
  await sleep(Math.max(1, Math.min(50, endAtMs - Date.now())));
  if (Date.now() >= nextReport) {
    nextReport += opts['report-ms'];
    emit({ event: 'progress', tMs: Date.now(), stats: fleet.stats(), cpuS: cpuS() });
  }
}
for (const r of fleet.robots) r.agent.sendSamples = () => {};
const stoppingAtMs = Date.now();
const atGenerationStop = fleet.stats();
emit({ event: 'generation-stopped', tMs: stoppingAtMs, stats: atGenerationStop, cpuS: cpuS() });

while (fleet.stats().samplesQueued > 0 && !stopRequested) await sleep(20);
emit({ event: 'flushed', tMs: Date.now(), stats: fleet.stats() });

while (!stopRequested) await sleep(20);
await fleet.stop();
emit({
  event: 'done', startedAtMs, connectedAtMs, stoppingAtMs, stoppedAtMs: Date.now(),
  atConnect, atGenerationStop, final: fleet.stats(), streamEnds, cpuSeconds: cpuS(),
});
process.exit(0);
