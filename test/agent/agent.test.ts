import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Server, ServerCredentials, type Client, type sendUnaryData, type ServerDuplexStream, type ServerReadableStream } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RobotAgent, type RobotAgentOptions } from '../../src/agent/agent.js';
import type { SampleInput } from '../../src/agent/sample-encoder.js';
import { CommandAck_Status, CommandSchema, GatewayMessageSchema, TelemetryReceiptSchema, type Command } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { CONNECT_PATH, PUBLISH_TELEMETRY_PATH } from '../../src/protocol/service.js';
import { HealthLevel, TelemetryBatchSchema, TelemetrySampleSchema, type TelemetrySample } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { sleep, startHarness, startProxy, waitFor, type Harness } from '../robotlink/support.js';

let h: Harness;
const cleanups: (() => Promise<void> | void)[] = [];

beforeEach(async () => {
  h = await startHarness();
});

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
  await h.close();
});

function agent(cred: { robotId: string; robotToken: string }, extra: Partial<RobotAgentOptions> = {}): RobotAgent {
  const a = new RobotAgent({
    address: h.server.address,
    ...cred,
    onCommand: () => ({ accept: true }),
    reconnect: { initialMs: 50, maxMs: 200 },
    ...extra,
  });
  cleanups.push(() => a.stop());
  return a;
}

function stop(commandId: string, seq: bigint): Command {
  return create(CommandSchema, { commandId, seq, issuedAtMs: BigInt(Date.now()), action: { case: 'stop', value: { reason: 'test' } } });
}

/** A non-urgent command: the seq rules (stale_seq, last applied seq) apply to it; stop overtakes them. */
function startCmd(commandId: string, seq: bigint): Command {
  return create(CommandSchema, { commandId, seq, issuedAtMs: BigInt(Date.now()), action: { case: 'start', value: {} } });
}

function decoded(robotId: string): TelemetrySample[] {
  return h.events.telemetry.filter((t) => t.robotId === robotId).flatMap((t) => fromBinary(TelemetryBatchSchema, t.batch).samples);
}

describe('RobotAgent telemetry', () => {
  it('delivers raw batches that decode to exactly the samples sent', async () => {
    const cred = h.robot();
    const a = agent(cred);
    a.start();
    await waitFor(() => a.connected, 'connected');
    const sent = Array.from({ length: 25 }, (_, i) =>
      create(TelemetrySampleSchema, {
        tsMs: BigInt(1_700_000_000_000 + i),
        position: { latitude: 52 + i / 1e5, longitude: 5, elevationM: 1 },
        velocity: { linearMps: i / 10 },
        mode: 'autonomous',
        health: { level: HealthLevel.OK, faults: i % 5 === 0 ? ['x'] : [] },
        gpsFix: 4,
      }),
    );
    a.sendTelemetry(sent.slice(0, 10));
    a.sendTelemetry(create(TelemetryBatchSchema, { samples: sent.slice(10) }));
    const plain: SampleInput = {
      tsMs: 1_800_000_000_000, latitude: 52.1, longitude: 5.1, elevationM: 3, xM: 1, yM: 2, zM: 0, headingDeg: 90,
      linearMps: 1, angularDps: 0, batteryPercent: 50, voltageV: 48, charging: false, mode: 'paused', estop: true,
      mission: null, healthLevel: HealthLevel.WARN, faults: ['f'], cpuTempC: 40, gpsFix: 1, mapId: '', loads: null,
    };
    a.sendSamples([plain]);
    await waitFor(() => decoded(cred.robotId).length === 26, 'all samples delivered');
    const got = decoded(cred.robotId);
    expect(got.slice(0, 25)).toEqual(sent);
    expect(got[25]).toMatchObject({ tsMs: 1_800_000_000_000n, mode: 'paused', estop: true, gpsFix: 1 });
    expect(h.events.telemetry.every((t) => t.fleetId === h.fleetId)).toBe(true);
    expect(a.stats()).toMatchObject({ samplesSent: 26, samplesDropped: 0 });
  });

  it('queues samples while disconnected (bounded, oldest dropped) and sends them after connecting', async () => {
    const cred = h.robot();
    const a = agent(cred, { maxQueuedSamples: 5 });
    const mk = (i: number) => create(TelemetrySampleSchema, { tsMs: BigInt(i) });
    a.sendTelemetry(Array.from({ length: 8 }, (_, i) => mk(i + 1)));
    expect(a.stats()).toMatchObject({ samplesQueued: 5, samplesDropped: 3 });
    a.start();
    await waitFor(() => decoded(cred.robotId).length === 5, 'queued samples delivered');
    expect(decoded(cred.robotId).map((s) => s.tsMs)).toEqual([4n, 5n, 6n, 7n, 8n]);
  });
});

