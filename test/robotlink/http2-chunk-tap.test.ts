/**
 * The HTTP/2 chunk tap (http2-chunk-tap.ts) on a real node:http2 server and client: every byte the
 * client writes arrives once and in order, through the shadowed `push` (not 'data'), pausing holds the
 * robot to its stream window, and the end waits for chunks held while paused.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { tapChunks, type ChunkTap } from '../../src/robotlink/http2-chunk-tap.js';
import { waitFor } from './support.js';

interface Served {
  tap: ChunkTap;
  got: Buffer[];
  events: string[];
  client: http2.ClientHttp2Stream;
  stream: http2.ServerHttp2Stream;
}

/**
 * What the server side has received but not read, shown by its stream window (bytes the client may
 * still send): what a check that a paused tap hands nothing over waits for, instead of a time.
 */
const windowLeft = (stream: http2.ServerHttp2Stream): number => stream.state.localWindowSize ?? 0;
/** The server side got the client's END_STREAM (or its reset closed the stream). */
const remoteClosed = (stream: http2.ServerHttp2Stream): boolean => stream.state.remoteClose === 1 || stream.closed;
/** One turn of the event loop: the tap hands held chunks over from a setImmediate. */
const turn = (): Promise<void> => new Promise((r) => setImmediate(r));

const closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers.splice(0)) c();
});

