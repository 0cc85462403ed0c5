import { describe, expect, it } from 'vitest';
import { FramePacker } from '../../src/telemetry/decode/frame-packer.js';
import { rowArenaMaxSpares, rowArenaSpares } from '../../src/telemetry/ingest/memory-budget.js';
import { RowArena } from '../../src/telemetry/store/row-arena.js';
import { TaskSlots } from '../../src/telemetry/decode/task-slots.js';
import { FRAME_HEADER_BYTES } from '../../src/telemetry/decode/worker-protocol.js';

describe('TaskSlots', () => {
  it('hands out each slot once, takes it back once, and says when none is free', () => {
    const slots = new TaskSlots(2, 64, 128);
    const a = slots.acquire();
    const b = slots.acquire();
    expect(new Set([a, b])).toEqual(new Set([0, 1]));
    expect(slots.acquire()).toBe(-1);
    slots.release(a);
    expect(() => slots.release(a)).toThrow(/released twice/);
    expect(slots.acquire()).toBe(a);
    expect(slots.frames(a).buffer).toBe(slots.forWorkers[a]!.frames);
    expect(slots.rows(b, 10).buffer).toBe(slots.forWorkers[b]!.rows);
    expect(slots.rows(b, 10).length).toBe(10);
  });
});

describe('FramePacker with slots', () => {
  const frame = (n: number): Uint8Array => new Uint8Array(n).fill(7);

  it('packs into a shared slot and passes no buffer; falls back to a private buffer when none is free', () => {
    const slots = new TaskSlots(1, 1024, 1024);
    const packer = new FramePacker(256, slots);
    packer.add('r1', 'f1', frame(100), 1);
    const first = packer.take();
    expect(first.slot).toBe(0);
    expect(first.frames).toBeUndefined();
    expect(new Uint8Array(slots.forWorkers[0]!.frames, FRAME_HEADER_BYTES, 100)).toEqual(frame(100));
    // The only slot belongs to `first` until released: the next batch packs into a private buffer.
    packer.add('r1', 'f1', frame(10), 2);
    const second = packer.take();
    expect(second.slot).toBe(-1);
    expect(second.frames).toBeInstanceOf(ArrayBuffer);
    slots.release(first.slot);
    packer.add('r1', 'f1', frame(10), 3);
    expect(packer.take().slot).toBe(0);
  });

  it('moves a batch that outgrows its slot to a private buffer with every frame, and frees the slot', () => {
    const slots = new TaskSlots(1, 256, 256);
    const packer = new FramePacker(64, slots);
    packer.add('r1', 'f1', frame(100), 1);
    packer.add('r2', 'f1', frame(300), 2);
    expect(slots.freeCount).toBe(1); // the slot went back when the batch left it
    const batch = packer.take();
    expect(batch.slot).toBe(-1);
    expect(batch.frameCount).toBe(2);
    expect(batch.byteLength).toBe(2 * FRAME_HEADER_BYTES + 400);
    const bytes = new Uint8Array(batch.frames!, 0, batch.byteLength);
    expect(bytes.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + 100)).toEqual(frame(100));
    expect(bytes.subarray(2 * FRAME_HEADER_BYTES + 100)).toEqual(frame(300));
    // The next batch took the slot again.
    expect(slots.freeCount).toBe(0);
    packer.dispose();
    expect(slots.freeCount).toBe(1);
    // The slot now belongs to someone else: the packer must not write into it any more.
    const other = slots.acquire();
    slots.frames(other).fill(0);
    packer.add('r3', 'f1', frame(20), 3);
    expect(slots.frames(other).every((b) => b === 0)).toBe(true);
    expect(packer.take().slot).toBe(-1);
  });

  it('toSlot() moves a private batch into a slot freed since, byte for byte, and keeps its buffer for the next private batch', () => {
    const slots = new TaskSlots(2, 1024, 1024);
    const packer = new FramePacker(256, slots);
    const big = new Uint8Array(300).map((_, i) => (i * 13 + 1) & 0xff);
    packer.add('r1', 'f1', frame(10), 1);
    const first = packer.take(); // slot 0; the packer now fills slot 1
    packer.add('r1', 'f1', frame(10), 2);
    const second = packer.take(); // slot 1: none left
    packer.add('r2', 'f1', big, 3);
    const priv = packer.take();
    expect([first.slot, second.slot, priv.slot]).toEqual([0, 1, -1]);
    const privBuffer = priv.frames!;
    const packed = new Uint8Array(privBuffer, 0, priv.byteLength).slice();
    // No slot free: the batch stays private.
    packer.toSlot(priv);
    expect(priv.slot).toBe(-1);
    expect(priv.frames).toBe(privBuffer);
    slots.release(first.slot);
    packer.toSlot(priv);
    expect(priv.slot).toBe(0);
    expect(priv.frames).toBeUndefined();
    expect(slots.frames(0).subarray(0, priv.byteLength)).toEqual(packed);
    // The private buffer is kept for a later batch that finds no slot (none is free now). take()
    // already made the buffer the next batch fills, so the one after it reuses the kept buffer.
    packer.add('r1', 'f1', frame(10), 4);
    const next = packer.take();
    expect(next.slot).toBe(-1);
    expect(next.frames).not.toBe(privBuffer);
    packer.add('r1', 'f1', frame(10), 5);
    const after = packer.take();
    expect(after.slot).toBe(-1);
    expect(after.frames).toBe(privBuffer);
    // A batch already in a slot, or larger than a slot, is left as it is.
    slots.release(second.slot);
    packer.toSlot(second);
    expect(second.slot).toBe(1);
  });
});

