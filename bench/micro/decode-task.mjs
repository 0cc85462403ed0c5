// Micro benchmark: one decode-worker task (telemetry/decode-worker.js decodeTask: protobuf decode +
// row encoding + newest snapshot per robot) for the chdb format (TSV) and the server format
// (RowBinary), against the baseline of protobuf-es fromBinary alone on the same frames.
// Per-sample cost here x 100,000 = the decode workers' share of a core at 100k samples/s.
// Run: node bench/micro/decode-task.mjs
import { fromBinary } from '@bufbuild/protobuf';
import Benchmark from 'benchmark';
import { randomUUID } from 'node:crypto';
import { TelemetryBatchSchema } from '../../dist/gen/fleetgw/v1/telemetry_pb.js';
import { deserializeRobotMessage } from '../../dist/protocol/envelope.js';
import { decodeTask } from '../../dist/telemetry/decode-worker.js';
import { FramePacker } from '../../dist/telemetry/frame-packer.js';
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
const task = (format) => ({ format, ...packed, live: null });
for (const format of ['tsv', 'rowbinary']) {
  const r = decodeTask(task(format));
  if (r.rowCount !== total || r.corruptFrames !== 0 || r.snapshots.length !== ROBOTS) throw new Error(`${format}: bad result`);
}

let sink = 0;
const suite = new Benchmark.Suite();
suite
  .add('fromBinary only', () => { for (const f of frames) sink += fromBinary(TelemetryBatchSchema, f).samples.length; })
  .add('decodeTask tsv (chdb before the RowBinary spool)', () => { sink += decodeTask(task('tsv')).rowCount; })
  .add('decodeTask rowbinary (chdb and server)', () => { sink += decodeTask(task('rowbinary')).rowCount; })
  .on('cycle', (e) => console.error(String(e.target)))
  .run();
const perSampleUs = (b) => 1e6 / b.hz / total;
const [base, tsv, rb] = suite.map((b) => b);
console.log(JSON.stringify({
  bench: 'micro/decode-task', node: process.version, task: { robots: ROBOTS, samplesPerFrame: SAMPLES, bytes: packed.byteLength },
  usPerSample: {
    fromBinaryOnly: Number(perSampleUs(base).toFixed(3)),
    decodeTaskTsv: Number(perSampleUs(tsv).toFixed(3)),
    decodeTaskRowBinary: Number(perSampleUs(rb).toFixed(3)),
  },
  tsvOverDecode: Number((perSampleUs(tsv) / perSampleUs(base)).toFixed(2)),
  rowBinaryOverDecode: Number((perSampleUs(rb) / perSampleUs(base)).toFixed(2)),
  sink: sink > 0,
}, null, 2));
