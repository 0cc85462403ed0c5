// Micro benchmark: one decode-worker task (50 robots x 100 samples, the simulator's samples) through
// each decoder: the reference (protobuf-es + the field table), the hand-rolled JS reader and the C++
// addon; plus protobuf-es `fromBinary` alone on the same frames as the old baseline. All three
// decoders produce the same bytes (test/telemetry/decoders.test.ts); this measures what each costs.
// Per-sample cost x 100,000 = the decode workers' share of a core at 100k samples/s.
// Run: node bench/micro/decode-task.mjs   (after `npm run build` and `npm run build:native`)
import { fromBinary } from '@bufbuild/protobuf';
import Benchmark from 'benchmark';
import { randomUUID } from 'node:crypto';
import { TelemetryBatchSchema } from '../../dist/gen/fleetgw/v1/telemetry_pb.js';
import { deserializeRobotMessage } from '../../dist/protocol/envelope.js';
import { decoderOf } from '../../dist/telemetry/decode/select.js';
import { loadNative } from '../../dist/telemetry/decode/native.js';
import { FramePacker } from '../../dist/telemetry/decode/frame-packer.js';
import { telemetryEnvelope } from './fixtures.mjs';

const ROBOTS = 50;
const SAMPLES = 100; // one 100 ms message of a 1000 Hz robot
const fleetId = randomUUID();
const packer = new FramePacker();
const frames = [];
for (let r = 0; r < ROBOTS; r++) {
  const batch = deserializeRobotMessage(telemetryEnvelope(SAMPLES, r)).batch;
  frames.push(batch);
  packer.add(randomUUID(), fleetId, batch, Date.now());
}
const packed = packer.take();
const total = ROBOTS * SAMPLES;
const kinds = ['reference', 'js', ...(loadNative().binding ? ['native'] : [])];
const decoders = Object.fromEntries(kinds.map((k) => [k, decoderOf(k)]));
const task = (live) => ({ ...packed, live: live ? new Uint8Array(ROBOTS).fill(1) : null });
for (const k of kinds) {
  const r = decoders[k].decode(task(false), 0);
  if (r.rowCount !== total || r.corruptFrames !== 0 || r.snapshots.length !== ROBOTS * 3) throw new Error(`${k}: bad result`);
}

let sink = 0;
const suite = new Benchmark.Suite();
suite.add('protobuf-es fromBinary only', () => { for (const f of frames) sink += fromBinary(TelemetryBatchSchema, f).samples.length; });
for (const k of kinds) {
  suite.add(`${k}: rows + snapshots`, () => { sink += decoders[k].decode(task(false), 0).rowCount; });
  suite.add(`${k}: rows + snapshots + live JSON`, () => { sink += decoders[k].decode(task(true), 0).rowCount; });
}
// As the gateway runs it: the rows written into a destination (a task slot or the row arena) that
// holds them. The addon writes them there directly; the JS decoders copy them in from their own buffer.
const rowsInto = new Uint8Array(4 << 20);
for (const k of kinds) suite.add(`${k}: rows into a row buffer + snapshots`, () => { sink += decoders[k].decode({ ...task(false), rowsInto }, 0).rowCount; });
suite.on('cycle', (e) => console.error(String(e.target))).run();
const perSampleUs = (b) => Number((1e6 / b.hz / total).toFixed(3));
console.log(JSON.stringify({
  bench: 'micro/decode-task', node: process.version, loadavg: (await import('node:os')).loadavg().map((x) => x.toFixed(2)).join(' '),
  task: { robots: ROBOTS, samplesPerFrame: SAMPLES, bytes: packed.byteLength },
  usPerSample: Object.fromEntries(suite.map((b) => [b.name, perSampleUs(b)])),
  sink: sink > 0,
}, null, 2));
