/**
 * Decodes a small batch on the main thread instead of posting it to the decode pool.
 *
 * Why: at light load the batch is cut by its age (storeBatchAgeMs), not because it is full, and a
 * pool task then costs more than its decode: the task and its result cross threads (two messages,
 * structured clones of the robot ids), the worker thread wakes up and goes back to sleep, and the
 * main thread handles the reply. At 100 robots x 10 Hz that was about a third of the gateway's
 * telemetry CPU beyond the HTTP/2 floor (bench/README.md, "Small batches decoded inline"). The decode
 * itself is a fraction of a microsecond per sample with the addon.
 *
 * Bound: only batches under `maxBytes` (default 256 KiB) are decoded here, so the event loop is held
 * for well under a millisecond (measured figure in bench/README.md); full batches, cut because load is
 * high, always go to the pool. The result is the one a worker would return (decode-task.ts), applied
 * in posting order like every other.
 */
import { chooseDecoder, type TaskDecoder } from './decode/select.js';
import { decodeTaskOrFault } from './decode-task.js';
import type { PackedBatch } from './frame-packer.js';
import type { TaskSlots } from './task-slots.js';
import type { DecodeResult } from './worker-protocol.js';

/** Default bound of a batch decoded on the main thread. */
export const DEFAULT_INLINE_DECODE_MAX_BYTES = 256 * 1024;

const EMPTY = new Uint8Array(0);

export class InlineDecode {
  private decoder: TaskDecoder | null = null;

  /**
   * @param slots the ingest's task slots (a batch's frames may be in one; its rows go to the same slot).
   * @param maxBytes largest batch decoded here; 0 sends every batch to the pool.
   */
  constructor(private readonly slots: TaskSlots, readonly maxBytes: number) {
    if (!Number.isInteger(maxBytes) || maxBytes < 0) throw new RangeError(`inline decode bound must be a whole number of bytes >= 0, got ${maxBytes}`);
  }

  /** Whether a batch cut by its age is small enough to decode here. */
  accepts(batch: PackedBatch): boolean {
    return batch.byteLength <= this.maxBytes && batch.frameCount > 0;
  }

  /**
   * Decodes the batch now, as a worker would: rows written into the batch's slot when it has one (the
   * caller copies them out and releases the slot), a private frames buffer handed back as `spare`.
   */
  decode(batch: PackedBatch, foxglove: Uint8Array | null): DecodeResult {
    // Loaded at the first inline batch: the same choice the workers make (decode/select.ts).
    const decoder = (this.decoder ??= chooseDecoder());
    const inSlot = batch.slot >= 0;
    const rowsRegion = inSlot ? this.slots.rows(batch.slot, this.slots.rowsBytes) : undefined;
    const result = decodeTaskOrFault(decoder, {
      frames: inSlot ? this.slots.forWorkers[batch.slot]!.frames : batch.frames,
      ...(rowsRegion !== undefined ? { rowsInto: rowsRegion } : {}),
      slot: batch.slot,
      byteLength: batch.byteLength,
      frameCount: batch.frameCount,
      robotIds: batch.robotIds,
      fleetIds: batch.fleetIds,
      live: null,
      ...(foxglove ? { foxglove } : {}),
    }, 0);
    if (rowsRegion !== undefined && result.rows.buffer === rowsRegion.buffer) {
      // Same contract as a worker's answer: the rows are in the slot, only their length comes back.
      result.rowsInSlot = result.rows.byteLength;
      result.rows = EMPTY;
    }
    if (!inSlot && batch.frames !== undefined) result.spare = batch.frames;
    return result;
  }
}
