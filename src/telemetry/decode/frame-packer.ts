/**
 * Main-thread batch buffer: copies each robot's raw TelemetryBatch bytes (which may be a view into
 * a larger gRPC buffer) into a shared task slot (task-slots.ts) that a decode worker reads in place;
 * when no slot is free or the batch outgrows it, into a private ArrayBuffer that is transferred.
 * Layout: see worker-protocol.ts. One concept: append, then take the packed batch.
 */
import { copyBytes } from './shared-copy.js';
import type { TaskSlots } from './task-slots.js';
import { FRAME_HEADER_BYTES } from './worker-protocol.js';

export interface PackedBatch {
  /** The private buffer when the batch is not in a slot. */
  frames?: ArrayBuffer;
  /** The slot holding the frames (owned by the batch until released); -1: none. */
  slot: number;
  byteLength: number;
  frameCount: number;
  robotIds: string[];
  fleetIds: string[];
}

/**
 * A robot as a caller that keeps per-robot state tracks it (the ingest): `gen`/`index` cache the
 * robot's index in the batch being filled, so addFor() needs no Map lookup. Set `gen` to -1 when
 * the robot's fleet changed: its next frame gets an index of its own.
 */
export interface PackerRobot {
  readonly robotId: string;
  fleetId: string;
  gen: number;
  index: number;
}

/**
 * Frames buffers kept for reuse (see recycle()), at most this many bytes of them. Why 40 MiB: after
 * robots resume from a pause they send what they queued at once, more full batches wait for the pool
 * than there are task slots, and each waiting batch is packed into a private ~1.2 MiB buffer. With 4
 * kept, a burst at peak allocated over a hundred of them, each one waiting long enough to reach V8's
 * old generation, which counts it toward the next full GC (bench/notes/telemetry-ingest.md,
 * "Bursts after a pause reuse their buffers"). 40 MiB holds a burst's worth; they stay allocated after it (pages a burst touched): at most
 * 40 MiB for the life of the process.
 */
const MAX_SPARE_BYTES = 40 * 1024 * 1024;
/** And at most this many, so small buffers cannot fill the budget nor make spareOf()'s scan long. */
const MAX_SPARES = 48;

export class FramePacker {
  private readonly spares: ArrayBuffer[] = [];
  private spareBytes = 0;
  /** The slot `buf` is (-1: a private buffer). */
  private slot = -1;
  private buf: Uint8Array;
  private view: DataView;
  private pos = 0;
  private count = 0;
  private robotIds: string[] = [];
  private fleetIds: string[] = [];
  /** robotId -> index of its (robot, fleet) pair; a robot seen under a second fleet goes to `moved`. */
  private index = new Map<string, number>();
  private moved = new Map<string, number>();
  /** Wall clock of the first frame of the current batch (for the age bound). */
  firstAtMs = 0;
  /** Counts batches taken: a PackerRobot's cached index is valid while its `gen` equals it. */
  private gen = 0;

