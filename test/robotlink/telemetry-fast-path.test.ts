/**
 * The telemetry fast path (telemetry-frames.ts, telemetry-stream.ts) through the real robot link
 * server, seen from a plain node:http2 client: the gRPC framing is written by hand and split at odd
 * byte boundaries, so what the gateway reads is exactly the bytes of this test, not a gRPC client's
 * idea of them. A compressed request (`grpc-encoding: gzip`) must still work, through grpc-js's reader.
 */
import http2 from 'node:http2';
import { gzipSync } from 'node:zlib';
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { RobotMessageSchema, TelemetryReceiptSchema, type TelemetryReceipt } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { TelemetryBatchSchema } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { CONNECT_PATH, connectClientCodec, PUBLISH_TELEMETRY_PATH, ROBOT_ID_METADATA } from '../../src/protocol/service.js';
import { GrpcMessageReader } from '../../src/robotlink/grpc-message-reader.js';
import { MAX_ROBOT_MESSAGE_BYTES } from '../../src/robotlink/limits.js';
import { RobotRegistry } from '../../src/robotlink/registry.js';
import type { TelemetryStream } from '../../src/robotlink/telemetry-stream.js';
import { sleep, startHarness, waitFor, type Harness } from './support.js';

type Cred = { robotId: string; robotToken: string };

let h: Harness;
const clients: http2.ClientHttp2Session[] = [];
/** What the server got back from each PublishTelemetry hand-over (its readPath says how it reads). */
let attach: MockInstance<RobotRegistry['attachTelemetry']>;
/** Every chunk the fast path's reader was given. */
let push: MockInstance<GrpcMessageReader['push']>;

beforeEach(async () => {
  attach = vi.spyOn(RobotRegistry.prototype, 'attachTelemetry');
  push = vi.spyOn(GrpcMessageReader.prototype, 'push');
  h = await startHarness();
});

afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of clients.splice(0)) c.destroy();
  await h.close();
});

/** A gRPC length-prefixed message: compressed flag, 4-byte big-endian length, body. */
function frame(body: Uint8Array, flag = 0, declaredLength = body.length): Buffer {
  const out = Buffer.alloc(5 + body.length);
  out[0] = flag;
  out.writeUInt32BE(declaredLength, 1);
  out.set(body, 5);
  return out;
}

/** A TelemetryBatch of `n` samples (unsequenced: its bytes start with a sample). */
function batch(n: number, t0: number): Uint8Array {
  return toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, {
    samples: Array.from({ length: n }, (_, i) => ({ tsMs: BigInt(t0 + i), batteryPercent: (i % 100) + 0.5 })),
  }));
}

async function connect(): Promise<http2.ClientHttp2Session> {
  const c = http2.connect(`http://${h.server.address}`);
  clients.push(c);
  await new Promise<void>((resolve, reject) => c.once('remoteSettings', () => resolve()).once('error', reject));
  return c;
}

function call(c: http2.ClientHttp2Session, path: string, cred: Cred, extra: Record<string, string> = {}): http2.ClientHttp2Stream {
  const s = c.request({
    ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers',
    [ROBOT_ID_METADATA]: cred.robotId, authorization: `Bearer ${cred.robotToken}`, ...extra,
  }, { endStream: false });
  s.on('error', () => {});
  return s;
}

/** Brings the robot online: Connect, a framed Hello, and the registry's online event. */
async function online(c: http2.ClientHttp2Session, cred: Cred): Promise<http2.ClientHttp2Stream> {
  const control = call(c, CONNECT_PATH, cred);
  control.resume();
  control.write(frame(connectClientCodec.serialize(create(RobotMessageSchema, { body: { case: 'hello', value: { agentVersion: 'raw-http2' } } }))));
  await waitFor(() => h.server.link.isOnline(cred.robotId), 'robot online');
  return control;
}

interface Exchange {
  headers: http2.IncomingHttpHeaders;
  trailers: http2.IncomingHttpHeaders;
  receipts: TelemetryReceipt[];
}

/** Reads a call's response to its end: headers, receipts (framed, uncompressed) and trailers. */
function response(s: http2.ClientHttp2Stream): Promise<Exchange> {
  return new Promise((resolve, reject) => {
    let headers: http2.IncomingHttpHeaders = {};
    let trailers: http2.IncomingHttpHeaders = {};
    const data: Buffer[] = [];
    s.on('response', (hd) => { headers = hd; });
    s.on('trailers', (tr) => { trailers = tr; });
    s.on('data', (chunk: Buffer) => data.push(chunk));
    const done = (): void => {
      const bytes = Buffer.concat(data);
      const receipts: TelemetryReceipt[] = [];
      for (let at = 0; at < bytes.length;) {
        if (bytes.length - at < 5 || bytes[at] !== 0) return reject(new Error(`bad response framing at ${at}`));
        const len = bytes.readUInt32BE(at + 1);
        receipts.push(fromBinary(TelemetryReceiptSchema, bytes.subarray(at + 5, at + 5 + len)));
        at += 5 + len;
      }
      resolve({ headers, trailers, receipts });
    };
    s.once('end', done);
    s.once('close', done);
  });
}

