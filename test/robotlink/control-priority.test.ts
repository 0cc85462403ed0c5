/**
 * The control path does not wait behind telemetry: with the gateway's telemetry reads paused
 * (ingest backpressure) and the robot flooding telemetry, acks, command results and the command
 * service's ack waits still complete at once. An older agent that sends telemetry on its control
 * stream (deprecated) shows what this protects against: its ack waits until reads resume.
 */
import { create } from '@bufbuild/protobuf';
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/agent.js';
import type { SampleInput } from '../../src/agent/sample-encoder.js';
import { CommandAck_Status, CommandSchema, RobotMessageSchema, type Command, type CommandResult, type GatewayMessage } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { HealthLevel } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { encodeTelemetryEnvelope } from '../../src/protocol/envelope.js';
import { CONNECT_PATH, connectClientCodec, ROBOT_ID_METADATA } from '../../src/protocol/service.js';
import { encodeSample } from '../../src/agent/sample-encoder.js';
import { startHarness, waitFor, type Harness } from './support.js';

let h: Harness;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  h = await startHarness();
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await h.close();
});

const sample = (ts: number): SampleInput => ({
  tsMs: ts, latitude: 52, longitude: 5, elevationM: 2, xM: 1, yM: 2, zM: 0, headingDeg: 10, linearMps: 1, angularDps: 0,
  batteryPercent: 80, voltageV: 50, charging: false, mode: 'autonomous', estop: false, mission: null,
  healthLevel: HealthLevel.OK, faults: [], cpuTempC: 40, gpsFix: 4, mapId: '', loads: null,
});

function stop(commandId: string, seq: bigint): Command {
  return create(CommandSchema, { commandId, seq, issuedAtMs: BigInt(Date.now()), action: { case: 'stop', value: { reason: 'test' } } });
}

/** A robot agent that keeps writing telemetry as fast as its queue takes it, until cleanup. */
function floodingAgent(cred: { robotId: string; robotToken: string }): RobotAgent {
  const a = new RobotAgent({ address: h.server.address, ...cred, onCommand: () => ({ accept: true }), maxQueuedSamples: 2000, dedicatedConnection: true });
  let ts = 0;
  const timer = setInterval(() => a.sendSamples(Array.from({ length: 500 }, () => sample(++ts))), 2);
  cleanups.push(async () => {
    clearInterval(timer);
    await a.stop();
  });
  a.start();
  return a;
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  return s[Math.floor(s.length / 2)]!;
}

describe('control path independent of telemetry backpressure', () => {
  it('acks and command results arrive promptly while telemetry reads are paused and the robot floods telemetry', async () => {
    const results: CommandResult[] = [];
    cleanups.push(h.server.link.listen({ onCommandResult: (_id, r) => results.push(r) }));
    const cred = h.robot();
    const a = floodingAgent(cred);
    await waitFor(() => a.connected, 'connected');
    h.server.link.setReadPaused(true);
    const before = h.events.telemetry.length;
    // The telemetry stream is really held: the agent's bounded queue overflows.
    await waitFor(() => a.stats().samplesDropped > 10_000, 'agent telemetry backpressured', 10_000);
    const latencies: number[] = [];
    for (let i = 1; i <= 20; i++) {
      const id = `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
      const t0 = performance.now();
      expect(h.server.link.send(cred.robotId, stop(id, BigInt(i)))).toBe(true);
      await waitFor(() => h.events.acks.some((x) => x.ack.commandId === id), `ack ${i}`, 2000);
      latencies.push(performance.now() - t0);
    }
    expect(h.events.acks.every((x) => x.ack.status === CommandAck_Status.RECEIVED)).toBe(true);
    expect(a.sendCommandResult({ commandId: 'c1', success: true, payloadJson: '{}' })).toBe(true);
    await waitFor(() => results.length === 1, 'command result', 2000);
    // Nothing of the telemetry got through meanwhile (at most what was in flight when paused).
    expect(h.events.telemetry.length - before).toBeLessThanOrEqual(2);
    expect(median(latencies)).toBeLessThan(50);
    h.server.link.setReadPaused(false);
    await waitFor(() => h.events.telemetry.length > before + 2, 'telemetry resumes');
  }, 30_000);

  it('the command service sees agent_received for a stop with an ack wait while telemetry is paused', async () => {
    const cred = h.robot();
    const robot = h.store.robots.get(cred.robotId)!;
    // Loaded here so the link-level tests above do not depend on the command service module.
    const { CommandService: Service } = await import('../../src/commands/service.js');
    const svc = new Service({ store: h.store, link: h.server.link });
    cleanups.push(() => svc.close());
    const a = floodingAgent(cred);
    await waitFor(() => a.connected, 'connected');
    h.server.link.setReadPaused(true);
    await waitFor(() => a.stats().samplesDropped > 10_000, 'agent telemetry backpressured', 10_000);
    const fleet = h.store.fleets.get(robot.fleetId)!;
    const t0 = performance.now();
    const s = svc.submit({ robotId: cred.robotId, fleetId: robot.fleetId, orgId: fleet.orgId, action: 'stop', args: { reason: '' }, requestedBy: { actorType: 'api_key' as const, apiKeyId: 'test' } });
    const d = await svc.waitForAck(s.commandId, 2000);
    const ms = performance.now() - t0;
    expect(d.state).toBe('agent_received');
    expect(ms).toBeLessThan(500);
  }, 30_000);

  it('(deprecated path) an agent sending telemetry on its control stream has its ack held until reads resume', async () => {
    const cred = h.robot();
    const c = new Client(h.server.address, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
    cleanups.push(() => c.close());
    const m = new Metadata();
    m.set(ROBOT_ID_METADATA, cred.robotId);
    m.set('authorization', `Bearer ${cred.robotToken}`);
    const s = c.makeBidiStreamRequest(CONNECT_PATH, connectClientCodec.serialize, connectClientCodec.deserialize, m, {});
    s.on('error', () => {});
    cleanups.push(() => s.cancel());
    const received: string[] = [];
    s.on('data', (msg: GatewayMessage) => {
      if (msg.body.case === 'command') {
        received.push(msg.body.value.commandId);
        s.write(create(RobotMessageSchema, { body: { case: 'ack', value: { commandId: msg.body.value.commandId, status: CommandAck_Status.RECEIVED } } }));
      }
    });
    s.write(create(RobotMessageSchema, { body: { case: 'hello', value: { agentVersion: 'legacy' } } }));
    await waitFor(() => h.server.link.isOnline(cred.robotId), 'online');
    h.server.link.setReadPaused(true);
    // Telemetry on field 2 until HTTP/2 flow control stops accepting it.
    const batch = Buffer.concat(Array.from({ length: 200 }, (_, i) => {
      const enc = encodeSample(sample(i));
      return Buffer.concat([Buffer.from([0x0a, enc.length]), enc]);
    }));
    let writes = 0;
    while (s.write(encodeTelemetryEnvelope(batch)) && writes < 10_000) writes++;
    const id = '00000000-0000-4000-8000-000000000001';
    h.server.link.send(cred.robotId, stop(id, 1n));
    // The robot got the stop and wrote its ack behind the telemetry the paused reads hold back.
    await waitFor(() => received.includes(id), 'the stop at the robot', 10_000);
    expect(h.events.acks).toHaveLength(0);
    h.server.link.setReadPaused(false);
    await waitFor(() => h.events.acks.some((x) => x.ack.commandId === id), 'ack after resume', 5000);
  }, 30_000);
});
