/**
 * PublishTelemetry, the robot's telemetry stream: authenticated like Connect, accepted only while
 * the robot's control stream is online, ended with it, raw bytes to listeners, a receipt on close.
 */
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Client, credentials, Metadata, status, type ClientDuplexStream, type ClientWritableStream, type ServiceError } from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RobotMessageSchema, type GatewayMessage, type RobotMessage, type TelemetryReceipt } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { TelemetryBatchSchema } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { CONNECT_PATH, connectClientCodec, PUBLISH_TELEMETRY_PATH, publishTelemetryClientCodec, ROBOT_ID_METADATA } from '../../src/protocol/service.js';
import { startHarness, waitFor, type Harness } from './support.js';

let h: Harness;
const clients: Client[] = [];

beforeEach(async () => {
  h = await startHarness();
});

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await h.close();
});

function client(): Client {
  const c = new Client(h.server.address, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  clients.push(c);
  return c;
}

function md(cred: { robotId: string; robotToken: string }): Metadata {
  const m = new Metadata();
  m.set(ROBOT_ID_METADATA, cred.robotId);
  m.set('authorization', `Bearer ${cred.robotToken}`);
  return m;
}

/** Opens Connect, sends Hello and resolves once welcomed. */
async function connect(c: Client, cred: { robotId: string; robotToken: string }): Promise<ClientDuplexStream<RobotMessage | Uint8Array, GatewayMessage>> {
  const s = c.makeBidiStreamRequest(CONNECT_PATH, connectClientCodec.serialize, connectClientCodec.deserialize, md(cred), {});
  s.on('error', () => {});
  const welcomed = new Promise<void>((resolve) => s.on('data', (m: GatewayMessage) => {
    if (m.body.case === 'welcome') resolve();
  }));
  s.write(create(RobotMessageSchema, { body: { case: 'hello', value: { agentVersion: 'test' } } }));
  await welcomed;
  return s;
}

function publish(c: Client, cred: { robotId: string; robotToken: string }): { stream: ClientWritableStream<Uint8Array>; done: Promise<{ err: ServiceError | null; receipt: TelemetryReceipt | undefined }> } {
  let stream!: ClientWritableStream<Uint8Array>;
  const done = new Promise<{ err: ServiceError | null; receipt: TelemetryReceipt | undefined }>((resolve) => {
    stream = c.makeClientStreamRequest<Uint8Array, TelemetryReceipt>(PUBLISH_TELEMETRY_PATH, publishTelemetryClientCodec.serialize, publishTelemetryClientCodec.deserialize, md(cred), {},
      (err, receipt) => resolve({ err, receipt }));
  });
  return { stream, done };
}

const batch = (ts: number): Uint8Array => toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples: [{ tsMs: BigInt(ts) }] }));

