// Micro benchmark: the gateway's envelope peek (protocol/envelope.js deserializeRobotMessage, which
// returns the TelemetryBatch bytes undecoded) vs a full protobuf-es fromBinary of the same message,
// the baseline it replaces on the main thread. Run: node bench/micro/envelope.mjs
import { fromBinary } from '@bufbuild/protobuf';
import Benchmark from 'benchmark';
import { RobotMessageSchema } from '../../dist/gen/fleetgw/v1/robot_link_pb.js';
import { deserializeRobotMessage } from '../../dist/protocol/envelope.js';
import { telemetryEnvelope } from './fixtures.mjs';

const results = [];
for (const samples of [1, 100]) {
  const buf = telemetryEnvelope(samples);
  if (deserializeRobotMessage(buf).kind !== 'telemetry') throw new Error('fixture is not telemetry');
  if (fromBinary(RobotMessageSchema, buf).body.value.samples.length !== samples) throw new Error('fixture sample count');
  let sink = 0;
  const suite = new Benchmark.Suite();
  suite
    .add(`peek ${samples} sample(s), ${buf.length} B`, () => { sink += deserializeRobotMessage(buf).batch.length; })
    .add(`fromBinary ${samples} sample(s), ${buf.length} B`, () => { sink += fromBinary(RobotMessageSchema, buf).body.case.length; })
    .on('cycle', (e) => console.error(String(e.target)))
    .run();
  const [peek, full] = suite.map((b) => b);
  const us = (b) => 1e6 / b.hz;
  results.push({
    samples, bytes: buf.length,
    peekUs: Number(us(peek).toFixed(3)), fromBinaryUs: Number(us(full).toFixed(3)),
    speedup: Number((peek.hz / full.hz).toFixed(1)),
    fromBinaryUsPerSample: Number((us(full) / samples).toFixed(3)),
    sink: sink > 0,
  });
}
console.log(JSON.stringify({ bench: 'micro/envelope', node: process.version, results }, null, 2));