describe('RowArena', () => {
  it('copies rows into shared buffers and reuses a buffer once all its rows are released', () => {
    const arena = new RowArena({ bufferBytes: 64, maxSpare: 1 });
    const a = arena.copy(Uint8Array.of(1, 2, 3));
    const b = arena.copy(Uint8Array.of(4, 5));
    expect(a.buffer).toBe(b.buffer);
    expect([...a, ...b]).toEqual([1, 2, 3, 4, 5]);
    const c = arena.copy(new Uint8Array(60).fill(9)); // does not fit: a second buffer
    expect(c.buffer).not.toBe(a.buffer);
    arena.release([a]);
    arena.release([a]); // a chunk released twice counts once: b still holds the buffer
    arena.release([new Uint8Array(a.buffer, 0, 3)]); // a view it did not hand out counts not at all
    expect(arena.copy(new Uint8Array(60)).buffer).not.toBe(a.buffer);
    expect([...b]).toEqual([4, 5]);
    arena.release([b]);
    const d = arena.copy(new Uint8Array(10).fill(1)); // the first buffer is free again and reused
    expect(d.buffer).toBe(a.buffer);
    expect([...a]).toEqual([1, 1, 1]); // (a was released: its bytes may be overwritten)
  });

  it('lets a decoder write rows in place: reserve room, commit what was written, as a chunk like copy()\'s', () => {
    const arena = new RowArena({ bufferBytes: 64, maxSpare: 1 });
    const a = arena.copy(Uint8Array.of(1, 2, 3));
    const region = arena.reserve(20)!;
    expect(region.buffer).toBe(a.buffer);
    expect(region.byteOffset).toBe(3);
    expect(region.byteLength).toBe(61); // the whole free rest
    region.set([4, 5], 0);
    const b = arena.commit(region, 2);
    expect([...a, ...b]).toEqual([1, 2, 3, 4, 5]);
    expect(() => arena.commit(region, 2)).toThrow(/not the last one reserved/); // already taken
    expect(arena.commit(arena.reserve(8)!, 0).length).toBe(0); // nothing written: nothing held
    // Less room left than asked: a fresh buffer (the current one is retired when its rows go).
    const far = arena.reserve(60)!;
    expect(far.buffer).not.toBe(a.buffer);
    const c = arena.commit(far, 60);
    arena.release([a, b]);
    expect(arena.reserve(65)).toBeNull(); // more than a buffer: the caller writes elsewhere
    arena.release([c]);
    expect(arena.copy(new Uint8Array(10)).buffer).toBe(a.buffer); // past the current one: the first buffer, kept as the spare
  });

  it('keeps a buffer whose rows were committed in place until that chunk is released', () => {
    const arena = new RowArena({ bufferBytes: 16, maxSpare: 1 });
    const rows = arena.commit(arena.reserve(10)!, 10);
    expect(arena.copy(new Uint8Array(10)).buffer).not.toBe(rows.buffer); // held: not a spare
    expect(arena.copy(new Uint8Array(10)).buffer).not.toBe(rows.buffer);
    arena.release([rows]);
    expect(arena.copy(new Uint8Array(10)).buffer).toBe(rows.buffer); // free again: reused
  });

  it('holds no buffer for a task without rows', () => {
    const arena = new RowArena({ bufferBytes: 16, maxSpare: 1 });
    const empty = arena.copy(new Uint8Array(0));
    expect(empty.length).toBe(0);
    expect(arena.buffers).toBe(0);
  });

  it('gives rows larger than a buffer a buffer of their own, and keeps at most maxSpare empty ones', () => {
    const arena = new RowArena({ bufferBytes: 16, maxSpare: 1 });
    const big = arena.copy(new Uint8Array(40).fill(3));
    expect(big.buffer.byteLength).toBe(40);
    arena.release([big]);
    const chunks = [arena.copy(new Uint8Array(16)), arena.copy(new Uint8Array(16)), arena.copy(new Uint8Array(16))];
    expect(arena.buffers).toBe(3);
    arena.release(chunks);
    // One current buffer and one spare remain; the third is dropped to the GC.
    expect(arena.buffers).toBe(2);
  });

  it('keeps up to maxSpare emptied buffers so a steady load allocates none, and gives back spares unused between two trims', () => {
    const arena = new RowArena({ bufferBytes: 16, maxSpare: 8, keepSpare: 2 });
    const round = (): Uint8Array[] => Array.from({ length: 6 }, () => arena.copy(new Uint8Array(16)));
    arena.release(round()); // one "insert" of six buffers
    expect(arena.allocated).toBe(6);
    for (let i = 0; i < 5; i++) arena.release(round());
    expect(arena.allocated).toBe(6); // the steady rounds reuse the five spares and the current buffer
    expect(arena.buffers).toBe(6);
    expect(arena.spares).toBe(5);
    arena.trim(); // ends the partial first window (it started empty: nothing to give back)
    expect(arena.buffers).toBe(6);
    arena.release(round()); // a busy window: every spare is taken
    arena.trim(); // no spare was idle for the whole window: all kept
    expect(arena.spares).toBe(5);
    expect(arena.allocated).toBe(6);
    arena.trim(); // nobody took a spare for a whole window: down to keepSpare
    expect(arena.spares).toBe(2);
    expect(arena.buffers).toBe(3);
  });
});