/** A request stream: its server side, paused as telemetry-frames.ts hands it over, and its client side. */
async function open(): Promise<{ stream: http2.ServerHttp2Stream; client: http2.ClientHttp2Stream }> {
  const server = http2.createServer();
  const accepted = new Promise<http2.ServerHttp2Stream>((resolve) => {
    server.on('stream', (stream) => {
      stream.pause();
      resolve(stream);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  closers.push(() => {
    session.destroy();
    server.close();
  });
  const client = session.request({ ':method': 'POST', ':path': '/' }, { endStream: false });
  client.on('error', () => {});
  client.resume();
  return { stream: await accepted, client };
}

/** Taps a stream, recording what it hands over; `onChunk` runs after each chunk is recorded. */
function tap(stream: http2.ServerHttp2Stream, onChunk: (chunk: Buffer) => void = () => {}): Omit<Served, 'client' | 'stream'> {
  const got: Buffer[] = [];
  const events: string[] = [];
  const t = tapChunks(stream, (chunk) => {
    got.push(chunk);
    events.push('chunk');
    onChunk(chunk);
  }, () => {
    events.push('end');
    stream.respond({ ':status': 200 }, { endStream: true });
  });
  return { tap: t, got, events };
}

/** One request stream whose server side is read by a tap from the start. */
async function serve(): Promise<Served> {
  const { stream, client } = await open();
  return { ...tap(stream), client, stream };
}

/** Distinct bytes, so order and duplication both show in a comparison. */
function payload(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

function write(s: http2.ClientHttp2Stream, b: Buffer): Promise<void> {
  return new Promise((resolve, reject) => s.write(b, (e) => (e ? reject(e) : resolve())));
}

describe('HTTP/2 chunk tap', () => {
  it('hands every chunk over once and in order, through push, then the end', async () => {
    const s = await serve();
    const sent: Buffer[] = [];
    for (let i = 0; i < 50; i++) {
      const b = payload(100 + i, i);
      sent.push(b);
      await write(s.client, b);
    }
    s.client.end();
    await waitFor(() => s.events.includes('end'), 'end');
    expect(Buffer.concat(s.got).equals(Buffer.concat(sent))).toBe(true);
    expect(s.events.at(-1)).toBe('end');
    expect(s.events.filter((e) => e === 'end')).toHaveLength(1);
    // Every chunk came the fast way: none through Readable's 'data'.
    expect(s.tap.direct).toBe(s.got.length);
  });

  it('holds the robot to its stream window while paused, then delivers what it held, in order', async () => {
    const s = await serve();
    await write(s.client, payload(10, 1));
    await waitFor(() => s.got.length === 1, 'first chunk');
    s.tap.pause();
    const big = payload(1024 * 1024, 7);
    let written = false;
    s.client.write(big, () => (written = true));
    await waitFor(() => windowLeft(s.stream) === 0, 'the stream window used up');
    // Nothing handed over while paused, and the 1 MiB write cannot finish: the stream window holds it.
    expect(s.got).toHaveLength(1);
    expect(written).toBe(false);
    s.tap.resume();
    await waitFor(() => written, '1 MiB written after resume');
    s.client.end();
    await waitFor(() => s.events.includes('end'), 'end');
    expect(Buffer.concat(s.got).equals(Buffer.concat([payload(10, 1), big]))).toBe(true);
  });

  it('reports the end after the chunks held while paused, not before', async () => {
    const s = await serve();
    await write(s.client, payload(10, 2));
    await waitFor(() => s.got.length === 1, 'first chunk');
    s.tap.pause();
    const tail = payload(4000, 3);
    s.client.end(tail);
    await waitFor(() => remoteClosed(s.stream), 'the whole request, end included, at the server');
    await turn();
    expect(s.events).toEqual(['chunk']);
    s.tap.resume();
    await waitFor(() => s.events.includes('end'), 'end');
    expect(s.events.at(-1)).toBe('end');
    expect(Buffer.concat(s.got).equals(Buffer.concat([payload(10, 2), tail]))).toBe(true);
  });

  it('after close, hands nothing over and reads on, so a paused robot is not held', async () => {
    const s = await serve();
    s.tap.pause();
    let written = false;
    s.client.write(payload(1024 * 1024, 9), () => (written = true));
    await waitFor(() => windowLeft(s.stream) === 0, 'the stream window used up');
    expect(written).toBe(false);
    s.tap.close();
    await waitFor(() => written, 'write drained after close');
    s.client.end();
    // Read to its end (close reads on): whatever it would hand over has gone by then.
    await waitFor(() => s.stream.readableEnded, 'the stream read to its end');
    expect(s.got).toHaveLength(0);
    expect(s.events).toEqual([]);
  });

  it('hands what Readable buffered before the tap over first, even when paused at once', async () => {
    const { stream, client } = await open();
    const early = payload(300, 4);
    await write(client, early);
    await waitFor(() => stream.readableLength > 0, 'bytes buffered by Readable before the tap');
    const s = tap(stream);
    s.tap.pause();
    const late = payload(500, 5);
    const before = windowLeft(stream);
    await write(client, late);
    await waitFor(() => before - windowLeft(stream) >= late.length, 'the late bytes at the server');
    await turn();
    expect(s.got).toHaveLength(0);
    s.tap.resume();
    client.end();
    await waitFor(() => s.events.includes('end'), 'end');
    expect(Buffer.concat(s.got).equals(Buffer.concat([early, late]))).toBe(true);
  });

  it('hands held chunks over after resume returns, and stops again when a handler pauses', async () => {
    const { stream, client } = await open();
    let pauseAt = 2;
    const s = tap(stream, () => {
      if (--pauseAt === 0) s.tap.pause();
    });
    s.tap.pause();
    const parts = [payload(100, 1), payload(100, 2), payload(100, 3)];
    const before = windowLeft(stream);
    for (const b of parts) await write(client, b);
    await waitFor(() => before - windowLeft(stream) >= 300, 'the three parts at the server');
    s.tap.resume();
    // Never from inside resume(): the caller may be resuming every robot.
    expect(s.got).toHaveLength(0);
    await waitFor(() => s.got.length > 0, 'held chunks handed over');
    // The tap hands held chunks over in one loop, which ends where the handler paused.
    const first = Buffer.concat(s.got);
    // The handler paused after 200 bytes: the rest is still held.
    expect(first.length).toBeGreaterThanOrEqual(200);
    expect(first.length).toBeLessThan(300);
    s.tap.resume();
    client.end();
    await waitFor(() => s.events.includes('end'), 'end');
    expect(Buffer.concat(s.got).equals(Buffer.concat(parts))).toBe(true);
  });

  it('hands nothing over once closed, though chunks were held when the robot reset the stream', async () => {
    const s = await serve();
    s.tap.pause();
    const before = windowLeft(s.stream);
    await write(s.client, payload(1000, 6));
    await waitFor(() => before - windowLeft(s.stream) >= 1000, 'the chunk held at the server');
    s.client.close(http2.constants.NGHTTP2_CANCEL);
    await waitFor(() => s.stream.closed, 'the reset at the server');
    s.tap.close();
    s.tap.resume();
    await turn();
    await turn();
    expect(s.got).toHaveLength(0);
    expect(s.events).toEqual([]);
  });

  it('a stream that ended before the tap: its chunks first, then the end', async () => {
    const { stream, client } = await open();
    const all = payload(700, 8);
    client.end(all);
    await waitFor(() => stream.readableLength === all.length && remoteClosed(stream), 'the whole stream, end included, buffered');
    const s = tap(stream);
    await waitFor(() => s.events.includes('end'), 'end');
    expect(s.events).toEqual(['chunk', 'end']);
    expect(Buffer.concat(s.got).equals(all)).toBe(true);
  });
});
