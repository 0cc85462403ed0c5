import { create } from '@bufbuild/protobuf';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CommandAck_Status, CommandSchema } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { runSimFleet, type SimFleet } from '../../src/sim/index.js';
import { sleep, startHarness, waitFor, type Harness } from '../robotlink/support.js';

let h: Harness;
let fleet: SimFleet | null = null;

beforeEach(async () => {
  h = await startHarness();
});

afterEach(async () => {
  await fleet?.stop();
  fleet = null;
  await h.close();
});

const HZ = Number(process.env.FLEETGW_SCALE_HZ ?? 50);
const ROBOTS = Number(process.env.FLEETGW_SCALE_ROBOTS ?? 100);

describe('simulator at scale (gateway and robots in this one process)', () => {
  it(`runs ${ROBOTS} robots at ${HZ} Hz with every sample delivered and stop acks staying fast`, async () => {
    const creds = Array.from({ length: ROBOTS }, (_, i) => h.robot(`r${i}`));
    let batchesReceived = 0;
    h.server.link.listen({ onTelemetry: () => void batchesReceived++ });
    fleet = runSimFleet({ grpc: h.server.address, robots: creds, hz: HZ });
    await waitFor(() => h.events.online.length === ROBOTS, 'all robots online', 10_000);
    const cpu0 = process.cpuUsage();
    const t0 = Date.now();
    const sent0 = fleet.stats().samplesSent;
    // Time-based on purpose: three seconds of streaming are the window the sample rate is measured over.
    await sleep(3000);
    // Stop ten robots while everything streams; time each ack.
    const latencies: number[] = [];
    for (let i = 0; i < 10; i++) {
      const robotId = creds[i]!.robotId;
      const before = h.events.acks.length;
      const at = performance.now();
      h.server.link.send(robotId, create(CommandSchema, { commandId: `stop-${i}`, seq: 1n, action: { case: 'stop', value: { reason: 'scale' } } }));
      await waitFor(() => h.events.acks.length > before, 'ack', 2000);
      latencies.push(performance.now() - at);
      expect(h.events.acks[h.events.acks.length - 1]?.ack.status).toBe(CommandAck_Status.RECEIVED);
    }
    const elapsedS = (Date.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    const st = fleet.stats();
    const rate = (st.samplesSent - sent0) / elapsedS;
    latencies.sort((a, b) => a - b);
    console.log(
      `scale: ${ROBOTS} robots x ${HZ} Hz: ${Math.round(rate)} samples/s sent, ${st.batchesSent} batches, ` +
        `dropped ${st.samplesDropped}, process CPU ${(((cpu.user + cpu.system) / 1e6 / elapsedS) * 100).toFixed(0)}% of one core, ` +
        `stop ack p50 ${latencies[5]!.toFixed(1)} ms max ${latencies[9]!.toFixed(1)} ms`,
    );
    // Everything the agents wrote arrived, but for what is still in flight (at most ~one tick per robot).
    expect(batchesReceived).toBeGreaterThan(st.batchesSent - 2 * ROBOTS);
    expect(rate).toBeGreaterThan(ROBOTS * HZ * 0.9);
    expect(st.samplesDropped).toBe(0);
    expect(latencies[9]).toBeLessThan(250);
  }, 60_000);
});
