// What a small batch costs decoded on the main thread (src/telemetry/ingest/inline-decode.ts)
// against the same batch as a decode-pool task (src/telemetry/decode/decode-pool.ts), the baseline, in the
// same run. The batch is the one the ingest cuts by age at 1,000 robots x 10 Hz: one frame of one
// sample per robot (also 100 robots, a 256 KiB batch: the byte bound, and 256 KiB of minimal samples,
// a timestamp each, the most samples per byte a robot can send). Reported per batch:
// - inline: wall time on the main thread (how long the event loop is held) and process CPU;
// - pool: round-trip wall time and process CPU (main + worker thread, from process.cpuUsage), one
//   task at a time as the ingest posts them at light load;
// - the decode time per byte the inline decoder learned, and whether it would now take the batch
//   (its 1 ms budget).
//
//   node bench/micro/inline-decode.mjs            (the addon; FLEETGW_TELEMETRY_DECODER=js for the JS reader)
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { createDecodePool } from '../../dist/telemetry/decode/decode-pool.js';
import { FramePacker } from '../../dist/telemetry/decode/frame-packer.js';
import { InlineDecode } from '../../dist/telemetry/ingest/inline-decode.js';
import { TaskSlots } from '../../dist/telemetry/decode/task-slots.js';
import { telemetryBatch } from './fixtures.mjs';

const FRAME_BYTES = 1024 * 1024 + 256 * 1024; // the ingest's slot size at its defaults
const slots = new TaskSlots(2, FRAME_BYTES, FRAME_BYTES * 3);
const inline = new InlineDecode(slots);
const pool = createDecodePool({ maxTasks: 1, slots: slots.forWorkers, threads: 1 });
const fleetId = randomUUID();

/** TelemetryBatch bytes of `n` samples holding only `ts_ms` (9 bytes each). */
function minimalBatch(n) {
  const out = [];
  const ts = Date.now();
  for (let i = 0; i < n; i++) {
    let v = ts + i;
    const varint = [];
    while (v >= 0x80) { varint.push((v % 0x80) | 0x80); v = Math.floor(v / 0x80); }
    varint.push(v);
    out.push(0x0a, varint.length + 1, 0x08, ...varint);
  }
  return Uint8Array.from(out);
}

/** A batch of `robots` frames of `samples` samples each (minimal ones when `minimal`), packed into a slot. */
function batchOf(robots, samples, packer, minimal) {
  for (let r = 0; r < robots; r++) packer.add(`robot-${r}`, fleetId, minimal ? minimalBatch(samples) : telemetryBatch(samples, r), Date.now());
  return packer.take();
}

const cpuUs = () => { const c = process.cpuUsage(); return c.user + c.system; };

async function measure(name, robots, samples, rounds, minimal = false) {
  const packer = new FramePacker(32 * 1024, slots);
  const batch = batchOf(robots, samples, packer, minimal);
  packer.dispose();
  if (batch.slot < 0) throw new Error('no slot');
  const out = { batch: name, frames: batch.frameCount, bytes: batch.byteLength };
  // Warm both paths (JIT, worker start).
  for (let i = 0; i < 50; i++) { inline.decode(batch, null); await pool.run({ live: null, ...batch }); }
  let t = process.hrtime.bigint();
  let c = cpuUs();
  let maxMs = 0;
  for (let i = 0; i < rounds; i++) {
    const t1 = process.hrtime.bigint();
    const r = inline.decode(batch, null);
    const ms = Number(process.hrtime.bigint() - t1) / 1e6;
    if (ms > maxMs) maxMs = ms;
    if (r.rowCount !== robots * samples || r.corruptFrames !== 0) throw new Error('bad inline result');
  }
  out.inline = {
    wallMsPerBatch: +(Number(process.hrtime.bigint() - t) / 1e6 / rounds).toFixed(3), maxWallMs: +maxMs.toFixed(3), cpuMsPerBatch: +((cpuUs() - c) / 1e3 / rounds).toFixed(3),
    learnedNsPerByte: +inline.estimateNsPerByte.toFixed(2), wouldTake: inline.accepts(batch),
  };
  t = process.hrtime.bigint();
  c = cpuUs();
  for (let i = 0; i < rounds; i++) {
    const r = await pool.run({ live: null, ...batch });
    if (r.rowCount !== robots * samples || r.corruptFrames !== 0) throw new Error('bad pool result');
  }
  out.pool = { wallMsPerBatch: +(Number(process.hrtime.bigint() - t) / 1e6 / rounds).toFixed(3), cpuMsPerBatch: +((cpuUs() - c) / 1e3 / rounds).toFixed(3) };
  slots.release(batch.slot);
  return out;
}

const results = [
  await measure('100 robots x 1 sample', 100, 1, 2000),
  await measure('1,000 robots x 1 sample', 1000, 1, 500),
  await measure('256 KiB: 200 robots x 10 samples', 200, 10, 300),
  await measure('256 KiB of minimal samples: 100 robots x 290 samples (ts only)', 100, 290, 100, true),
];
await pool.close();
console.log(JSON.stringify({
  bench: 'micro/inline-decode', date: new Date().toISOString(), node: process.version, loadavg: loadavg().map((x) => x.toFixed(2)).join(' '),
  decoder: process.env.FLEETGW_TELEMETRY_DECODER ?? 'native (unless the addon is not built)', results,
}, null, 2));
