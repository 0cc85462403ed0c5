/**
 * Shared memory for decode tasks: a fixed set of slots, each a frames region (the frame packer writes
 * a batch straight into it) and a rows region (the decode worker writes the task's rows into it).
 * The slots are allocated once and handed to every worker at start (workerData), so a task carries
 * only a slot index and its result only lengths.
 *
 * Why not transfer buffers per task: every ArrayBuffer that arrives in an isolate counts as newly
 * allocated external memory, and V8 starts a full GC for each 64 MiB of it. At peak the frames
 * and rows buffers crossing threads started more than one such GC a second, and those GCs were most
 * of what the GC helper threads did (bench/notes/telemetry-ingest.md, "Targets 1 and 2, same session").
 *
 * Ownership: a slot belongs to the frame packer while it fills the batch, then to the task (frames read
 * by the worker, rows written by it), then to the ingest until it has copied the rows out; only then
 * is it released. When no slot is free, or a batch or its rows do not fit, the old path (a private
 * buffer, transferred) takes over for that batch: nothing waits for a slot. A private batch still moves
 * into a slot that is free by the time it is posted (FramePacker.toSlot).
 */

/** What a worker gets (workerData): the shared buffers of each slot. */
export interface SharedSlot {
  frames: SharedArrayBuffer;
  rows: SharedArrayBuffer;
}

export class TaskSlots {
  private readonly shared: SharedSlot[] = [];
  private readonly framesViews: Uint8Array[] = [];
  private readonly rowsViews: Uint8Array[] = [];
  private readonly free: number[] = [];

  /**
   * @param count slots (tasks in the pool + the batch being filled + results waiting to be applied +
   *   batches waiting for the pool).
   * @param framesBytes bytes of a frames region (a full batch plus its last frame).
   * @param rowsBytes bytes of a rows region.
   */
  constructor(count: number, readonly framesBytes: number, readonly rowsBytes: number) {
    for (let i = 0; i < count; i++) {
      // Pages are committed when first written: a slot costs memory only up to what batches used.
      const s = { frames: new SharedArrayBuffer(framesBytes), rows: new SharedArrayBuffer(rowsBytes) };
      this.shared.push(s);
      this.framesViews.push(new Uint8Array(s.frames));
      this.rowsViews.push(new Uint8Array(s.rows));
      this.free.push(count - 1 - i);
    }
  }

  /** The buffers to give each worker. */
  get forWorkers(): readonly SharedSlot[] {
    return this.shared;
  }

  /** A free slot's index, or -1 when every slot is in use. */
  acquire(): number {
    return this.free.pop() ?? -1;
  }

  /** Gives a slot back; releasing one twice is a bug and throws. */
  release(slot: number): void {
    if (slot < 0 || slot >= this.shared.length || this.free.includes(slot)) throw new Error(`task slot ${slot} released twice or unknown`);
    this.free.push(slot);
  }

  /** The whole frames region of a slot. */
  frames(slot: number): Uint8Array {
    return this.framesViews[slot]!;
  }

  /** The first `length` bytes of a slot's rows region. */
  rows(slot: number, length: number): Uint8Array {
    return this.rowsViews[slot]!.subarray(0, length);
  }

  get size(): number {
    return this.shared.length;
  }

  get freeCount(): number {
    return this.free.length;
  }
}
