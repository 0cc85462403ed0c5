// Micro: how long one lmdb-js write takes to commit on this machine, writes one after another, with
// the gateway's store options (src/store/lmdb.ts: default overlapping sync). A stop's answer waits for
// its command's commit (src/commands/service.ts), so this is a floor under the stop round trip's tail.
//
//   node bench/micro/lmdb-commit.mjs [--n 400] [--bytes 600]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open } from 'lmdb';
import { parseArgs } from '../lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { n: 400, bytes: 600 });
const dir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-lmdb-'));
const root = open({ path: dir, maxDbs: 64, compression: false });
const db = root.openDB({ name: 'commands' });
const ms = [];
try {
  for (let i = 0; i < opts.n; i++) {
    const t = performance.now();
    await db.put(`k${i % 50}`, Buffer.alloc(opts.bytes, i));
    ms.push(performance.now() - t);
  }
} finally {
  await root.close();
  rmSync(dir, { recursive: true, force: true });
}
ms.sort((a, b) => a - b);
const q = (p) => Number(ms[Math.min(ms.length - 1, Math.floor((p / 100) * ms.length))].toFixed(2));
console.log(JSON.stringify({
  command: `node bench/micro/lmdb-commit.mjs ${process.argv.slice(2).join(' ')}`.trim(), n: opts.n, bytes: opts.bytes,
  commitMs: { p50: q(50), p90: q(90), p99: q(99), max: q(100) }, loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
}));