  /** @param slots shared slots to pack into (none: always private buffers). */
  constructor(private readonly initialBytes = 256 * 1024, private readonly slots: TaskSlots | null = null) {
    this.buf = this.nextBuffer(initialBytes);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  get frameCount(): number {
    return this.count;
  }

  /** Bytes in use (headers included): what this batch adds to the queued-bytes bound. */
  get byteLength(): number {
    return this.pos;
  }

  /** Copies one frame in; `bytes` is not retained. */
  add(robotId: string, fleetId: string, bytes: Uint8Array, receivedAtMs: number): void {
    // A robot moved to another fleet mid-batch keeps its rows honest: (robot, fleet) pairs are
    // indexed, by robot id alone in the common case (no key string built per frame).
    let ri = this.index.get(robotId);
    if (ri === undefined) {
      ri = this.push(robotId, fleetId);
      this.index.set(robotId, ri);
    } else if (this.fleetIds[ri] !== fleetId) {
      const key = `${robotId}\u0000${fleetId}`;
      ri = this.moved.get(key) ?? this.push(robotId, fleetId);
      this.moved.set(key, ri);
    }
    this.write(ri, bytes, receivedAtMs);
  }

  /**
   * Copies one frame in, like add(), for a robot whose batch index the caller caches (no Map lookup:
   * at 1,000 robots x 10 Hz the lookups were cache misses worth a visible share of the main thread;
   * bench/notes/telemetry-ingest.md).
   * Unlike add(), a robot whose fleet changes back within a batch gets a further index (fleet changes
   * are rare; rows and snapshots are the same either way).
   */
  addFor(robot: PackerRobot, bytes: Uint8Array, receivedAtMs: number): void {
    let ri = robot.index;
    if (robot.gen !== this.gen) {
      ri = this.push(robot.robotId, robot.fleetId);
      robot.gen = this.gen;
      robot.index = ri;
    }
    this.write(ri, bytes, receivedAtMs);
  }

  /** Index of the batch being filled (what a PackerRobot's `gen` is compared with). */
  get generation(): number {
    return this.gen;
  }

  private write(ri: number, bytes: Uint8Array, receivedAtMs: number): void {
    if (this.count === 0 && this.slot === -1) this.preferSlot();
    this.ensure(FRAME_HEADER_BYTES + bytes.length);
    if (this.count === 0) this.firstAtMs = receivedAtMs;
    this.view.setUint32(this.pos, ri, true);
    this.view.setUint32(this.pos + 4, bytes.length, true);
    this.view.setFloat64(this.pos + 8, receivedAtMs, true);
    // Into a shared slot: V8's own copy there runs at a tenth of memcpy's speed (shared-copy.ts).
    copyBytes(this.buf, this.pos + FRAME_HEADER_BYTES, bytes);
    this.pos += FRAME_HEADER_BYTES + bytes.length;
    this.count++;
  }

  /** Hands the current batch over (its slot, or its private buffer to transfer) and starts an empty one. */
  take(): PackedBatch {
    const out: PackedBatch = {
      ...(this.slot === -1 ? { frames: this.buf.buffer as ArrayBuffer } : {}),
      slot: this.slot,
      byteLength: this.pos,
      frameCount: this.count,
      robotIds: this.robotIds,
      fleetIds: this.fleetIds,
    };
    // Size the next buffer for a batch like this one (+1/8), so a steady stream of full batches
    // allocates once per batch instead of growing 256 KiB -> 2 MiB through three copies each time.
    const next = Math.max(this.initialBytes, Math.min(this.buf.length, this.pos + (this.pos >>> 3)));
    this.buf = this.nextBuffer(next);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
    this.pos = 0;
    this.count = 0;
    this.robotIds = [];
    this.fleetIds = [];
    // add()'s maps (addFor() callers leave them empty).
    if (this.index.size > 0) this.index = new Map();
    if (this.moved.size > 0) this.moved = new Map();
    this.gen++;
    return out;
  }

  /** A free slot, else a private buffer of at least `size` bytes (a kept one when it fits). */
  private nextBuffer(size: number): Uint8Array {
    const slot = this.slots?.acquire() ?? -1;
    this.slot = slot;
    if (slot !== -1) return this.slots!.frames(slot);
    return new Uint8Array(this.spareOf(size) ?? new ArrayBuffer(size));
  }

  /** An empty batch on a private buffer (no slot was free at take()) moves to a slot freed since. */
  private preferSlot(): void {
    const slot = this.slots?.acquire() ?? -1;
    if (slot === -1) return;
    this.recycle(this.buf.buffer as ArrayBuffer);
    this.slot = slot;
    this.buf = this.slots!.frames(slot);
    this.view = new DataView(this.buf.buffer, this.buf.byteOffset, this.buf.byteLength);
  }

  /**
   * Moves a taken batch packed in a private buffer (every slot was busy then) into a slot freed since,
   * when one is free and the batch fits, and keeps the private buffer for a later batch. Why: a private
   * batch crosses to the decode worker and back by transfer, and every buffer that arrives in an
   * isolate counts there as new external memory toward V8's next full GC (task-slots.ts). At peak,
   * when the store fell behind and the robots were paused and resumed, bursts filled every slot with
   * waiting batches; the transfers then more than doubled the main thread's external memory within
   * seconds, with several full GCs a second (bench/notes/telemetry-ingest.md, "Target 1: the copies
   * into shared memory"). The ingest calls this as it
   * posts a batch, just after a task finished and freed its slot. The copy is one memmove.
   */
  toSlot(batch: PackedBatch): void {
    if (batch.slot !== -1 || batch.frames === undefined || this.slots === null) return;
    if (batch.byteLength > this.slots.framesBytes) return;
    const slot = this.slots.acquire();
    if (slot === -1) return;
    copyBytes(this.slots.frames(slot), 0, new Uint8Array(batch.frames, 0, batch.byteLength));
    this.recycle(batch.frames);
    batch.slot = slot;
    delete batch.frames;
  }

  /** Gives the slot of a batch being filled back (close: the batch was never taken). */
  dispose(): void {
    if (this.slot === -1) return;
    this.slots?.release(this.slot);
    this.slot = -1;
    // Never keep a view of a slot that is not ours (a later add() would write into it).
    this.buf = new Uint8Array(new ArrayBuffer(this.initialBytes));
    this.view = new DataView(this.buf.buffer);
    this.pos = 0;
    this.count = 0;
    this.robotIds = [];
    this.fleetIds = [];
    this.gen++;
  }

  private push(robotId: string, fleetId: string): number {
    this.robotIds.push(robotId);
    this.fleetIds.push(fleetId);
    return this.robotIds.length - 1;
  }

  /**
   * Takes back a frames buffer a decode worker is done with, for a later batch: at high rates a fresh
   * 1 MiB buffer per batch was garbage the GC threads spent most of their time on. At most
   * MAX_SPARES buffers and MAX_SPARE_BYTES are kept: when full, a larger buffer replaces the smallest
   * kept ones (full batches are the ones a burst needs again); others are dropped to the GC.
   */
  recycle(buf: ArrayBuffer): void {
    const n = buf.byteLength;
    if (n < this.initialBytes || n > MAX_SPARE_BYTES) return;
    while (this.spares.length >= MAX_SPARES || this.spareBytes + n > MAX_SPARE_BYTES) {
      let min = 0;
      for (let i = 1; i < this.spares.length; i++) if (this.spares[i]!.byteLength < this.spares[min]!.byteLength) min = i;
      const smallest = this.spares[min]!;
      if (smallest.byteLength >= n) return;
      this.spares[min] = this.spares[this.spares.length - 1]!;
      this.spares.pop();
      this.spareBytes -= smallest.byteLength;
    }
    this.spares.push(buf);
    this.spareBytes += n;
  }

  /** A kept buffer of at least `min` bytes (and not wastefully larger), or undefined. */
  private spareOf(min: number): ArrayBuffer | undefined {
    for (let i = this.spares.length - 1; i >= 0; i--) {
      const b = this.spares[i]!;
      if (b.byteLength >= min && b.byteLength <= min * 4) {
        this.spares[i] = this.spares[this.spares.length - 1]!;
        this.spares.pop();
        this.spareBytes -= b.byteLength;
        return b;
      }
    }
    return undefined;
  }

  private ensure(n: number): void {
    const need = this.pos + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const next = new Uint8Array(new ArrayBuffer(size));
    copyBytes(next, 0, this.buf.subarray(0, this.pos));
    // A batch that outgrows its slot (one very large frame) continues in a private buffer.
    if (this.slot !== -1) this.slots!.release(this.slot);
    this.slot = -1;
    this.buf = next;
    this.view = new DataView(next.buffer);
  }
}
