/**
 * Decodes a small batch on the main thread instead of posting it to the decode pool.
 *
 * Why: at light and medium load the batch is cut by its age (storeBatchAgeMs) or where one decode here
 * ends (below), not because it is full, and a pool task then costs more than its decode: the task and its result cross threads (two messages,
 * structured clones of the robot ids), the worker thread wakes up and goes back to sleep, and the
 * main thread handles the reply. bench/micro/inline-decode.mjs measures a fifth (100 one-sample
 * frames) to a half (1,000) of a task's CPU for the same batch, and the gateway's CPU at 100 robots x
 * 10 Hz fell by a quarter (bench/notes/telemetry-ingest.md, "Small batches decoded on the main thread").
 *
 * Bound: the event loop is held for about `budgetMs` (default 1 ms) per batch at most, and no decode
 * starts here once inline decodes have taken `maxShare` (default 5%) of the current one-second window
 * (the last one may run past it by its own length; two windows side by side can hold up to twice the
 * share within one second). Bytes alone do not bound the time
 * (a batch of minimal samples holds many more samples per byte), so the decode time per byte is learned
 * from the batches decoded here: the median of the last five, so a GC pause that lands inside one
 * decode does not count. A batch is decoded here when `bytes x estimate` fits the budget, it is at most
 * `maxBytes` and the second's share has room. When batches are refused, one is still decoded here every
 * 30 s to measure again (load changes): batches that really are slow cost the event loop one such
 * decode per 30 s (at worst, 256 KiB of timestamp-only samples: 5 ms with the addon, 11 ms with the JS
 * reader). The result is the one a worker would return (decode-task.ts), applied in posting order like
 * every other.
 *
 * Which batches: one cut by its age or a flush, and one the ingest cuts when it reaches
 * {@link InlineDecode.cutBytes} (what the budget allows at the learned cost) while the share has room
 * and no batch waits for the pool; a batch that waited is asked about the share again before it is
 * decoded here.
 * The second keeps medium load off the pool: at 1,000 robots x 10 Hz a batch fills to 2,000 frames
 * (276 KB) before its 250 ms age and went to the pool as a full batch, where a task costs about twice
 * the decode (bench/micro/inline-decode.mjs); cut at the budget, the same bytes are decoded here in
 * pieces of at most 1 ms. Full batches (`maxBatchFrames`/`maxBatchBytes`), and every batch once the share is used up,
 * go to the pool: at peak load the decode stays on the workers.
 */
import { chooseDecoder, type TaskDecoder, decodeTaskOrFault, type PackedBatch, type TaskSlots, type DecodeResult } from '../decode/index.js';
import type { RowArena } from '../store/index.js';

/** Default bound of a batch decoded on the main thread. */
export const DEFAULT_INLINE_DECODE_MAX_BYTES = 256 * 1024;
/** Default time a decode here may hold the event loop. */
export const DEFAULT_INLINE_DECODE_BUDGET_MS = 1;
/**
 * First estimate of the decode time per frames byte, before any batch was decoded here: about twice
 * what each decoder takes for the simulator's samples (measured by bench/micro/inline-decode.mjs).
 */
const INITIAL_NS_PER_BYTE = { native: 5, js: 12, reference: 100 } as const;
/** Observations the estimate is the median of. */
const OBSERVATIONS = 5;
/** While batches are refused, one is decoded here this often to measure again. */
const PROBE_EVERY_MS = 30_000;
/** Default share of each second of the event loop that inline decodes may take. */
export const DEFAULT_INLINE_DECODE_MAX_SHARE = 0.05;
/** The window the share is counted over. */
const SHARE_WINDOW_MS = 1_000;

const EMPTY = new Uint8Array(0);
/**
 * Room reserved in the row arena per frames byte for an inline decode's rows: a RowBinary row is
 * ~1.8x its protobuf sample with the simulator's samples. Rows that need more come back in a buffer
 * of their own (correct, only slower); more room would leave larger unused tails in arena buffers.
 */
const ARENA_ROWS_PER_FRAME_BYTE = 2;

export interface InlineDecodeOptions {
  /** Largest batch decoded here; 0 sends every batch to the pool. Default 256 KiB. */
  maxBytes?: number;
  /** Time a decode here may hold the event loop, by the learned cost per byte. Default 1 ms. */
  budgetMs?: number | undefined;
  /** Share (0-1] of each second of the event loop that inline decodes may take. Default 0.05. */
  maxShare?: number;
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
  private nsPerByte = 0;
  /** The last OBSERVATIONS decode times per byte, oldest first. */
  private readonly observed: number[] = [];
  /** When a batch was last decoded here (a refusal probes again PROBE_EVERY_MS after it). */
  private lastDecodedAt = Number.NEGATIVE_INFINITY;
  /** Inline decode time allowed per SHARE_WINDOW_MS, the current window's start and what it used. */
  private readonly shareMs: number;
  private windowStart = Number.NEGATIVE_INFINITY;
  private windowUsedMs = 0;
  /** See {@link cutBytes}; recomputed with the estimate, because the ingest reads it for every frame. */
  private cutAt = Number.POSITIVE_INFINITY;

