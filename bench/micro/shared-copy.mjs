// Micro benchmark (telemetry target 1: bench/notes/telemetry-ingest.md): one copy of a telemetry message into a shared task slot at an
// odd offset (what the frame packer does per message), by V8's TypedArray.prototype.set and by the
// addon's copyBytes (dist/telemetry/decode/shared-copy.js picks between them), against the baseline of the
// same set() into an ArrayBuffer. Also reports CPU per copy (process.cpuUsage) over a fixed run of each.
// Run: node bench/micro/shared-copy.mjs   (needs `npm run build:native && npm run build`)
import Benchmark from 'benchmark';
import { loadNative } from '../../dist/telemetry/decode/native.js';
import { copyBytes, NATIVE_MIN_BYTES } from '../../dist/telemetry/decode/shared-copy.js';

const native = loadNative().binding;
if (native === null) throw new Error(`the addon is needed: ${loadNative().reason}`);
const SLOT = 1 << 20;
const shared = new Uint8Array(new SharedArrayBuffer(SLOT));
const plain = new Uint8Array(new ArrayBuffer(SLOT));
const results = [];
for (const n of [64, 150, 512, 1024, 4096, 12_288]) {
  // A message inside a larger socket buffer at an odd offset, copied to odd slot offsets: the
  // gateway's case (neither side is aligned).
  const src = Buffer.alloc(n + 64, 7).subarray(5, 5 + n);
  let i = 0;
  const at = () => (((i++) * (n + 9)) % (SLOT - n - 16)) | 1;
  const suite = new Benchmark.Suite();
  const fns = {};
  const add = (name, fn) => { fns[name] = fn; suite.add(name, fn); };
  add('set into ArrayBuffer (baseline)', () => plain.set(src, at()));
  add('set into SharedArrayBuffer', () => shared.set(src, at()));
  add('addon copyBytes into SharedArrayBuffer', () => native.copyBytes(shared, at(), src));
  add('shared-copy.js copyBytes into SharedArrayBuffer', () => copyBytes(shared, at(), src));
  suite.on('cycle', (e) => console.error(`${n} B: ${String(e.target)}`)).run();
  // CPU per copy (process.cpuUsage, user + system) over a fixed run of each, after the suite warmed them up.
  const cpu = {};
  for (const [name, fn] of Object.entries(fns)) {
    const reps = Math.ceil(2e8 / (n + 200));
    const u0 = process.cpuUsage();
    for (let r = 0; r < reps; r++) fn();
    const u = process.cpuUsage(u0);
    cpu[name] = Number((((u.user + u.system) * 1000) / reps).toFixed(0));
  }
  const ns = (b) => Number((1e9 / b.hz).toFixed(0));
  results.push({
    bytes: n,
    nsPerCopy: Object.fromEntries(suite.map((b) => [b.name, ns(b)])),
    cpuNsPerCopy: cpu,
  });
}
console.log(JSON.stringify({ bench: 'shared-copy', date: new Date().toISOString(), nativeMinBytes: NATIVE_MIN_BYTES, results }, null, 2));
