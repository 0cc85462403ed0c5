/**
 * Decodes a small batch on the main thread instead of posting it to the decode pool.
 *
 * Why: at light load the batch is cut by its age (storeBatchAgeMs), not because it is full, and a
 * pool task then costs more than its decode: the task and its result cross threads (two messages,
 * structured clones of the robot ids), the worker thread wakes up and goes back to sleep, and the
 * main thread handles the reply. bench/micro/inline-decode.mjs measures a fifth (100 one-sample
 * frames) to a half (1,000) of a task's CPU for the same batch; at 100 robots x 10 Hz the gateway went from 0.040 to 0.030 cores
 * (bench/README.md, "Small batches decoded on the main thread").
 *
 * Bound: the event loop is held for about `budgetMs` (default 1 ms) per batch at most, and at most
 * ten batches a second are cut by age. Bytes alone do not bound the time (a batch of minimal samples
 * holds many more samples per byte), so the decode time per byte is learned from the batches decoded
 * here: the median of the last five, so a GC pause that lands inside one decode does not count. A
 * batch is decoded here when `bytes x estimate` fits the budget and it is at most `maxBytes`. When
 * batches are refused, one is still decoded here every 30 s to measure again (load changes): batches
 * that really are slow cost the event loop one such decode per 30 s (at worst, 256 KiB of
 * timestamp-only samples: 5 ms with the addon, 11 ms with the JS reader). Full batches, cut because load
 * is high, always go to the pool. The result is the one a worker would return
 * (decode-task.ts), applied in posting order like every other.
 */
import { chooseDecoder, type TaskDecoder } from './decode/select.js';
import { decodeTaskOrFault } from './decode-task.js';
import type { PackedBatch } from './frame-packer.js';
import type { TaskSlots } from './task-slots.js';
import type { DecodeResult } from './worker-protocol.js';

/** Default bound of a batch decoded on the main thread. */
export const DEFAULT_INLINE_DECODE_MAX_BYTES = 256 * 1024;
/** Default time a decode here may hold the event loop. */
export const DEFAULT_INLINE_DECODE_BUDGET_MS = 1;
/**
 * First estimate of the decode time per frames byte, before any batch was decoded here: about twice
 * what each decoder takes for the simulator's samples (addon 1.6-2.5 ns, JS reader 4.6-6.7 ns;
 * bench/micro/inline-decode.mjs).
 */
const INITIAL_NS_PER_BYTE = { native: 5, js: 12, reference: 100 } as const;
/** Observations the estimate is the median of. */
const OBSERVATIONS = 5;
/** While batches are refused, one is decoded here this often to measure again. */
const PROBE_EVERY_MS = 30_000;

const EMPTY = new Uint8Array(0);

export interface InlineDecodeOptions {
  /** Largest batch decoded here; 0 sends every batch to the pool. Default 256 KiB. */
  maxBytes?: number;
  /** Time a decode here may hold the event loop, by the learned cost per byte. Default 1 ms. */
  budgetMs?: number;
  /** Clock in ms (tests). Default performance.now. */
  now?: () => number;
  /** The decoder the caller already chose (decode/select.ts). Default: chooseDecoder(). */
  decoder?: TaskDecoder;
}

export class InlineDecode {
  /** The same choice the workers make (decode/select.ts). */
  private readonly decoder: TaskDecoder;
  readonly maxBytes: number;
  private readonly budgetNs: number;
  private readonly now: () => number;
  /** Learned decode time per frames byte: the median of `observed` (see the file comment). */
  private nsPerByte: number;
  /** The last OBSERVATIONS decode times per byte, oldest first. */
  private readonly observed: number[] = [];
  /** When a batch was last decoded here (a refusal probes again PROBE_EVERY_MS after it). */
  private lastDecodedAt = Number.NEGATIVE_INFINITY;

  /** @param slots the ingest's task slots (a batch's frames may be in one; its rows go to the same slot). */
  constructor(private readonly slots: TaskSlots, opts: InlineDecodeOptions = {}) {
    this.maxBytes = opts.maxBytes ?? DEFAULT_INLINE_DECODE_MAX_BYTES;
    const budgetMs = opts.budgetMs ?? DEFAULT_INLINE_DECODE_BUDGET_MS;
    if (!Number.isInteger(this.maxBytes) || this.maxBytes < 0) throw new RangeError(`inline decode bound must be a whole number of bytes >= 0, got ${this.maxBytes}`);
    if (!(budgetMs > 0)) throw new RangeError(`inline decode budget must be a positive number of ms, got ${budgetMs}`);
    this.budgetNs = budgetMs * 1e6;
    this.now = opts.now ?? (() => performance.now());
    this.decoder = opts.decoder ?? chooseDecoder();
    this.nsPerByte = INITIAL_NS_PER_BYTE[this.decoder.kind];
  }

  /** The learned decode time per frames byte, in ns (stats, tests). */
  get estimateNsPerByte(): number {
    return this.nsPerByte;
  }

  /** Whether a batch cut by its age is small enough to decode here (or is due as a probe). */
  accepts(batch: PackedBatch): boolean {
    if (batch.frameCount === 0 || batch.byteLength > this.maxBytes) return false;
    if (batch.byteLength * this.nsPerByte <= this.budgetNs) return true;
    return this.now() - this.lastDecodedAt >= PROBE_EVERY_MS;
  }

  /**
   * Decodes the batch now, as a worker would: rows written into the batch's slot when it has one (the
   * caller copies them out and releases the slot), a private frames buffer handed back as `spare`.
   */
  decode(batch: PackedBatch, foxglove: Uint8Array | null): DecodeResult {
    const decoder = this.decoder;
    const started = this.now();
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
    const ended = this.now();
    this.observe((ended - started) * 1e6 / Math.max(1, batch.byteLength), ended);
    return result;
  }

  private observe(nsPerByte: number, at: number): void {
    this.lastDecodedAt = at;
    const o = this.observed;
    if (o.length === OBSERVATIONS) o.shift();
    o.push(nsPerByte);
    const sorted = [...o].sort((a, b) => a - b);
    this.nsPerByte = sorted[sorted.length >> 1]!;
  }
}
