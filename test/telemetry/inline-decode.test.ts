/**
 * Small batches decoded on the main thread (src/telemetry/ingest/inline-decode.ts): the answer is the one a
 * decode worker gives for the same frames, only age-cut batches under the bound are decoded there, and
 * the ingest applies an inline result in posting order behind a task still in the pool.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { openStore } from '../../src/store/lmdb.js';
import { decodeTask } from '../../src/telemetry/decode/decode-worker.js';
import { FramePacker } from '../../src/telemetry/decode/frame-packer.js';
import { createTelemetryIngest } from '../../src/telemetry/ingest/ingest.js';
import { InlineDecode } from '../../src/telemetry/ingest/inline-decode.js';
import { RowArena } from '../../src/telemetry/store/row-arena.js';
import { TaskSlots } from '../../src/telemetry/decode/task-slots.js';
import type { DecodeResult, FoxgloveBatch } from '../../src/telemetry/decode/worker-protocol.js';
import { captureLog } from '../support/capture-log.js';
import { CORRUPT_FRAME, encodeBatch, encodeSamples, sample, tempDir, until } from './helpers.js';

const quietLog = captureLog([]);
const T0 = 1_800_000_000_000;

/** Fills a packer with the same frames every time: three robots, a corrupt frame, several samples each. */
function fill(packer: FramePacker): void {
  packer.add('r1', 'f1', encodeSamples([sample(T0, 1), sample(T0 + 10, 2)]), 5);
  packer.add('r2', 'f1', encodeBatch(T0, 4), 6);
  packer.add('r3', 'f2', CORRUPT_FRAME, 7);
  packer.add('r1', 'f1', encodeSamples([sample(T0 + 20, 3)]), 8);
}

/** What the ingest reads of a result: rows (from the slot when they are there), snapshots, counts, errors. */
function readable(r: DecodeResult, slots: TaskSlots | null, slot: number): Record<string, unknown> {
  const rows = r.rowsInSlot !== undefined ? slots!.rows(slot, r.rowsInSlot) : r.rows;
  return {
    rows: Buffer.from(rows).toString('hex'), rowCount: r.rowCount, snapshots: [...r.snapshots], snapshotTs: [...r.snapshotTs],
    frames: r.frames, corruptFrames: r.corruptFrames, errors: r.errors,
    foxglove: r.foxglove ? { data: Buffer.from(r.foxglove.data).toString('hex'), index: [...r.foxglove.index] } : null,
  };
}

/** A batch with `sequenced` framing: seq and epoch first, as the agent writes them. */
function sequenced(seq: number, epoch: number, startTs: number, count: number): Uint8Array {
  return Uint8Array.from([0x10, seq, 0x18, epoch, ...encodeBatch(startTs, count)]);
}

