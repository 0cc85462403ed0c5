// Simulated fleet for telemetry-throughput.mjs, in its own process so its CPU is measured apart from
// the gateway's. Built on dist/sim (runSimFleet: one message per robot per 100 ms tick).
// Prints JSON lines on stdout:
//   {"event":"connected", ...}  when every robot has its Welcome (the measured window starts here)
//   {"event":"progress", ...}   every --report-ms
//   {"event":"done", ...}       after the fleet stopped: exact counters (samplesSent = samples written
//                               to the gRPC streams, which the gateway must all store)
//
//   node bench/lib/sim-child.mjs --grpc HOST:PORT --robots-file F --hz N --duration S [--report-ms 5000]
import { readFileSync } from 'node:fs';
import { runSimFleet } from '../../dist/sim/index.js';
import { parseArgs } from './procs.mjs';

const opts = parseArgs(process.argv.slice(2), { grpc: '', 'robots-file': '', hz: 1000, duration: 60, 'report-ms': 5000 });
const robots = JSON.parse(readFileSync(opts['robots-file'], 'utf8'));
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

const startedAtMs = Date.now();
const fleet = runSimFleet({ grpc: opts.grpc, robots, hz: opts.hz, log: () => {} });
let stopRequested = false;
process.once('SIGTERM', () => { stopRequested = true; });
process.once('SIGINT', () => { stopRequested = true; });

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
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
  await sleep(Math.max(1, Math.min(100, endAtMs - Date.now())));
  if (Date.now() >= nextReport) {
    nextReport += opts['report-ms'];
    emit({ event: 'progress', tMs: Date.now(), stats: fleet.stats() });
  }
}
const stoppingAtMs = Date.now();
const beforeStop = fleet.stats();
await fleet.stop();
const stoppedAtMs = Date.now();
emit({
  event: 'done',
  startedAtMs, connectedAtMs, stoppingAtMs, stoppedAtMs,
  atConnect, beforeStop, final: fleet.stats(),
  cpuSeconds: (process.cpuUsage().user + process.cpuUsage().system) / 1e6,
});
process.exit(0);
