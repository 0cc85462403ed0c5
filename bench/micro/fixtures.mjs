// Realistic telemetry bytes for the micro benchmarks: samples from the simulator's robot model,
// encoded with the agent's sample encoder and framed as the agent sends them (one RobotMessage per
// 100 ms tick, so 100 samples for a 1000 Hz robot). The TelemetryBatch framing is written here (one
// repeated field) so the fixture does not depend on the agent queue's internals.
import { randomUUID } from 'node:crypto';
import { encodeSample } from '../../dist/agent/sample-encoder.js';
import { encodeTelemetryEnvelope } from '../../dist/protocol/envelope.js';
import { RobotModel } from '../../dist/sim/index.js';

function varint(n) {
  const out = [];
  while (n >= 0x80) {
    out.push((n & 0x7f) | 0x80);
    n = Math.floor(n / 128);
  }
  out.push(n);
  return out;
}

/** TelemetryBatch bytes with `samples` samples of one robot. */
export function telemetryBatch(samples, robotIndex = 0, t0 = Date.now()) {
  const model = new RobotModel(randomUUID(), robotIndex);
  const parts = [];
  for (let i = 0; i < samples; i++) {
    model.step(0.001);
    const s = encodeSample(model.sample(t0 + i));
    parts.push(Buffer.from([0x0a, ...varint(s.length)]), s); // TelemetryBatch.samples = 1
  }
  return Buffer.concat(parts);
}

/** A RobotMessage envelope (field 2, telemetry) carrying `samples` samples. */
export function telemetryEnvelope(samples, robotIndex = 0, t0 = Date.now()) {
  return encodeTelemetryEnvelope(telemetryBatch(samples, robotIndex, t0));
}