describe('RowArena.prefill', () => {
  it('allocates spares up to a count at once, hands out used buffers before fresh ones, and never holds more than maxSpare spares', () => {
    const arena = new RowArena({ bufferBytes: 16, maxSpare: 6, keepSpare: 1 });
    const used = arena.copy(new Uint8Array(16).fill(7));
    arena.copy(new Uint8Array(1)); // retires the first buffer; the second is now current
    arena.release([used]); // the first buffer is a spare, its pages written
    expect(arena.buffers).toBe(2);
    arena.prefill(5);
    expect(arena.buffers).toBe(5);
    expect(arena.allocated).toBe(5);
    expect(arena.spares).toBe(4);
    // The written spare first: fresh buffers are taken only when it is gone.
    const next = arena.reserve(16)!;
    expect(next.buffer).toBe(used.buffer);
    arena.prefill(5); // already there: nothing allocated
    expect(arena.allocated).toBe(5);
    arena.prefill(100); // bounded by maxSpare spares
    expect(arena.spares).toBe(6);
    expect(arena.buffers).toBe(8); // 6 spares, the current buffer and the one holding the 1-byte chunk
    // A steady load after prefill allocates nothing.
    const round = (): Uint8Array[] => Array.from({ length: 6 }, () => arena.copy(new Uint8Array(16)));
    for (let i = 0; i < 3; i++) arena.release(round());
    expect(arena.allocated).toBe(8);
  });
});

describe('rowArenaSpares, rowArenaMaxSpares', () => {
  it('keeps 1.5x the row buffers the high-water mark lets wait (rows overshoot the mark), at least 4', () => {
    // Bursts after a pause held 79-81 buffers at the 256 MiB mark: with 64 spares each burst's extra
    // buffers were dropped at their insert and allocated again at the next one.
    expect(rowArenaMaxSpares(256 * 1024 * 1024)).toBe(96);
    expect(rowArenaMaxSpares(100 * 1024 * 1024)).toBe(38);
    expect(rowArenaMaxSpares(1024 * 1024)).toBe(4);
    expect(rowArenaMaxSpares(2 * 1024 * 1024 * 1024)).toBe(96); // capped whatever the mark
  });

  it('allocates at once at peak load as many row buffers as the high-water mark lets wait (64 at the 256 MiB default), at least 4, at most 64', () => {
    // At 400,000 samples/s the rows waiting span 30-56 buffers: with fewer spares the steady peak kept allocating.
    expect(rowArenaSpares(256 * 1024 * 1024)).toBe(64);
    expect(rowArenaSpares(64 * 1024 * 1024)).toBe(16);
    expect(rowArenaSpares(1024 * 1024)).toBe(4);
    expect(rowArenaSpares(4 * 1024 * 1024 * 1024)).toBe(64);
  });
});
