// Micro benchmark (telemetry target 1: bench/notes/telemetry-ingest.md): full GCs started by allocating large ArrayBuffers against
// SharedArrayBuffers of the same size (why the Native insert buffers, src/telemetry/store/native-insert.ts,
// are SharedArrayBuffers), and against the addon's hugePageBuffer (external ArrayBuffers over a mapping
// of their own: src/telemetry/store/large-buffer.ts). Allocates --count buffers of --mib MiB, --period-ms apart, keeping the last
// --keep, with a little heap garbage between; prints the full (mark-compact and incremental) GCs seen
// and process.memoryUsage() for each kind, each in a child process of its own.
//
//   node bench/micro/shared-buffer-gc.mjs [--count 20] [--mib 64] [--keep 3] [--period-ms 20]
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { createRequire } from 'node:module';
import { machineInfo, parseArgs } from '../lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { count: 20, mib: 64, keep: 3, 'period-ms': 20, kind: '' });

function addon() {
  return createRequire(import.meta.url)('../../native-bridge/build/Release/fleetgw_telemetry.node');
}

if (opts.kind !== '') {
  let full = 0;
  new PerformanceObserver((l) => {
    for (const e of l.getEntries()) if (e.detail.kind === constants.NODE_PERFORMANCE_GC_MAJOR || e.detail.kind === constants.NODE_PERFORMANCE_GC_INCREMENTAL) full++;
  }).observe({ entryTypes: ['gc'] });
  const keep = [];
  for (let i = 0; i < opts.count; i++) {
    const bytes = opts.mib * 1024 * 1024;
    keep.push(opts.kind === 'shared' ? new Uint8Array(new SharedArrayBuffer(bytes))
      : opts.kind === 'huge' ? new Uint8Array(addon().hugePageBuffer(bytes)) : new Uint8Array(bytes));
    if (keep.length > opts.keep) keep.shift();
    for (let k = 0; k < 1000; k++) {
      keep.push(new Array(100));
      keep.pop();
    }
    await new Promise((r) => setTimeout(r, opts['period-ms']));
  }
  await new Promise((r) => setTimeout(r, 100));
  const m = process.memoryUsage();
  console.log(JSON.stringify({ kind: opts.kind, fullGcs: full, externalMiB: Math.round(m.external / 1048576), arrayBuffersMiB: Math.round(m.arrayBuffers / 1048576) }));
} else {
  const self = fileURLToPath(import.meta.url);
  const runs = ['array', 'shared', 'huge'].map((kind) => JSON.parse(execFileSync(process.execPath, [self, '--kind', kind, '--count', String(opts.count), '--mib', String(opts.mib), '--keep', String(opts.keep), '--period-ms', String(opts['period-ms'])], { encoding: 'utf8' })));
  console.log(JSON.stringify({ bench: 'shared-buffer-gc', machine: machineInfo(), options: { ...opts, kind: undefined }, runs }, null, 1));
}
