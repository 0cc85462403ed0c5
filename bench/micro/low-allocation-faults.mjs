// Telemetry target 2 at 100 robots (bench/notes/telemetry-ingest.md): why allocating less can cost more CPU. A process that allocates
// short-lived objects at a steady rate (bytes per second, in 5 ms ticks, like a lightly loaded
// gateway) reports its minor page faults, scavenges and CPU per second over --seconds. Below about
// 1,000 bytes per ms V8 treats the allocation rate as low: after each scavenge it shrinks the young
// generation and releases its from-space, so every page the next cycle allocates into is a fresh page
// the kernel must fault in and zero (Heap::ShouldResizeNewSpace, kLowAllocationThroughput). Run it
// at several rates, and with V8 flags (`node --predictable bench/micro/...` turns the rule off;
// --min-semi-space-size does not), to see the step. Figures: bench/notes/telemetry-ingest.md, "Snapshot hooks
// without allocation".
//
//   node [V8 flags] bench/micro/low-allocation-faults.mjs [--rate 300000] [--seconds 15]
import { readFileSync } from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { parseArgs } from '../lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { rate: 300_000, seconds: 15 });
let scavenges = 0;
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) if (e.detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR) scavenges++;
}).observe({ entryTypes: ['gc'] });
/** Minor page faults of this process so far (/proc/self/stat, field 10). */
const minorFaults = () => Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1].split(' ')[7]);

// Each object is a 16-byte Uint8Array, counted at 136 bytes: --rate is nominal (the scavenges say it
// allocates about twice that); a few objects survive a tick.
const keep = [];
const perTick = opts.rate / 200;
const timer = setInterval(() => {
  for (let n = 0; n < perTick; n += 136) keep.push(new Uint8Array(16));
  if (keep.length > 50) keep.length = 0;
}, 5);
// A warm-up, then the measured window.
await new Promise((r) => setTimeout(r, 5_000));
const f0 = minorFaults();
const s0 = scavenges;
const c0 = process.cpuUsage();
await new Promise((r) => setTimeout(r, opts.seconds * 1000));
const c = process.cpuUsage(c0);
clearInterval(timer);
const per = (v) => Number((v / opts.seconds).toFixed(2));
console.log(JSON.stringify({
  node: process.version, flags: process.execArgv.join(' '), rateBytesPerS: opts.rate,
  minorFaultsPerS: per(minorFaults() - f0), scavengesPerS: per(scavenges - s0),
  cpuMsPerS: per((c.user + c.system) / 1000), systemMsPerS: per(c.system / 1000),
}));