/** Writes `bytes` cut at `cuts`, one write per piece and a pause after each, so each is its own DATA frame. */
async function writeSplit(s: http2.ClientHttp2Stream, bytes: Uint8Array, cuts: number[]): Promise<void> {
  const points = [0, ...[...new Set(cuts)].filter((p) => p > 0 && p < bytes.length).sort((a, b) => a - b), bytes.length];
  for (let i = 0; i + 1 < points.length; i++) {
    await new Promise<void>((resolve, reject) => s.write(bytes.subarray(points[i], points[i + 1]), (err) => (err ? reject(err) : resolve())));
    // Pacing on purpose (time-based): a pause between writes keeps each piece its own DATA frame.
    await sleep(4);
  }
}

/** Odd cuts for framed `bodies`: inside each header (after 1 and 3 bytes), inside each body, and every 9973 bytes. */
function oddCuts(bodies: Uint8Array[]): number[] {
  const cuts: number[] = [];
  let start = 0;
  for (const b of bodies) {
    cuts.push(start + 1, start + 3);
    if (b.length > 1) cuts.push(start + 5 + Math.floor(b.length / 3));
    for (let p = start + 5 + 9973; p < start + 5 + b.length; p += 9973) cuts.push(p);
    start += 5 + b.length;
  }
  return cuts;
}

/** The readPath of the telemetry stream the registry created for the `i`th PublishTelemetry call. */
function readPath(i = 0): TelemetryStream['readPath'] | undefined {
  const r = attach.mock.results[i];
  return r?.type === 'return' ? r.value?.readPath : undefined;
}

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const received = (): string[] => h.events.telemetry.map((t) => hex(t.batch));