/**
 * A server like gateways before issue 12: it welcomes the robot but answers PublishTelemetry with
 * headers only at the end. Counts the telemetry messages it reads.
 */
async function startLateHeadersServer(): Promise<{ address: string; batches: () => number; close: () => void }> {
  const raw = (b: Buffer): Buffer => b;
  const welcome = Buffer.from(toBinary(GatewayMessageSchema, create(GatewayMessageSchema, {
    body: { case: 'welcome', value: { robotId: 'r', fleetId: 'f', serverTimeMs: 0n } },
  })));
  let batches = 0;
  const server = new Server();
  const method = { requestSerialize: raw, requestDeserialize: raw, responseSerialize: raw, responseDeserialize: raw };
  server.addService({
    Connect: { path: CONNECT_PATH, requestStream: true, responseStream: true, ...method },
    PublishTelemetry: { path: PUBLISH_TELEMETRY_PATH, requestStream: true, responseStream: false, ...method },
  }, {
    Connect: (call: ServerDuplexStream<Buffer, Buffer>) => {
      call.once('data', () => call.write(welcome));
      call.on('end', () => call.end());
      call.on('error', () => {});
    },
    PublishTelemetry: (call: ServerReadableStream<Buffer, Buffer>, cb: sendUnaryData<Buffer>) => {
      call.on('data', () => { batches++; });
      call.on('end', () => cb(null, Buffer.from(toBinary(TelemetryReceiptSchema, create(TelemetryReceiptSchema, {})))));
      call.on('error', () => {});
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p)));
  });
  return { address: `127.0.0.1:${port}`, batches: () => batches, close: () => server.forceShutdown() };
}

/** Bytes grpc-js holds in the retry buffers of the agent's channel (internal, read for this test only). */
function retryBufferBytes(a: RobotAgent): number {
  const channel = (a as unknown as { client: Client }).client.getChannel() as unknown as {
    internalChannel: { retryBufferTracker: { totalAllocated: number } };
  };
  return channel.internalChannel.retryBufferTracker.totalAllocated;
}

describe('RobotAgent memory', () => {
  it('keeps no written telemetry in grpc-js retry buffers, even when the server sends headers only at the end', async () => {
    const server = await startLateHeadersServer();
    cleanups.push(() => server.close());
    const a = agent({ robotId: 'r', robotToken: 't' }, { address: server.address, maxBatchSamples: 1 });
    a.start();
    await waitFor(() => a.connected, 'connected');
    const sample: SampleInput = {
      tsMs: 1_800_000_000_000, latitude: 52.1, longitude: 5.1, elevationM: 3, xM: 1, yM: 2, zM: 0, headingDeg: 90,
      linearMps: 1, angularDps: 0, batteryPercent: 50, voltageV: 48, charging: false, mode: 'autonomous', estop: false,
      mission: null, healthLevel: HealthLevel.OK, faults: [], cpuTempC: 40, gpsFix: 4, mapId: '', loads: null,
    };
    // ~100 bytes a message: 500 messages would hold ~50 kB in an uncommitted call.
    for (let i = 0; i < 500; i++) a.sendSamples([{ ...sample, tsMs: sample.tsMs + i }]);
    await waitFor(() => server.batches() === 500, 'all batches read');
    expect(retryBufferBytes(a)).toBe(0);
  });
});