describe('InlineDecode', () => {
  it('answers exactly as a decode worker does, for a batch in a shared slot and in a private buffer', () => {
    const foxglove = Uint8Array.from([7, 4, 0]); // r1: every kind, r2: status, r3: none
    const reference = new FramePacker();
    fill(reference);
    const worker = decodeTask({ live: null, ...reference.take(), foxglove });
    expect(worker.rowCount).toBe(7);
    expect(worker.corruptFrames).toBe(1);

    const slots = new TaskSlots(1, 64 * 1024, 192 * 1024);
    const inline = new InlineDecode(slots);
    const inSlot = new FramePacker(32 * 1024, slots);
    fill(inSlot);
    const slotBatch = inSlot.take();
    expect(slotBatch.slot).toBe(0);
    const fromSlot = inline.decode(slotBatch, foxglove);
    // Rows stay in the slot, as a worker leaves them: only their length comes back.
    expect(fromSlot.rowsInSlot).toBeGreaterThan(0);
    expect(fromSlot.rows.byteLength).toBe(0);
    expect(readable(fromSlot, slots, 0)).toEqual(readable(worker, null, -1));

    // No slot left: the packer falls back to a private buffer, handed back as `spare` for reuse.
    const priv = new FramePacker(32 * 1024, slots);
    fill(priv);
    const privBatch = priv.take();
    expect(privBatch.slot).toBe(-1);
    const fromPrivate = inline.decode(privBatch, foxglove);
    expect(fromPrivate.rowsInSlot).toBeUndefined();
    expect(fromPrivate.spare).toBe(privBatch.frames);
    expect(readable(fromPrivate, null, -1)).toEqual(readable(worker, null, -1));

    // With the ingest's row arena: the rows are written there in place and come back as its chunk.
    const arena = new RowArena({ bufferBytes: 64 * 1024 });
    const inArena = new FramePacker(32 * 1024, slots);
    fill(inArena);
    const arenaBatch = inArena.take();
    const fromArena = inline.decode(arenaBatch, foxglove, arena);
    expect(fromArena.rowsInSlot).toBeUndefined();
    expect(arena.buffers).toBe(1);
    expect(fromArena.rows.byteOffset).toBe(0);
    expect(readable(fromArena, null, -1)).toEqual(readable(worker, null, -1));
    expect(arena.copy(Uint8Array.of(1)).byteOffset).toBe(fromArena.rows.byteLength); // committed: the next rows follow
    // No room for them there (a buffer smaller than twice the frames): the slot's rows as before.
    const tiny = new RowArena({ bufferBytes: 16 });
    slots.release(0);
    fill(inArena);
    const slotAgain = inArena.take();
    const fromSlotAgain = inline.decode(slotAgain, foxglove, tiny);
    expect(fromSlotAgain.rowsInSlot).toBeGreaterThan(0);
    expect(tiny.buffers).toBe(0);
  });

  it('takes batches up to its byte bound only; 0 takes none; bad bounds are refused', () => {
    const slots = new TaskSlots(1, 1024, 1024);
    const packer = new FramePacker();
    packer.add('r1', 'f', encodeBatch(T0, 2), 1);
    const batch = packer.take();
    expect(new InlineDecode(slots, { maxBytes: batch.byteLength }).accepts(batch)).toBe(true);
    expect(new InlineDecode(slots, { maxBytes: batch.byteLength - 1 }).accepts(batch)).toBe(false);
    expect(new InlineDecode(slots, { maxBytes: 0 }).accepts(batch)).toBe(false);
    expect(() => new InlineDecode(slots, { maxBytes: -1 })).toThrow(/whole number of bytes/);
    expect(() => new InlineDecode(slots, { maxBytes: 1.5 })).toThrow(/whole number of bytes/);
    expect(() => new InlineDecode(slots, { budgetMs: 0 })).toThrow(/positive number of ms/);
  });

  it('keeps a decode within its time budget by the median cost per byte of the last five, probing again every 30 s', () => {
    const slots = new TaskSlots(1, 1024, 1024);
    const packer = new FramePacker();
    packer.add('r1', 'f', encodeBatch(T0, 2), 1);
    const batch = packer.take();
    let clock = 0;
    const times: number[] = []; // what now() returns next (a decode reads it at its start and end)
    const inline = new InlineDecode(slots, { budgetMs: 1, now: () => times.shift() ?? clock });
    const perByte = (ms: number): number => (ms * 1e6) / batch.byteLength;
    const decodeTaking = (ms: number): void => {
      times.push(clock, clock + ms);
      inline.decode(batch, null);
    };
    expect(inline.accepts(batch)).toBe(true);
    decodeTaking(0.2);
    decodeTaking(0.2);
    // One slow decode (a GC pause inside it) does not count...
    decodeTaking(5);
    expect(inline.estimateNsPerByte).toBeCloseTo(perByte(0.2));
    expect(inline.accepts(batch)).toBe(true);
    // ...a batch that keeps taking 1.5 ms does: the median goes over the budget and it is refused...
    decodeTaking(1.5);
    decodeTaking(1.5);
    expect(inline.estimateNsPerByte).toBeCloseTo(perByte(1.5));
    clock = 29_000;
    for (let i = 0; i < 1_000; i++) expect(inline.accepts(batch)).toBe(false);
    // ...until 30 s after the last decode here, when one is decoded again to measure.
    clock = 30_010;
    expect(inline.accepts(batch)).toBe(true);
    decodeTaking(0.3); // faster now, but the median of the last five (0.2, 5, 1.5, 1.5, 0.3) is still 1.5
    expect(inline.accepts(batch)).toBe(false);
    clock = 60_020;
    expect(inline.accepts(batch)).toBe(true);
    decodeTaking(0.3); // (5, 1.5, 1.5, 0.3, 0.3): still refused
    expect(inline.accepts(batch)).toBe(false);
    clock = 90_030;
    expect(inline.accepts(batch)).toBe(true);
    decodeTaking(0.3); // (1.5, 1.5, 0.3, 0.3, 0.3): fast again, accepted without waiting
    expect(inline.estimateNsPerByte).toBeCloseTo(perByte(0.3));
    expect(inline.accepts(batch)).toBe(true);
  });

  it('tells the ingest where to cut: what the budget allows at the learned cost, at most its byte bound', () => {
    const slots = new TaskSlots(1, 1024, 1024);
    const packer = new FramePacker();
    packer.add('r1', 'f', encodeBatch(T0, 2), 1);
    const batch = packer.take();
    const times: number[] = [];
    const inline = new InlineDecode(slots, { budgetMs: 1, maxBytes: 100_000, now: () => times.shift() ?? 0 });
    // Before any decode: the first estimate (addon 5 ns/B, JS reader 12) gives 200,000 or 83,333 bytes.
    expect(inline.cutBytes).toBe(Math.min(100_000, Math.floor(1e6 / inline.estimateNsPerByte)));
    for (let i = 0; i < 3; i++) {
      times.push(0, 0.5); // 0.5 ms for this batch
      inline.decode(batch, null);
    }
    const perByte = (0.5 * 1e6) / batch.byteLength;
    expect(inline.estimateNsPerByte).toBeCloseTo(perByte);
    expect(inline.cutBytes).toBe(Math.min(100_000, Math.floor(1e6 / perByte)));
    expect(Math.abs(inline.cutBytes - 2 * batch.byteLength)).toBeLessThanOrEqual(1); // twice the batch: half the budget
    expect(new InlineDecode(slots, { maxBytes: 0 }).cutBytes).toBe(Number.POSITIVE_INFINITY);
    expect(new InlineDecode(slots, { maxBytes: 300 }).cutBytes).toBe(300);
  });

  it('takes at most its share of each second of the event loop, then sends batches to the pool until the next second', () => {
    const slots = new TaskSlots(1, 1024, 1024);
    const packer = new FramePacker();
    packer.add('r1', 'f', encodeBatch(T0, 2), 1);
    const batch = packer.take();
    let clock = 1_000;
    const times: number[] = [];
    const inline = new InlineDecode(slots, { maxShare: 0.002, now: () => times.shift() ?? clock }); // 2 ms a second
    const decodeTaking = (ms: number): void => {
      times.push(clock, clock + ms);
      inline.decode(batch, null);
    };
    expect(inline.hasRoom()).toBe(true);
    decodeTaking(0.9);
    clock += 10;
    expect(inline.accepts(batch)).toBe(true);
    decodeTaking(0.9);
    clock += 10;
    expect(inline.accepts(batch)).toBe(true); // 1.8 of 2 ms used
    decodeTaking(0.9);
    clock += 10;
    expect(inline.hasRoom()).toBe(false); // 2.7 ms: the share is used up
    expect(inline.accepts(batch)).toBe(false);
    clock = 1_999;
    expect(inline.accepts(batch)).toBe(false);
    clock = 2_000; // a new second
    expect(inline.hasRoom()).toBe(true);
    expect(inline.accepts(batch)).toBe(true);
    expect(() => new InlineDecode(slots, { maxShare: 0 })).toThrow(/share must be in/);
    expect(() => new InlineDecode(slots, { maxShare: 1.5 })).toThrow(/share must be in/);
  });
});