describe('telemetry fast path over raw HTTP/2', () => {
  it('reads batches written split at odd byte boundaries, byte-identical and in order, and answers the half-close with a receipt', async () => {
    const cred = h.robot();
    const c = await connect();
    await online(c, cred);
    const bodies = [batch(1, 1), new Uint8Array(0), batch(3, 10), batch(200, 100), batch(25_000, 1000), batch(2, 50_000)];
    expect(bodies[4]!.length).toBeGreaterThan(100_000); // over a stream window and many DATA frames
    const sent = Buffer.concat(bodies.map((b) => frame(b)));
    const t = call(c, PUBLISH_TELEMETRY_PATH, cred);
    const res = response(t);
    await writeSplit(t, sent, oddCuts(bodies));
    t.end();
    const { headers, trailers, receipts } = await res;

    expect(headers[':status']).toBe(200);
    expect(trailers['grpc-status']).toBe('0');
    expect(receipts).toHaveLength(1);
    expect(receipts[0]!.batches).toBe(BigInt(bodies.length));
    expect(received()).toEqual(bodies.map(hex));
    expect(h.events.telemetry.every((e) => e.robotId === cred.robotId && e.fleetId === h.fleetId)).toBe(true);

    // The fast path read it: the stream says so, and its reader was handed exactly the bytes sent,
    // in chunks that ended inside headers and inside bodies (the splits reached the reader).
    expect(attach).toHaveBeenCalledTimes(1);
    expect(readPath()).toBe('fast');
    const chunks = push.mock.calls.map(([chunk]) => chunk);
    expect(Buffer.concat(chunks).equals(sent)).toBe(true);
    const starts = bodies.reduce<number[]>((acc, b) => [...acc, acc[acc.length - 1]! + 5 + b.length], [0]);
    let at = 0;
    const ends = chunks.map((ch) => (at += ch.length));
    const inHeader = ends.filter((e) => starts.some((s) => e > s && e < s + 5));
    const inBody = ends.filter((e) => starts.some((s, i) => i + 1 < starts.length && e > s + 5 && e < starts[i + 1]!));
    expect(inHeader.length).toBeGreaterThan(0);
    expect(inBody.length).toBeGreaterThan(0);
  });

  it('accepts a message of exactly 4 MiB', async () => {
    const cred = h.robot();
    const c = await connect();
    await online(c, cred);
    const big = Uint8Array.from({ length: MAX_ROBOT_MESSAGE_BYTES }, (_, i) => (i * 131 + (i >>> 11)) & 0xff);
    const t = call(c, PUBLISH_TELEMETRY_PATH, cred);
    const res = response(t);
    await writeSplit(t, frame(big), [3, 5 + 70_001]);
    t.end();
    const { trailers, receipts } = await res;
    expect(trailers['grpc-status']).toBe('0');
    expect(receipts.map((r) => r.batches)).toEqual([1n]);
    expect(h.events.telemetry).toHaveLength(1);
    expect(Buffer.from(h.events.telemetry[0]!.batch).equals(Buffer.from(big))).toBe(true);
    expect(readPath()).toBe('fast');
  });

  it('ends a stream whose message header declares more than 4 MiB with RESOURCE_EXHAUSTED (8), delivering nothing after it', async () => {
    const cred = h.robot();
    const c = await connect();
    await online(c, cred);
    const first = batch(2, 1);
    const t = call(c, PUBLISH_TELEMETRY_PATH, cred);
    const res = response(t);
    // Only the header and a few bytes of the too-large message: its declared length alone decides.
    const tooLarge = frame(Uint8Array.from({ length: 64 }, (_, i) => i), 0, MAX_ROBOT_MESSAGE_BYTES + 1);
    await writeSplit(t, Buffer.concat([frame(first), tooLarge, frame(batch(1, 99))]), [2, 5 + first.length + 3]);
    t.end();
    const { headers, trailers, receipts } = await res;
    expect(headers[':status']).toBe(200);
    expect(trailers['grpc-status']).toBe('8');
    expect(decodeURIComponent(String(trailers['grpc-message']))).toContain('larger than max');
    expect(receipts).toEqual([]);
    expect(received()).toEqual([hex(first)]);
    expect(readPath()).toBe('fast');
  });

  it('ends a stream with a compressed-flag message but no grpc-encoding with INTERNAL (13)', async () => {
    const cred = h.robot();
    const c = await connect();
    await online(c, cred);
    const first = batch(1, 1);
    const t = call(c, PUBLISH_TELEMETRY_PATH, cred);
    const res = response(t);
    await writeSplit(t, Buffer.concat([frame(first), frame(batch(1, 2), 1), frame(batch(1, 3))]), [5 + first.length + 1]);
    t.end();
    const { trailers, receipts } = await res;
    expect(trailers['grpc-status']).toBe('13');
    expect(receipts).toEqual([]);
    expect(received()).toEqual([hex(first)]);
    expect(readPath()).toBe('fast');
  });

  it('ends a stream that the robot closes inside a message (mid-body, then mid-header) with INTERNAL (13)', async () => {
    const cred = h.robot();
    const c = await connect();
    await online(c, cred);
    const whole = batch(2, 1);
    const cut = frame(batch(50, 10));

    const midBody = call(c, PUBLISH_TELEMETRY_PATH, cred);
    const res1 = response(midBody);
    await writeSplit(midBody, Buffer.concat([frame(whole), cut.subarray(0, 5 + 20)]), [5 + whole.length + 2]);
    midBody.end();
    const r1 = await res1;
    expect(r1.trailers['grpc-status']).toBe('13');
    expect(r1.receipts).toEqual([]);
    expect(received()).toEqual([hex(whole)]);

    const midHeader = call(c, PUBLISH_TELEMETRY_PATH, cred);
    const res2 = response(midHeader);
    await writeSplit(midHeader, Buffer.concat([frame(whole), cut.subarray(0, 3)]), []);
    midHeader.end();
    const r2 = await res2;
    expect(r2.trailers['grpc-status']).toBe('13');
    expect(r2.receipts).toEqual([]);
    expect(received()).toEqual([hex(whole), hex(whole)]);
    expect([readPath(0), readPath(1)]).toEqual(['fast', 'fast']);
  });

  it('still reads a gzip-compressed stream (grpc-encoding: gzip), through grpc-js: batches decompressed, in order, with a receipt', async () => {
    const cred = h.robot();
    const c = await connect();
    await online(c, cred);
    const bodies = [batch(3, 1), batch(4000, 100), batch(1, 9000)];
    // A compressed stream may still send a message uncompressed (flag 0): the middle one.
    const framed = bodies.map((b, i) => (i === 1 ? frame(b) : frame(gzipSync(b), 1)));
    const sent = Buffer.concat(framed);
    const t = call(c, PUBLISH_TELEMETRY_PATH, cred, { 'grpc-encoding': 'gzip', 'grpc-accept-encoding': 'identity,gzip' });
    const res = response(t);
    const first = framed[0]!.length;
    await writeSplit(t, sent, [1, 3, 7, first + 2, first + 5 + 1000, first + framed[1]!.length + 4]);
    t.end();
    const { trailers, receipts } = await res;
    expect(trailers['grpc-status']).toBe('0');
    expect(receipts.map((r) => r.batches)).toEqual([3n]);
    expect(received()).toEqual(bodies.map(hex));
    // Not the fast path: grpc-js decompressed, the hand-written reader saw nothing.
    expect(readPath()).toBe('compressed');
    expect(push).not.toHaveBeenCalled();
  });
});
