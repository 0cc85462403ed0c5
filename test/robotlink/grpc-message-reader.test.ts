/**
 * The telemetry fast path's gRPC framing reader (grpc-message-reader.ts), alone: whatever way the
 * HTTP/2 DATA chunks split the length-prefixed messages, it hands over exactly the messages sent, in
 * order; it bounds their size as grpc-js does and refuses compressed messages, stickily.
 */
import { describe, expect, it } from 'vitest';
import { GrpcMessageReader, REUSED_ASSEMBLY_BYTES, type GrpcFramingError } from '../../src/robotlink/grpc-message-reader.js';
import { MAX_ROBOT_MESSAGE_BYTES } from '../../src/robotlink/limits.js';
import { prng } from '../support/prng.js';


/** A gRPC length-prefixed message: flag, 4-byte big-endian length, body. */
function frame(body: Uint8Array, flag = 0): Uint8Array {
  return header(body.length, flag, body);
}

/** A header declaring `length` (any 32-bit value), followed by `body` (which may be shorter). */
function header(length: number, flag = 0, body: Uint8Array = new Uint8Array(0)): Uint8Array {
  const out = new Uint8Array(5 + body.length);
  out[0] = flag;
  new DataView(out.buffer).setUint32(1, length >>> 0, false);
  out.set(body, 5);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A message body whose every byte depends on the message and the position, so mix-ups show. */
function body(size: number, tag: number): Uint8Array {
  const rand = prng(0x5eed + tag * 7919 + size);
  return Uint8Array.from({ length: size }, () => Math.floor(rand() * 256));
}

const SIZES = [0, 1, 5, 1000, 70_000];
const MESSAGES = SIZES.map((size, i) => body(size, i));
const STREAM = concat(MESSAGES.map((m) => frame(m)));
/** Offset in STREAM where each message's header starts, and the stream's end. */
const STARTS = MESSAGES.reduce<number[]>((acc, m) => [...acc, acc[acc.length - 1]! + 5 + m.length], [0]);
/** Offsets between messages: the only places where the reader is at a boundary. */
const BOUNDARIES = new Set(STARTS);

/**
 * Cuts `bytes` at `cuts` (sorted, unique, inside) into separately allocated chunks, as Node hands
 * over HTTP/2 DATA: each chunk its own ArrayBuffer.
 */
function split(bytes: Uint8Array, cuts: number[]): Uint8Array[] {
  const points = [0, ...cuts, bytes.length];
  const chunks: Uint8Array[] = [];
  for (let i = 0; i + 1 < points.length; i++) chunks.push(bytes.slice(points[i], points[i + 1]));
  return chunks;
}

interface Fed {
  /** Copies of the delivered messages, taken during each call. */
  messages: Uint8Array[];
  /** The messages as handed over (views: valid only during their call; for buffer and offset checks). */
  handed: Uint8Array[];
  /** For each chunk, the reader's atBoundary after it was pushed. */
  boundaryAfter: boolean[];
  errors: (GrpcFramingError | null)[];
}

/**
 * Pushes every chunk into a new reader; keeps a copy of each delivered message, taken during the
 * call, as every receiver must (a split message's bytes are reused for the next one).
 */
function feed(chunks: Uint8Array[], max = MAX_ROBOT_MESSAGE_BYTES): Fed & { reader: GrpcMessageReader } {
  const messages: Uint8Array[] = [];
  const handed: Uint8Array[] = [];
  const reader = new GrpcMessageReader(max, (m) => {
    messages.push(m.slice());
    handed.push(m);
  });
  const boundaryAfter: boolean[] = [];
  const errors: (GrpcFramingError | null)[] = [];
  for (const chunk of chunks) {
    errors.push(reader.push(chunk));
    boundaryAfter.push(reader.atBoundary);
  }
  return { reader, messages, handed, boundaryAfter, errors };
}

/** Feeds STREAM cut at `cuts` and checks messages, errors and atBoundary after every chunk. */
function expectClean(cuts: number[]): Fed & { chunks: Uint8Array[] } {
  const chunks = split(STREAM, cuts);
  const fed = feed(chunks);
  expect(fed.errors.every((e) => e === null)).toBe(true);
  expect(fed.messages.length).toBe(MESSAGES.length);
  // Byte for byte and in order.
  fed.messages.forEach((m, i) => expect(Buffer.from(m).equals(Buffer.from(MESSAGES[i]!)), `message ${i} (${SIZES[i]} bytes)`).toBe(true));
  // atBoundary after each chunk: true exactly when the chunk ended between two messages.
  const wrong: string[] = [];
  let at = 0;
  chunks.forEach((c, i) => {
    at += c.length;
    if (fed.boundaryAfter[i] !== BOUNDARIES.has(at)) wrong.push(`after byte ${at}: ${fed.boundaryAfter[i]}`);
  });
  expect(wrong).toEqual([]);
  return { ...fed, chunks };
}

describe('GrpcMessageReader: framing across arbitrary chunk splits', () => {
  it('reads messages of 0, 1, 5, 1000 and 70000 bytes sent in one chunk, each as a view of that chunk', () => {
    const { handed, chunks: [chunk] } = expectClean([]);
    // Views pointing where each body starts in the chunk.
    handed.forEach((m, i) => {
      expect(m.buffer).toBe(chunk!.buffer);
      expect(m.byteOffset).toBe(chunk!.byteOffset + STARTS[i]! + 5);
      expect(m.byteLength).toBe(SIZES[i]);
    });
  });

  it('reads the stream fed one byte at a time (atBoundary only between messages)', () => {
    const cuts = Array.from({ length: STREAM.length - 1 }, (_, i) => i + 1);
    const fed = expectClean(cuts);
    // Every message but the empty one spans chunks, so it is assembled: up to REUSED_ASSEMBLY_BYTES in
    // the reader's reused buffer (grown to the largest so far, at least 4 KiB), larger in one of its own size.
    fed.handed.forEach((m, i) => {
      if (SIZES[i] === 0) return;
      expect(m.byteOffset).toBe(0);
      expect(m.buffer.byteLength).toBe(SIZES[i]! > REUSED_ASSEMBLY_BYTES ? SIZES[i] : Math.max(4096, SIZES[i]!));
    });
  });

  it('reads the stream split at random points (seeded, 600 splittings from 1 to 400 cuts)', () => {
    const rand = prng(20260611);
    for (let iter = 0; iter < 600; iter++) {
      // Mostly few cuts (long chunks, views and partials mixed), sometimes many (tiny chunks).
      const n = iter % 10 === 0 ? 1 + Math.floor(rand() * 400) : 1 + Math.floor(rand() * 12);
      const cuts = new Set<number>();
      // Bias half the cuts to the small messages and the headers, where the state machine turns.
      while (cuts.size < n) {
        const near = rand() < 0.5;
        const at = near ? 1 + Math.floor(rand() * (STARTS[4]! + 10)) : 1 + Math.floor(rand() * (STREAM.length - 1));
        cuts.add(at);
      }
      expectClean([...cuts].sort((a, b) => a - b));
    }
  });

  it('reads a header split across two chunks at every offset 1..4, and across three, for every message', () => {
    for (let m = 0; m < MESSAGES.length; m++) {
      const start = STARTS[m]!;
      for (let o = 1; o <= 4; o++) {
        const fed = expectClean([start + o]);
        // The header was split, not the body: a message whose body is whole in the second chunk is a view of it.
        if (SIZES[m]! > 0) expect(fed.handed[m]!.byteOffset).toBe(5 - o);
        for (let o2 = o + 1; o2 <= 4; o2++) expectClean([start + o, start + o2]);
      }
      // The header ends exactly at a chunk end (the body starts the next chunk), and the header alone in a chunk.
      expectClean([start + 5]);
      if (start > 0) expectClean([start, start + 5]);
    }
  });

  it('reads several whole messages and the start of another from one chunk, then the rest', () => {
    // Chunk 1: messages 0-3 whole and 3 bytes of message 4's header; chunk 2: the rest of the header
    // and half its body; chunk 3: the rest.
    const cuts = [STARTS[4]! + 3, STARTS[4]! + 5 + 35_000];
    const { chunks, ...fed } = expectClean(cuts);
    for (let i = 0; i < 4; i++) {
      expect(fed.handed[i]!.buffer, `message ${i} is a view of the first chunk`).toBe(chunks[0]!.buffer);
    }
    expect(fed.handed[4]!.buffer).not.toBe(chunks[1]!.buffer);
    expect(fed.handed[4]!.buffer).not.toBe(chunks[2]!.buffer);
  });

  it('assembles split messages of the same size in one reused buffer, each exact during its call', () => {
    const same = Array.from({ length: 6 }, (_, i) => body(300, 100 + i));
    const stream = concat(same.map((m) => frame(m)));
    const cuts = Array.from({ length: Math.floor((stream.length - 1) / 7) }, (_, i) => (i + 1) * 7);
    const fed = feed(split(stream, cuts));
    expect(fed.errors.every((e) => e === null)).toBe(true);
    expect(fed.messages.map((m) => Buffer.from(m).toString('hex'))).toEqual(same.map((m) => Buffer.from(m).toString('hex')));
    expect(new Set(fed.handed.map((m) => m.buffer)).size).toBe(1);
  });

  it('ignores empty chunks, wherever they come', () => {
    const chunks = split(STREAM, [2, STARTS[3]! + 3, STARTS[3]! + 400]);
    const withEmpty = chunks.flatMap((c) => [new Uint8Array(0), c, new Uint8Array(0)]);
    const fed = feed(withEmpty);
    expect(fed.errors.every((e) => e === null)).toBe(true);
    expect(fed.messages.map((m) => Buffer.from(m).toString('hex'))).toEqual(MESSAGES.map((m) => Buffer.from(m).toString('hex')));
  });
});

describe('GrpcMessageReader: atBoundary', () => {
  it('is true before anything and between messages, false mid-header and mid-body', () => {
    const r = new GrpcMessageReader(100, () => {});
    expect(r.atBoundary).toBe(true);
    const f = frame(Uint8Array.from([1, 2, 3, 4]));
    r.push(f.subarray(0, 1));
    expect(r.atBoundary).toBe(false); // 1 header byte
    r.push(f.subarray(1, 4));
    expect(r.atBoundary).toBe(false); // 4 header bytes
    r.push(f.subarray(4, 5));
    expect(r.atBoundary).toBe(false); // whole header, no body yet
    r.push(f.subarray(5, 7));
    expect(r.atBoundary).toBe(false); // half the body
    r.push(f.subarray(7));
    expect(r.atBoundary).toBe(true);
    // A whole header read in place and part of the body: mid-body.
    r.push(f.subarray(0, 6));
    expect(r.atBoundary).toBe(false);
    r.push(f.subarray(6));
    expect(r.atBoundary).toBe(true);
    // An empty message is complete with its header.
    r.push(frame(new Uint8Array(0)));
    expect(r.atBoundary).toBe(true);
  });
});

describe('GrpcMessageReader: size limit and compressed flag', () => {
  it('accepts a message of exactly the maximum, whole and split', () => {
    const max = MAX_ROBOT_MESSAGE_BYTES;
    const big = body(max, 99);
    const framed = frame(big);
    for (const cuts of [[], [3], [5 + 1], [5 + max / 2, 5 + max - 1]]) {
      const fed = feed(split(framed, cuts), max);
      expect(fed.errors.every((e) => e === null)).toBe(true);
      expect(fed.messages).toHaveLength(1);
      expect(Buffer.from(fed.messages[0]!).equals(Buffer.from(big))).toBe(true);
      expect(fed.reader.atBoundary).toBe(true);
    }
  });

  it('refuses max + 1 (RESOURCE_EXHAUSTED) as soon as the header declares it, delivers nothing after it, and stays failed', () => {
    const max = MAX_ROBOT_MESSAGE_BYTES;
    const before = body(10, 1);
    const after = body(10, 2);
    // Only the header and a few bytes of the too-large message are sent: the length alone decides.
    const chunk = concat([frame(before), header(max + 1, 0, body(20, 3)), frame(after)]);
    const fed = feed([chunk]);
    expect(fed.errors[0]).toEqual({ code: 'RESOURCE_EXHAUSTED', details: expect.stringContaining(String(max + 1)) });
    expect(fed.messages.map((m) => Buffer.from(m).toString('hex'))).toEqual([Buffer.from(before).toString('hex')]);
    // Sticky: a later valid message is neither read nor delivered, and the same error comes back.
    const again = fed.reader.push(frame(after));
    expect(again).toEqual(fed.errors[0]);
    expect(fed.reader.push(new Uint8Array(0))).toEqual(fed.errors[0]);
    expect(fed.messages).toHaveLength(1);
  });

  it('refuses a too-large length whose header is split across chunks, on the chunk that completes it', () => {
    const max = 1000;
    const h = header(max + 1);
    for (let o = 1; o <= 4; o++) {
      const fed = feed([h.subarray(0, o), concat([h.subarray(o), frame(body(3, 4))])], max);
      expect(fed.errors[0]).toBeNull();
      expect(fed.errors[1]?.code).toBe('RESOURCE_EXHAUSTED');
      expect(fed.messages).toHaveLength(0);
    }
  });

  it('reads the length as unsigned 32-bit: 2^31 and 2^32 - 1 are too large, not negative', () => {
    for (const length of [0x8000_0000, 0xffff_ffff, 0xff00_0000]) {
      const whole = feed([concat([header(length), frame(body(4, 5))])]);
      expect(whole.errors[0]?.code, `length ${length}`).toBe('RESOURCE_EXHAUSTED');
      expect(whole.errors[0]?.details).toContain(String(length));
      expect(whole.messages).toHaveLength(0);
      // The same, with the header assembled across chunks.
      for (let o = 1; o <= 4; o++) {
        const h = header(length);
        const fed = feed([h.subarray(0, o), concat([h.subarray(o), frame(body(4, 5))])]);
        expect(fed.errors[1]?.code, `length ${length}, header split at ${o}`).toBe('RESOURCE_EXHAUSTED');
        expect(fed.errors[1]?.details).toContain(String(length));
        expect(fed.messages).toHaveLength(0);
      }
    }
    // And a length with bits in every byte is read in full: 0x00_01_02_03 = 66051 bytes.
    const exact = body(0x00_01_02_03, 6);
    const fed = feed(split(frame(exact), [2, 7]));
    expect(fed.messages).toHaveLength(1);
    expect(fed.messages[0]!.length).toBe(66051);
    expect(Buffer.from(fed.messages[0]!).equals(Buffer.from(exact))).toBe(true);
  });

  it('refuses a message with the compressed flag (INTERNAL), after delivering the messages before it, and stays failed', () => {
    const before = body(7, 7);
    const fed = feed([concat([frame(before), frame(body(8, 8), 1), frame(body(9, 9))])]);
    expect(fed.errors[0]).toEqual({ code: 'INTERNAL', details: expect.any(String) });
    expect(fed.messages.map((m) => Buffer.from(m).toString('hex'))).toEqual([Buffer.from(before).toString('hex')]);
    expect(fed.reader.push(frame(body(3, 10)))).toEqual(fed.errors[0]);
    expect(fed.messages).toHaveLength(1);
  });

  it('refuses the compressed flag when the header is split, and for an empty message', () => {
    for (let o = 1; o <= 4; o++) {
      const f = frame(body(12, 11), 1);
      const fed = feed([f.subarray(0, o), f.subarray(o)]);
      expect(fed.errors).toEqual([null, { code: 'INTERNAL', details: expect.any(String) }]);
      expect(fed.messages).toHaveLength(0);
    }
    const fed = feed([frame(new Uint8Array(0), 1)]);
    expect(fed.errors[0]?.code).toBe('INTERNAL');
    expect(fed.messages).toHaveLength(0);
  });
});

describe('GrpcMessageReader: what a split message holds, and close()', () => {
  it.each([3000, REUSED_ASSEMBLY_BYTES + 1])('holds copies of the bytes received, not the chunks: a chunk changed after push does not change a %i-byte message', (size) => {
    const m = body(size, 21);
    const f = frame(m);
    const first = f.slice(0, 1000);
    const messages: Uint8Array[] = [];
    const reader = new GrpcMessageReader(MAX_ROBOT_MESSAGE_BYTES, (x) => messages.push(x.slice()));
    expect(reader.push(first)).toBeNull();
    first.fill(0xee); // a reused or changed buffer must not reach the message
    expect(reader.push(f.slice(1000))).toBeNull();
    expect(messages).toHaveLength(1);
    expect(Buffer.from(messages[0]!).equals(Buffer.from(m))).toBe(true);
  });

  it('assembles split messages up to REUSED_ASSEMBLY_BYTES in one reused buffer, larger ones apart; each exact during its call', () => {
    const small = [body(REUSED_ASSEMBLY_BYTES, 31), body(12_000, 32), body(3000, 33)];
    const large = body(REUSED_ASSEMBLY_BYTES + 1, 34);
    const seen: { buffer: ArrayBufferLike; exact: boolean }[] = [];
    const expected = [...small, large, small[0]!];
    const reader = new GrpcMessageReader(MAX_ROBOT_MESSAGE_BYTES, (x) => {
      seen.push({ buffer: x.buffer, exact: Buffer.from(x).equals(Buffer.from(expected[seen.length]!)) });
    });
    // Each message split in two chunks of its own (fresh buffers, as Node hands them over).
    for (const m of expected) {
      const f = frame(m);
      expect(reader.push(f.slice(0, 700))).toBeNull();
      expect(reader.push(f.slice(700))).toBeNull();
    }
    expect(seen.map((s) => s.exact)).toEqual([true, true, true, true, true]);
    // The three small ones (largest first, so the buffer never grows here) and the last share one buffer; the large one has its own.
    expect(new Set([seen[0]!.buffer, seen[1]!.buffer, seen[2]!.buffer, seen[4]!.buffer]).size).toBe(1);
    expect(seen[3]!.buffer).not.toBe(seen[0]!.buffer);
  });

  it('grows the reused buffer for a larger split message, never past REUSED_ASSEMBLY_BYTES, each message exact during its call', () => {
    const sizes = [300, 12_000, REUSED_ASSEMBLY_BYTES, 12_000, REUSED_ASSEMBLY_BYTES + 10, REUSED_ASSEMBLY_BYTES + 10];
    const expected = sizes.map((n, i) => body(n, 40 + i));
    const seen: { buffer: ArrayBufferLike; size: number; exact: boolean }[] = [];
    const reader = new GrpcMessageReader(MAX_ROBOT_MESSAGE_BYTES, (x) => {
      seen.push({ buffer: x.buffer, size: x.buffer.byteLength, exact: Buffer.from(x).equals(Buffer.from(expected[seen.length]!)) });
    });
    for (const m of expected) {
      const f = frame(m);
      expect(reader.push(f.slice(0, 100))).toBeNull();
      expect(reader.push(f.slice(100))).toBeNull();
    }
    expect(seen.map((x) => x.exact)).toEqual(sizes.map(() => true));
    // 4 KiB at first, then as large as needed (doubling), capped at REUSED_ASSEMBLY_BYTES; reused once large enough.
    expect(seen.slice(0, 4).map((x) => x.size)).toEqual([4096, 12_000, REUSED_ASSEMBLY_BYTES, REUSED_ASSEMBLY_BYTES]);
    expect(seen[3]!.buffer).toBe(seen[2]!.buffer);
    // Larger split messages: a buffer of their own each, never the reused one.
    expect(seen[4]!.buffer).not.toBe(seen[5]!.buffer);
    expect(seen[4]!.buffer).not.toBe(seen[2]!.buffer);
    expect(seen[4]!.size).toBe(REUSED_ASSEMBLY_BYTES + 10);
  });

  it('close() in the middle of a split message of up to REUSED_ASSEMBLY_BYTES drops it; close() from inside onMessage stops the chunk there', () => {
    const messages: Uint8Array[] = [];
    const reader = new GrpcMessageReader(MAX_ROBOT_MESSAGE_BYTES, (x) => messages.push(x.slice()));
    const f = frame(body(5000, 50));
    expect(reader.push(f.slice(0, 2000))).toBeNull();
    reader.close();
    expect(reader.atBoundary).toBe(true);
    expect(reader.push(f.slice(2000))?.code).toBe('INTERNAL');
    expect(messages).toHaveLength(0);

    // The receiver ends the stream at the first message: the second one in the same chunk is not read.
    const got: number[] = [];
    const r2: GrpcMessageReader = new GrpcMessageReader(MAX_ROBOT_MESSAGE_BYTES, (x) => {
      got.push(x.length);
      r2.close();
    });
    expect(r2.push(concat([frame(body(10, 51)), frame(body(20, 52))]))?.code).toBe('INTERNAL');
    expect(got).toEqual([10]);
    // The same when the first message completes a split one.
    const got3: number[] = [];
    const r3: GrpcMessageReader = new GrpcMessageReader(MAX_ROBOT_MESSAGE_BYTES, (x) => {
      got3.push(x.length);
      r3.close();
    });
    const two = concat([frame(body(3000, 53)), frame(body(20, 54))]);
    expect(r3.push(two.slice(0, 1000))).toBeNull();
    expect(r3.push(two.slice(1000))?.code).toBe('INTERNAL');
    expect(got3).toEqual([3000]);
  });

  it('close() drops a partly received message and refuses later chunks', () => {
    const messages: Uint8Array[] = [];
    const reader = new GrpcMessageReader(MAX_ROBOT_MESSAGE_BYTES, (x) => messages.push(x));
    // A header that declares the maximum, then a few bytes: nothing delivered, not at a boundary.
    expect(reader.push(header(MAX_ROBOT_MESSAGE_BYTES, 0, new Uint8Array(10)))).toBeNull();
    expect(reader.atBoundary).toBe(false);
    reader.close();
    expect(reader.atBoundary).toBe(true);
    expect(reader.push(frame(body(5, 22)))?.code).toBe('INTERNAL');
    expect(messages).toHaveLength(0);
  });
});
