// Realistic telemetry bytes for the micro benchmarks: samples from the simulator's robot model,
// encoded and framed exactly as a robot agent sends them (one RobotMessage per 100 ms tick).
import { randomUUID } from 'node:crypto';
import { encodeSample } from '../../dist/agent/sample-encoder.js';
import { TelemetryQueue } from '../../dist/agent/telemetry-queue.js';
import { RobotModel } from '../../dist/sim/index.js';

/** One RobotMessage envelope carrying `samples` samples of one robot (1000 Hz: 100 per message). */
export function telemetryEnvelope(samples, robotIndex = 0, t0 = Date.now()) {
  const model = new RobotModel(randomUUID(), robotIndex);
  const q = new TelemetryQueue(samples);
  for (let i = 0; i < samples; i++) {
    model.step(0.001);
    q.push(encodeSample(model.sample(t0 + i)));
  }
  return q.takeEnvelope(samples).envelope;
}