describe('PublishTelemetry', () => {
  it('passes raw batches to listeners and answers a half-close with a receipt counting them', async () => {
    const cred = h.robot();
    const c = client();
    const ctl = await connect(c, cred);
    const p = publish(c, cred);
    for (let i = 1; i <= 3; i++) p.stream.write(batch(i));
    p.stream.end();
    const { err, receipt } = await p.done;
    expect(err).toBeNull();
    expect(receipt?.batches).toBe(3n);
    expect(h.events.telemetry.map((t) => t.robotId)).toEqual([cred.robotId, cred.robotId, cred.robotId]);
    expect(h.events.telemetry.flatMap((t) => fromBinary(TelemetryBatchSchema, t.batch).samples.map((s) => s.tsMs))).toEqual([1n, 2n, 3n]);
    expect(h.events.telemetry[0]?.fleetId).toBe(h.fleetId);
    ctl.end();
  });

  it('refuses bad credentials (UNAUTHENTICATED) and a robot whose control stream is not online (FAILED_PRECONDITION)', async () => {
    const cred = h.robot();
    const c = client();
    const bad = publish(c, { robotId: cred.robotId, robotToken: 'not-the-token' });
    bad.stream.write(batch(1));
    expect((await bad.done).err?.code).toBe(status.UNAUTHENTICATED);
    const early = publish(c, cred);
    early.stream.write(batch(1));
    expect((await early.done).err?.code).toBe(status.FAILED_PRECONDITION);
    expect(h.events.telemetry).toHaveLength(0);
  });

  it('sends response headers as soon as the stream is accepted, so the client frees what it has written', async () => {
    // grpc-js clients keep every message of a call in a retry buffer until headers arrive: headers
    // only with the final receipt made every agent hold up to 1 MiB per telemetry stream.
    const cred = h.robot();
    const c = client();
    const ctl = await connect(c, cred);
    const p = publish(c, cred);
    const headers = new Promise<Metadata>((resolve) => p.stream.once('metadata', resolve));
    p.stream.write(batch(1));
    await headers;
    await waitFor(() => h.events.telemetry.length === 1, 'batch read');
    // Still open: the headers did not wait for the end of the stream.
    let ended = false;
    void p.done.then(() => { ended = true; });
    expect(ended).toBe(false);
    p.stream.end();
    expect((await p.done).receipt?.batches).toBe(1n);
    ctl.end();
  });

  it('ends the telemetry stream (ABORTED) when the control stream ends, and lets a newer one replace an older one', async () => {
    const cred = h.robot();
    const c = client();
    const ctl = await connect(c, cred);
    const first = publish(c, cred);
    first.stream.write(batch(1));
    await waitFor(() => h.events.telemetry.length === 1, 'first batch');
    const second = publish(c, cred);
    expect((await first.done).err?.code).toBe(status.ABORTED);
    second.stream.write(batch(2));
    await waitFor(() => h.events.telemetry.length === 2, 'second batch');
    ctl.end();
    const ended = await second.done;
    expect(ended.err?.code).toBe(status.ABORTED);
    expect(ended.err?.details).toMatch(/control stream ended/);
  });
});

describe('PublishTelemetry receipts of durable batches (issue 14 part 1)', () => {
  const sequenced = (seq: number, epoch: number, ts: number): Uint8Array => {
    const body = batch(ts);
    return Uint8Array.from([0x10, seq, 0x18, epoch, ...body]);
  };

  it('writes receipts to a robot that sends seq, and none before the end to one that does not', async () => {
    const cred = h.robot();
    const old = h.robot();
    const c = client();
    const ctl = await connect(c, cred);
    const ctlOld = await connect(c, old);
    const s = c.makeBidiStreamRequest<Uint8Array, TelemetryReceipt>(PUBLISH_TELEMETRY_PATH, publishTelemetryClientCodec.serialize, publishTelemetryClientCodec.deserialize, md(cred), {});
    s.on('error', () => {});
    const receipts: TelemetryReceipt[] = [];
    s.on('data', (r: TelemetryReceipt) => receipts.push(r));
    s.write(sequenced(1, 9, 1));
    s.write(sequenced(2, 9, 2));
    await waitFor(() => h.events.telemetry.length === 2, 'two batches');
    const p = publish(c, old);
    p.stream.write(batch(3));
    await waitFor(() => h.events.telemetry.length === 3, 'the old agent batch');
    // The ingest would report these; a robot without seq must not get one (its call takes one message).
    h.server.link.telemetryDurable(cred.robotId, 9, 2);
    h.server.link.telemetryDurable(cred.robotId, 9, 1); // not backwards
    h.server.link.telemetryDurable(old.robotId, 0, 5);
    await waitFor(() => receipts.length === 1, 'a receipt');
    expect(receipts[0]).toMatchObject({ durableSeq: 2n, epoch: 9n, batches: 2n });
    p.stream.end();
    const { err, receipt } = await p.done;
    expect(err).toBeNull();
    expect(receipt).toMatchObject({ batches: 1n, durableSeq: 0n });
    s.end();
    await waitFor(() => receipts.length === 2, 'the final receipt');
    expect(receipts[1]).toMatchObject({ batches: 2n, durableSeq: 2n, epoch: 9n });
    ctl.end();
    ctlOld.end();
  });
});