  /** @param slots the ingest's task slots (a batch's frames may be in one; its rows go to the same slot). */
  constructor(private readonly slots: TaskSlots, opts: InlineDecodeOptions = {}) {
    this.maxBytes = opts.maxBytes ?? DEFAULT_INLINE_DECODE_MAX_BYTES;
    const budgetMs = opts.budgetMs ?? DEFAULT_INLINE_DECODE_BUDGET_MS;
    if (!Number.isInteger(this.maxBytes) || this.maxBytes < 0) throw new RangeError(`inline decode bound must be a whole number of bytes >= 0, got ${this.maxBytes}`);
    if (!(budgetMs > 0)) throw new RangeError(`inline decode budget must be a positive number of ms, got ${budgetMs}`);
    const maxShare = opts.maxShare ?? DEFAULT_INLINE_DECODE_MAX_SHARE;
    if (!(maxShare > 0 && maxShare <= 1)) throw new RangeError(`inline decode share must be in (0, 1], got ${maxShare}`);
    this.budgetNs = budgetMs * 1e6;
    this.shareMs = maxShare * SHARE_WINDOW_MS;
    this.now = opts.now ?? (() => performance.now());
    this.decoder = opts.decoder ?? chooseDecoder();
    this.setEstimate(INITIAL_NS_PER_BYTE[this.decoder.kind]);
  }

  /** The learned decode time per frames byte, in ns (stats, tests). */
  get estimateNsPerByte(): number {
    return this.nsPerByte;
  }

  /**
   * Frames bytes at which the ingest cuts a batch to decode it here: what the budget allows at the
   * learned cost, at most `maxBytes`; Infinity when nothing is decoded here.
   */
  get cutBytes(): number {
    return this.cutAt;
  }

  /** Whether this second's share of the event loop has room for another decode here. */
  hasRoom(): boolean {
    const t = this.now();
    if (t - this.windowStart >= SHARE_WINDOW_MS) {
      this.windowStart = t;
      this.windowUsedMs = 0;
    }
    return this.windowUsedMs < this.shareMs;
  }

  /** Whether a batch that is not full is small enough to decode here (or is due as a probe). */
  accepts(batch: PackedBatch): boolean {
    if (batch.frameCount === 0 || batch.byteLength > this.maxBytes || !this.hasRoom()) return false;
    if (batch.byteLength * this.nsPerByte <= this.budgetNs) return true;
    return this.now() - this.lastDecodedAt >= PROBE_EVERY_MS;
  }

  /**
   * Decodes the batch now, as a worker would, a private frames buffer handed back as `spare`. The rows
   * go straight into `arena` when given and they fit the room reserved there (ARENA_ROWS_PER_FRAME_BYTE
   * times the frames), and come back as an arena chunk; else into the batch's slot when it has one
   * (the caller copies them out and releases the slot), else into a buffer of their own.
   */
  decode(batch: PackedBatch, foxglove: Uint8Array | null, arena?: RowArena): DecodeResult {
    const decoder = this.decoder;
    const started = this.now();
    const inSlot = batch.slot >= 0;
    const arenaRegion = arena?.reserve(batch.byteLength * ARENA_ROWS_PER_FRAME_BYTE) ?? null;
    const rowsRegion = arenaRegion ?? (inSlot ? this.slots.rows(batch.slot, this.slots.rowsBytes) : undefined);
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
    if (arenaRegion !== null && result.rows.buffer === arenaRegion.buffer) {
      // Written in place: the chunk the ingest enqueues and the insert releases.
      result.rows = arena!.commit(arenaRegion, result.rows.byteLength);
    } else if (rowsRegion !== undefined && result.rows.buffer === rowsRegion.buffer) {
      // Same contract as a worker's answer: the rows are in the slot, only their length comes back.
      result.rowsInSlot = result.rows.byteLength;
      result.rows = EMPTY;
    }
    if (!inSlot && batch.frames !== undefined) result.spare = batch.frames;
    const ended = this.now();
    this.windowUsedMs += ended - started;
    this.observe((ended - started) * 1e6 / Math.max(1, batch.byteLength), ended);
    return result;
  }

  private observe(nsPerByte: number, at: number): void {
    this.lastDecodedAt = at;
    const o = this.observed;
    if (o.length === OBSERVATIONS) o.shift();
    o.push(nsPerByte);
    const sorted = [...o].sort((a, b) => a - b);
    this.setEstimate(sorted[sorted.length >> 1]!);
  }

  private setEstimate(nsPerByte: number): void {
    this.nsPerByte = nsPerByte;
    this.cutAt = this.maxBytes === 0 ? Number.POSITIVE_INFINITY : Math.max(1, Math.min(this.maxBytes, Math.floor(this.budgetNs / Math.max(nsPerByte, 1e-3))));
  }
}
