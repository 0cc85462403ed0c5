// Micro benchmark: what reading a TelemetryBatch's seq and epoch costs the main thread per batch
// (src/telemetry/ingest/batch-seq.ts), with the two varints before the samples (as the TypeScript agent
// writes them) and after them (as every standard protobuf library writes fields, in number order:
// the walk then steps over each sample by its length). 1 and 100 samples of the simulator's model.
//
//   npm run -s build && node bench/micro/batch-seq.mjs
import Benchmark from 'benchmark';
import { BatchSeqReader } from '../../dist/telemetry/ingest/batch-seq.js';
import { telemetryBatch } from './fixtures.mjs';

const SEQ = [0x10, 0xb9, 0x60]; // seq 12345
const EPOCH = [0x18, 0xd2, 0x85, 0xd8, 0xcc, 0x04]; // epoch 1234567890

const reader = new BatchSeqReader();
const results = [];
for (const samples of [1, 100]) {
  const body = telemetryBatch(samples);
  const first = Buffer.concat([Buffer.from([...SEQ, ...EPOCH]), body]);
  const last = Buffer.concat([body, Buffer.from([...SEQ, ...EPOCH])]);
  for (const b of [first, last]) {
    if (!reader.read(b) || reader.seq !== 12345 || reader.epoch !== 1234567890) throw new Error('fixture not read');
  }
  let sink = 0;
  const suite = new Benchmark.Suite();
  suite
    .add(`seq first, ${samples} sample(s), ${first.length} B`, () => { if (reader.read(first)) sink += reader.seq; })
    .add(`seq last, ${samples} sample(s), ${last.length} B`, () => { if (reader.read(last)) sink += reader.seq; })
    .on('cycle', (e) => console.error(String(e.target)))
    .run();
  const [a, b] = suite.map((x) => x);
  const us = (x) => Number((1e6 / x.hz).toFixed(4));
  results.push({ samples, bytes: first.length, seqFirstUs: us(a), seqLastUs: us(b), rme: [a.stats.rme.toFixed(1), b.stats.rme.toFixed(1)], sink: sink > 0 });
}
console.log(JSON.stringify({ bench: 'micro/batch-seq', node: process.version, results }, null, 2));
