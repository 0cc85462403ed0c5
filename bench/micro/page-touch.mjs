// Micro benchmark (telemetry target 1: bench/notes/telemetry-ingest.md): the CPU cost of filling fresh large buffers, by kind of
// buffer: V8's ArrayBuffer (calloc: 4 KiB pages), SharedArrayBuffer (the same allocator), and the
// addon's hugePageBuffer (a 2 MiB-aligned mapping advised MADV_HUGEPAGE: src/telemetry/store/large-buffer.ts).
// Each kind runs in a child process of its own: --rounds times, allocate --count buffers of --mib
// MiB, write one byte per 4 KiB of each (the first touch maps the page), write them all again (the
// baseline: pages already mapped), drop them and collect. Prints CPU ms per MiB (process.cpuUsage:
// user + system) for the first and second fill.
//
//   node --expose-gc bench/micro/page-touch.mjs [--count 32] [--mib 4] [--rounds 4]
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { machineInfo, parseArgs } from '../lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { count: 32, mib: 4, rounds: 4, kind: '' });

function cpuMs() {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
}

function touch(bufs) {
  for (const b of bufs) for (let i = 0; i < b.length; i += 4096) b[i] = (b[i] + 1) & 255;
}

if (opts.kind !== '') {
  const addon = opts.kind === 'huge' ? createRequire(import.meta.url)('../../native-bridge/build/Release/fleetgw_telemetry.node') : null;
  const bytes = opts.mib * 1024 * 1024;
  const rounds = [];
  for (let r = 0; r < opts.rounds; r++) {
    const t0 = cpuMs();
    const bufs = [];
    for (let i = 0; i < opts.count; i++) {
      bufs.push(new Uint8Array(opts.kind === 'shared' ? new SharedArrayBuffer(bytes) : opts.kind === 'huge' ? addon.hugePageBuffer(bytes) : new ArrayBuffer(bytes)));
    }
    touch(bufs);
    const t1 = cpuMs();
    touch(bufs);
    const t2 = cpuMs();
    const mib = opts.count * opts.mib;
    rounds.push({ firstFillMsPerMiB: Number(((t1 - t0) / mib).toFixed(3)), secondFillMsPerMiB: Number(((t2 - t1) / mib).toFixed(3)) });
    bufs.length = 0;
    globalThis.gc?.();
    await new Promise((res) => setTimeout(res, 200));
  }
  console.log(JSON.stringify({ kind: opts.kind, rounds }));
} else {
  const self = fileURLToPath(import.meta.url);
  const runs = ['array', 'shared', 'huge'].map((kind) => JSON.parse(execFileSync(process.execPath, ['--expose-gc', self, '--kind', kind, '--count', String(opts.count), '--mib', String(opts.mib), '--rounds', String(opts.rounds)], { encoding: 'utf8' })));
  console.log(JSON.stringify({ bench: 'page-touch', machine: machineInfo(), thp: thpMode(), options: { ...opts, kind: undefined }, runs }, null, 1));
}

function thpMode() {
  try {
    return readFileSync('/sys/kernel/mm/transparent_hugepage/enabled', 'utf8').trim();
  } catch {
    return 'unknown';
  }
}
