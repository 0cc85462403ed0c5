import { create, fromBinary } from '@bufbuild/protobuf';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RobotAgent } from '../../src/agent/agent.js';
import type { SampleInput } from '../../src/agent/sample-encoder.js';
import { CommandSchema } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { HealthLevel, TelemetryBatchSchema, TelemetrySampleSchema } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { RobotRegistry } from '../../src/robotlink/registry.js';
import { startHarness, waitFor, type Harness } from './support.js';

let h: Harness;
const agents: RobotAgent[] = [];

beforeEach(async () => {
  h = await startHarness();
});

afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
  await h.close();
});

function start(cred: { robotId: string; robotToken: string }, maxQueuedSamples = 4096): RobotAgent {
  const a = new RobotAgent({ address: h.server.address, ...cred, onCommand: () => ({ accept: true }), maxQueuedSamples, dedicatedConnection: true });
  agents.push(a);
  a.start();
  return a;
}

function receivedTs(): bigint[] {
  return h.events.telemetry.flatMap((t) => fromBinary(TelemetryBatchSchema, t.batch).samples.map((s) => s.tsMs));
}

describe('setReadPaused', () => {
  it('holds telemetry while paused (robots still come online) and delivers the backlog in order on resume', async () => {
    h.server.link.setReadPaused(true);
    const cred = h.robot();
    const a = start(cred);
    await waitFor(() => a.connected && h.server.link.isOnline(cred.robotId), 'online while paused');
    for (let i = 0; i < 10; i++) {
      a.sendTelemetry([0, 1, 2].map((j) => create(TelemetrySampleSchema, { tsMs: BigInt(i * 3 + j + 1) })));
    }
    // A command's ack on the same connection, written after the telemetry: once the gateway has read
    // it, it would have read the telemetry too had its reads not been paused.
    h.server.link.send(cred.robotId, create(CommandSchema, { commandId: 'anchor', seq: 1n, action: { case: 'stop', value: { reason: 'anchor' } } }));
    await waitFor(() => h.events.acks.some((e) => e.ack.commandId === 'anchor'), 'the ack written after the telemetry', 10_000);
    expect(h.events.telemetry).toHaveLength(0);
    h.server.link.setReadPaused(false);
    await waitFor(() => receivedTs().length === 30, 'backlog delivered');
    expect(receivedTs()).toEqual(Array.from({ length: 30 }, (_, i) => BigInt(i + 1)));
  });

  it('pushes back to the robot through HTTP/2 flow control: its bounded queue fills, nothing is lost unaccounted', async () => {
    // The agent's telemetry stream is read by the fast path (telemetry-frames.ts): this test is about
    // its pausing, so it checks that it is not the grpc-js fallback being paused.
    const attach = vi.spyOn(RobotRegistry.prototype, 'attachTelemetry');
    const cred = h.robot();
    const a = start(cred, 2000);
    await waitFor(() => a.connected && attach.mock.results.length > 0, 'connected with a telemetry stream');
    const attached = attach.mock.results[0];
    expect(attached?.type === 'return' ? attached.value?.readPath : undefined).toBe('fast');
    attach.mockRestore();
    h.server.link.setReadPaused(true);
    const sample = (ts: number): SampleInput => ({
      tsMs: ts, latitude: 52, longitude: 5, elevationM: 2, xM: 1, yM: 2, zM: 0, headingDeg: 10, linearMps: 1, angularDps: 0,
      batteryPercent: 80, voltageV: 50, charging: false, mode: 'autonomous', estop: false, mission: null,
      healthLevel: HealthLevel.OK, faults: [], cpuTempC: 40, gpsFix: 4, mapId: '', loads: null,
    });
    const total = 200_000;
    for (let i = 0; i < total; i += 1000) {
      a.sendSamples(Array.from({ length: 1000 }, (_, j) => sample(i + j + 1)));
      // Lets the agent's stream write what it can between the bursts (a yield, not a wait).
      await new Promise((r) => setImmediate(r));
    }
    // The stream stopped accepting writes, so samples wait in (and overflow) the agent's queue.
    await waitFor(() => a.stats().samplesQueued > 0 && a.stats().samplesDropped > 0, 'the agent\'s queue held and overflowing', 10_000);
    expect(h.events.telemetry).toHaveLength(0);
    h.server.link.setReadPaused(false);
    await waitFor(() => receivedTs().length + a.stats().samplesDropped === total, 'everything delivered or counted as dropped', 15_000);
    const ts = receivedTs();
    // Delivered in order, and the newest sample always arrives (drop-oldest policy).
    expect(ts.every((v, i) => i === 0 || v > ts[i - 1]!)).toBe(true);
    expect(ts[ts.length - 1]).toBe(BigInt(total));
  }, 30_000);
});
