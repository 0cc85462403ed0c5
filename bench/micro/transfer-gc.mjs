// Why decode tasks use shared slots (src/telemetry/decode/task-slots.ts). For 5 s, a 2 MiB frames
// buffer and a 2 MiB rows buffer cross threads per round trip (transfer mode), or only a slot index
// does (slot mode); prints the GCs of the main isolate by kind:flags (perf_hooks). Kind 4 with flags
// 40 is a full GC started by external-memory pressure: transferred buffers arrive as new external
// memory, and V8 starts one per 64 MiB.
//
//   node bench/micro/transfer-gc.mjs transfer|slot
import { PerformanceObserver } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';

const mode = process.argv[2] === 'slot' ? 'slot' : 'transfer';
const worker = new Worker(`
  const { parentPort } = require('node:worker_threads');
  parentPort.on('message', (m) => {
    if (!m.frames) { parentPort.postMessage({ rowsLength: 1 }); return; }
    const rows = new ArrayBuffer(2 << 20);
    parentPort.postMessage({ back: m.frames, rows }, [m.frames, rows]);
  });`, { eval: true });
const kinds = {};
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    const key = `${e.detail.kind}:${e.detail.flags}`;
    kinds[key] = (kinds[key] ?? 0) + 1;
  }
}).observe({ entryTypes: ['gc'] });
// A live heap of the gateway's order, so a full GC has something to mark.
const live = [];
for (let i = 0; i < 300_000; i++) live.push({ i, s: `x${i}` });
let spare = null;
let trips = 0;
const t0 = Date.now();
while (Date.now() - t0 < 5000) {
  const reply = new Promise((resolve) => worker.once('message', resolve));
  if (mode === 'transfer') {
    const frames = spare ?? new ArrayBuffer(2 << 20);
    worker.postMessage({ frames }, [frames]);
    spare = (await reply).back;
  } else {
    worker.postMessage({ slot: 1, byteLength: 1 << 20 });
    await reply;
  }
  trips++;
  await new Promise((resolve) => setTimeout(resolve, 10));
}
console.log(JSON.stringify({ mode, trips, liveObjects: live.length, gcByKindFlags: kinds }));
await worker.terminate();