describe('RobotAgent commands', () => {
  it('applies a command once, acks RECEIVED, and re-acks a duplicate without re-applying', async () => {
    const cred = h.robot();
    const applied: string[] = [];
    const a = agent(cred, { onCommand: (c) => (applied.push(c.commandId), { accept: true }) });
    a.start();
    await waitFor(() => h.server.link.isOnline(cred.robotId), 'online');
    expect(h.server.link.send(cred.robotId, stop('cmd-1', 1n))).toBe(true);
    await waitFor(() => h.events.acks.length === 1, 'ack');
    expect(h.events.acks[0]).toMatchObject({ robotId: cred.robotId, ack: { commandId: 'cmd-1', status: CommandAck_Status.RECEIVED, reason: '' } });
    h.server.link.send(cred.robotId, stop('cmd-1', 1n));
    await waitFor(() => h.events.acks.length === 2, 'second ack');
    expect(h.events.acks[1]?.ack.status).toBe(CommandAck_Status.RECEIVED);
    expect(applied).toEqual(['cmd-1']);
    expect(a.stats()).toMatchObject({ commandsApplied: 1, duplicateCommands: 1 });
  });

  it('does not re-apply a command resent after a reconnect, and reports its last applied seq in Hello', async () => {
    const cred = h.robot();
    const proxy = await startProxy(h.server.address);
    cleanups.push(() => proxy.close());
    const applied: string[] = [];
    const a = agent(cred, { address: proxy.address, dedicatedConnection: true, onCommand: (c) => (applied.push(c.commandId), { accept: true }) });
    a.start();
    await waitFor(() => h.server.link.isOnline(cred.robotId), 'online');
    h.server.link.send(cred.robotId, startCmd('cmd-7', 7n));
    await waitFor(() => h.events.acks.length === 1, 'ack');
    proxy.cut();
    await waitFor(() => h.events.offline.length === 1, 'offline after cut');
    await waitFor(() => h.events.online.length === 2, 'reconnected');
    expect(h.events.online[1]?.lastAppliedSeq).toBe(7n);
    h.server.link.send(cred.robotId, startCmd('cmd-7', 7n));
    await waitFor(() => h.events.acks.length === 2, 're-ack after reconnect');
    expect(h.events.acks[1]?.ack).toMatchObject({ commandId: 'cmd-7', status: CommandAck_Status.RECEIVED });
    expect(applied).toEqual(['cmd-7']);
  });

  it('acks REJECTED with the handler reason, and a duplicate of it again without calling the handler', async () => {
    const cred = h.robot();
    let calls = 0;
    const a = agent(cred, { onCommand: () => (calls++, { accept: false, reason: 'estop engaged' }) });
    a.start();
    await waitFor(() => h.server.link.isOnline(cred.robotId), 'online');
    h.server.link.send(cred.robotId, stop('cmd-r', 1n));
    h.server.link.send(cred.robotId, stop('cmd-r', 1n));
    await waitFor(() => h.events.acks.length === 2, 'acks');
    for (const e of h.events.acks) expect(e.ack).toMatchObject({ commandId: 'cmd-r', status: CommandAck_Status.REJECTED, reason: 'estop engaged' });
    expect(calls).toBe(1);
    expect(h.events.online[0]?.lastAppliedSeq).toBe(0n);
  });

  it('applies a command once when a duplicate arrives while an async handler is still running', async () => {
    const cred = h.robot();
    let calls = 0;
    // The handler is still running when the duplicate arrives: it holds its answer until then.
    const a: RobotAgent = agent(cred, {
      onCommand: async () => {
        calls++;
        await waitFor(() => a.stats().duplicateCommands > 0, 'the duplicate');
        return { accept: true };
      },
    });
    a.start();
    await waitFor(() => h.server.link.isOnline(cred.robotId), 'online');
    h.server.link.send(cred.robotId, stop('cmd-a', 1n));
    await waitFor(() => calls === 1, 'handler running');
    h.server.link.send(cred.robotId, stop('cmd-a', 1n));
    await waitFor(() => h.events.acks.length === 1, 'ack');
    // A later command's ack: an ack or a second call for the duplicate would have come before it.
    h.server.link.send(cred.robotId, stop('cmd-b', 2n));
    await waitFor(() => h.events.acks.length === 2, 'the later command\'s ack');
    expect(calls).toBe(2);
    expect(h.events.acks.map((e) => e.ack.commandId)).toEqual(['cmd-a', 'cmd-b']);
  });

  it('never applies a forgotten command whose seq is not newer than the last one decided', async () => {
    const cred = h.robot();
    const applied: string[] = [];
    const a = agent(cred, { commandMemory: 1, maxPendingCommands: 1, onCommand: (c) => (applied.push(c.commandId), { accept: true }) });
    a.start();
    await waitFor(() => h.server.link.isOnline(cred.robotId), 'online');
    h.server.link.send(cred.robotId, startCmd('old', 1n));
    await waitFor(() => h.events.acks.length === 1, 'first ack');
    h.server.link.send(cred.robotId, startCmd('new', 2n));
    await waitFor(() => h.events.acks.length === 2, 'second ack');
    h.server.link.send(cred.robotId, startCmd('newer', 3n));
    await waitFor(() => h.events.acks.length === 3, 'third ack');
    // 'old' has been forgotten (memory holds two ids); its seq is below the high-water mark.
    h.server.link.send(cred.robotId, startCmd('old', 1n));
    await waitFor(() => h.events.acks.length === 4, 'fourth ack');
    expect(h.events.acks[3]?.ack).toMatchObject({ commandId: 'old', status: CommandAck_Status.REJECTED, reason: 'stale_seq' });
    expect(applied).toEqual(['old', 'new', 'newer']);
  });

  it('calls onLinkLoss once the link has been down for the configured time (opt-in stop on link loss)', async () => {
    const cred = h.robot();
    const proxy = await startProxy(h.server.address);
    cleanups.push(() => proxy.close());
    let lost = 0;
    let lostAt = 0;
    let droppedAt = 0;
    const a = agent(cred, {
      address: proxy.address,
      dedicatedConnection: true,
      reconnect: { initialMs: 5000, maxMs: 5000 },
      linkLoss: {
        afterMs: 300,
        onLinkLoss: () => {
          lost++;
          lostAt = performance.now();
        },
      },
      onDisconnected: () => {
        droppedAt = performance.now();
      },
    });
    a.start();
    await waitFor(() => a.connected, 'connected');
    // Time-based on purpose (the link-loss timer is what is tested): nothing while the link is up.
    await sleep(500);
    expect(lost).toBe(0);
    proxy.cut();
    await waitFor(() => lost === 1, 'link loss reported', 10_000);
    // Not before the configured time after the drop (a lower bound: a loaded machine only makes it later).
    expect(lostAt - droppedAt).toBeGreaterThanOrEqual(290);
  });

  it('a planned gateway stop holds the link-loss reaction for the announced time, capped by maxRestartHoldMs', async () => {
    const cred = h.robot();
    let lost = 0;
    let lostAt = 0;
    const a = agent(cred, {
      dedicatedConnection: true,
      linkLoss: { afterMs: 200, onLinkLoss: () => { lost++; lostAt = Date.now(); } },
      maxRestartHoldMs: 1000,
    });
    a.start();
    await waitFor(() => a.connected, 'connected');
    // The gateway announces a 60 s restart; this robot accepts at most 1 s.
    const closed = Date.now();
    await h.server.close({ restartHoldMs: 60_000 });
    await waitFor(() => !a.connected, 'disconnected');
    expect(a.stats().restartHolds).toBe(1);
    await waitFor(() => lost === 1, 'link loss reported once the capped hold ran out', 5000);
    // Not at afterMs (200 ms): the hold ran first. Not at 60 s: the robot's own cap.
    expect(lostAt - closed).toBeGreaterThanOrEqual(1000);
  });

  it('a restart notice is ignored with maxRestartHoldMs 0 (as by an agent that predates it)', async () => {
    const cred = h.robot();
    let lost = 0;
    const a = agent(cred, { dedicatedConnection: true, linkLoss: { afterMs: 200, onLinkLoss: () => lost++ }, maxRestartHoldMs: 0 });
    a.start();
    await waitFor(() => a.connected, 'connected');
    await h.server.close({ restartHoldMs: 60_000 });
    await waitFor(() => lost === 1, 'link loss reported after afterMs', 3000);
    expect(a.stats().restartHolds).toBe(0);
  });

  it('link loss: a link back within the time does not trigger it, it fires once per outage, and is re-armed by a reconnect', async () => {
    const cred = h.robot();
    const proxy = await startProxy(h.server.address);
    cleanups.push(() => proxy.close());
    let lost = 0;
    const a = agent(cred, {
      address: proxy.address,
      dedicatedConnection: true,
      reconnect: { initialMs: 20, maxMs: 40 },
      linkLoss: { afterMs: 400, onLinkLoss: () => lost++ },
    });
    a.start();
    await waitFor(() => a.connected, 'connected');
    const connects = a.stats().connects;
    proxy.cut(); // the agent reconnects within ~40 ms, well inside 400 ms
    await waitFor(() => a.stats().connects > connects && a.connected, 'reconnected');
    // Time-based on purpose: past the 400 ms a link loss would take, the reconnect disarmed it.
    await sleep(600);
    expect(lost).toBe(0);
    // A lasting outage: the proxy black-holes new connections' bytes, so reconnects never get a Welcome.
    proxy.blackhole(true);
    proxy.cut();
    await waitFor(() => !a.connected, 'disconnected');
    await waitFor(() => lost === 1, 'link loss reported', 10_000);
    // Time-based on purpose: longer than the link-loss time again while the reconnects keep failing.
    await sleep(600);
    expect(lost).toBe(1); // once per outage, however many reconnect attempts fail
    proxy.blackhole(false);
    proxy.cut();
    await waitFor(() => a.connected, 'connected again', 5000);
    proxy.cut();
    await waitFor(() => !a.connected, 'disconnected again');
    proxy.blackhole(true);
    proxy.cut();
    await waitFor(() => lost === 2, 'second outage reported', 3000);
  });
});