describe('small batches decoded inline by the ingest (chdb)', () => {
  const tmp = tempDir('inline-decode');
  afterAll(() => tmp.remove());
  afterEach(() => vi.restoreAllMocks());

  it('decodes a batch cut by its age on the main thread and a full one in the pool, applied in posting order', async () => {
    const dir = `${tmp.dir}/mixed`;
    const store = openStore(dir);
    // A 10 s budget: a slow first decode on a loaded machine (a full test run) must not use up the
    // main thread's share and send the small batches to the pool.
    const ingest = await createTelemetryIngest({ store, dataDir: dir, threads: 1, maxBatchFrames: 4, log: quietLog, insert: { maxAgeMs: 20 }, inlineDecodeBudgetMs: 10_000 });
    const durable: number[] = [];
    ingest.onDurable((_robot, _epoch, seq) => durable.push(seq));
    try {
      // Four frames fill a batch: it goes to the pool at once.
      for (let s = 1; s <= 4; s++) ingest.push('r1', 'f', sequenced(s, 9, T0 + s * 100, 3));
      ingest.push('r1', 'f', sequenced(5, 9, T0 + 500, 3));
      const flushed = ingest.flush();
      // flush() cut the one-frame batch and decoded it here, synchronously; its result waits for
      // the pool's (an earlier batch), so nothing is applied yet.
      expect(ingest.stats()).toMatchObject({ batches: 1, batchesInline: 1, samplesIn: 0 });
      await flushed;
      expect(ingest.stats()).toMatchObject({ samplesIn: 15, rowsWritten: 15, corruptFrames: 0 });
      expect(durable.at(-1)).toBe(5);
      expect(durable).toEqual([...durable].sort((a, b) => a - b));
      expect(ingest.stats().decodeThreadIds.length).toBe(1);
      expect(await ingest.sampleStore.queryText("SELECT count(), max(ts_ms) FROM telemetry_samples WHERE robot_id = 'r1'")).toBe(`15\t${T0 + 520}\n`);

      // Nothing else pushed: a lone frame is cut by its age timer and decoded here.
      ingest.push('r2', 'f', encodeBatch(T0, 2));
      await until(() => ingest.stats().samplesIn === 17, 5_000, 'the age-cut batch');
      expect(ingest.stats()).toMatchObject({ batches: 1, batchesInline: 2 });
      await ingest.flush();
      expect(store.snapshots.get('r2')).toBeDefined();
    } finally {
      await ingest.close();
      await store.close();
    }
  });

  it('cuts a batch where one inline decode ends and decodes it here; a durable point travels with its own frame\'s batch', async () => {
    const dir = `${tmp.dir}/cut`;
    const store = openStore(dir);
    const frameBytes = 16 + sequenced(1, 9, T0, 3).byteLength;
    // Three frames fit the bound, a fourth does not: each batch is cut before its fourth frame. (A
    // 10 s budget: a slow first decode on a loaded machine must not move the cut below the bound.)
    const ingest = await createTelemetryIngest({
      store, dataDir: dir, threads: 1, log: quietLog, inlineDecodeMaxBytes: 3 * frameBytes + 5, inlineDecodeBudgetMs: 10_000,
      storeBatchAgeMs: 60_000, insert: { maxAgeMs: 20 },
    });
    const durable: number[] = [];
    ingest.onDurable((_robot, _epoch, seq) => durable.push(seq));
    try {
      for (let s = 1; s <= 4; s++) ingest.push('r1', 'f', sequenced(s, 9, T0 + s * 100, 3));
      // Frame 4 cut the first three off, decoded here at once (synchronously, in push()).
      expect(ingest.stats()).toMatchObject({ batches: 0, batchesInline: 1, samplesIn: 9 });
      // Their block is durable; frame 4 is still in the open batch, so its seq must not be.
      await until(() => durable.length > 0, 5_000, 'the first block durable');
      expect(durable).toEqual([3]);
      for (let s = 5; s <= 10; s++) ingest.push('r1', 'f', sequenced(s, 9, T0 + s * 100, 3));
      expect(ingest.stats()).toMatchObject({ batches: 0, batchesInline: 3, samplesIn: 27 });
      await ingest.flush();
      expect(ingest.stats()).toMatchObject({ batches: 0, batchesInline: 4, samplesIn: 30, rowsWritten: 30 });
      expect(durable.at(-1)).toBe(10);
      expect(await ingest.sampleStore.queryText("SELECT count() FROM telemetry_samples WHERE robot_id = 'r1'")).toBe('30\n');
    } finally {
      await ingest.close();
      await store.close();
    }
  });

  it('does not cut a batch already past the cut (one large frame), nor while a batch waits for the pool', async () => {
    const dir = `${tmp.dir}/no-cut`;
    const store = openStore(dir);
    const small = encodeBatch(T0, 1);
    const large = encodeBatch(T0, 12);
    const bound = 3 * (16 + small.byteLength);
    expect(16 + large.byteLength).toBeGreaterThan(bound);
    const ingest = await createTelemetryIngest({
      store, dataDir: dir, threads: 1, maxBatchFrames: 6, maxTasksInFlight: 1, log: quietLog, inlineDecodeMaxBytes: bound, inlineDecodeBudgetMs: 10_000,
      storeBatchAgeMs: 60_000, insert: { maxAgeMs: 20 },
    });
    try {
      // A large frame alone is over the cut: the small frames after it join its batch, not one batch each.
      ingest.push('r1', 'f', large);
      for (let i = 0; i < 4; i++) ingest.push(`s${i}`, 'f', small);
      expect(ingest.stats()).toMatchObject({ batches: 0, batchesInline: 0 });
      // The sixth frame fills it: a full batch, to the pool, which now holds its one task.
      ingest.push('s4', 'f', small);
      expect(ingest.stats()).toMatchObject({ batches: 1, batchesInline: 0, tasksInFlight: 1 });
      // While the pool is full, small frames past the cut are not cut off for the main thread.
      for (let i = 0; i < 5; i++) ingest.push(`t${i}`, 'f', small);
      expect(ingest.stats()).toMatchObject({ batches: 1, batchesInline: 0 });
      await ingest.flush();
      // flush() cut them as one batch, over the inline bound: the pool's second task (cut there, three
      // of them would have waited as an inline batch and been decoded here when the pool answered).
      expect(ingest.stats()).toMatchObject({ batches: 2, batchesInline: 0, samplesIn: 12 + 10, rowsWritten: 12 + 10, tasksInFlight: 0, queueBytes: 0 });
    } finally {
      await ingest.close();
      await store.close();
    }
  });

  it('sends every batch to the pool with inlineDecodeMaxBytes 0, and an age-cut batch over the bound too', async () => {
    for (const [name, bound, frameSamples] of [['off', 0, 2], ['over', 200, 5]] as const) {
      const dir = `${tmp.dir}/${name}`;
      const store = openStore(dir);
      const ingest = await createTelemetryIngest({ store, dataDir: dir, threads: 1, log: quietLog, inlineDecodeMaxBytes: bound });
      try {
        const frame = encodeBatch(T0, frameSamples);
        if (name === 'over') expect(frame.byteLength + 16).toBeGreaterThan(bound);
        ingest.push('r1', 'f', frame);
        await ingest.flush();
        expect(ingest.stats()).toMatchObject({ batches: 1, batchesInline: 0, samplesIn: frameSamples, rowsWritten: frameSamples });
        expect(ingest.stats().decodeThreadIds.length).toBe(1);
      } finally {
        await ingest.close();
        await store.close();
      }
    }
  });

  it('decodes a small batch that waited behind a full pool once the pool answers; slots and queued bytes come back', async () => {
    const dir = `${tmp.dir}/behind`;
    const store = openStore(dir);
    const ingest = await createTelemetryIngest({ store, dataDir: dir, threads: 1, maxBatchFrames: 3, maxTasksInFlight: 1, log: quietLog, insert: { maxAgeMs: 20 } });
    try {
      const idle = ingest.stats().taskSlotsInUse;
      for (let i = 0; i < 3; i++) ingest.push(`r${i}`, 'f', encodeBatch(T0 + i * 100, 2)); // full: to the pool
      ingest.push('r9', 'f', encodeBatch(T0, 4));
      const flushed = ingest.flush();
      // The pool holds its one task: the small batch waits, not yet decoded anywhere.
      expect(ingest.stats()).toMatchObject({ batches: 1, batchesInline: 0, tasksInFlight: 1 });
      await flushed;
      expect(ingest.stats()).toMatchObject({ batches: 1, batchesInline: 1, samplesIn: 10, rowsWritten: 10, tasksInFlight: 0, queueBytes: 0 });
      expect(ingest.stats().taskSlotsInUse).toBe(idle);
    } finally {
      await ingest.close();
      await store.close();
    }
  });

  it('sends a batch with a Foxglove subscriber to the pool, which writes its frames', async () => {
    const dir = `${tmp.dir}/foxglove`;
    const store = openStore(dir);
    const published: FoxgloveBatch[] = [];
    const foxglove = { anyWatched: () => true, watchedKinds: (id: string) => (id === 'r1' ? 4 : 0), publishFoxglove: (b: FoxgloveBatch) => published.push(b) };
    const ingest = await createTelemetryIngest({ store, dataDir: dir, threads: 1, log: quietLog, foxglove });
    try {
      ingest.push('r1', 'f', encodeBatch(T0, 2));
      ingest.push('r2', 'f', encodeBatch(T0, 2));
      await ingest.flush();
      expect(ingest.stats()).toMatchObject({ batches: 1, batchesInline: 0, samplesIn: 4 });
      expect(published.map((b) => b.index.length / 4)).toEqual([2]); // r1's two status frames
    } finally {
      await ingest.close();
      await store.close();
    }
  });

  it('counts a decoder that throws on the main thread as a lost task and goes on', async () => {
    const dir = `${tmp.dir}/throws`;
    const store = openStore(dir);
    const log: string[] = [];
    const ingest = await createTelemetryIngest({ store, dataDir: dir, threads: 1, log: captureLog(log), insert: { maxAgeMs: 20 } });
    try {
      const idle = ingest.stats().taskSlotsInUse;
      vi.spyOn(InlineDecode.prototype, 'decode').mockImplementationOnce(() => {
        throw new Error('decoder bug');
      });
      ingest.push('r1', 'f', encodeBatch(T0, 2));
      ingest.push('r2', 'f', encodeBatch(T0, 2));
      await ingest.flush();
      expect(ingest.stats()).toMatchObject({ batchesInline: 1, workerErrors: 1, framesLost: 2, samplesIn: 0, tasksInFlight: 0, queueBytes: 0 });
      expect(ingest.stats().taskSlotsInUse).toBe(idle);
      expect(log.some((l) => l.startsWith('telemetry decode task failed'))).toBe(true);
      // The next batch is decoded as usual.
      ingest.push('r1', 'f', encodeBatch(T0 + 100, 3));
      await ingest.flush();
      expect(ingest.stats()).toMatchObject({ batchesInline: 2, samplesIn: 3, rowsWritten: 3 });
    } finally {
      await ingest.close();
      await store.close();
    }
  });
});
