/**
 * The memory the ingest sets aside and where it slows the robots: the default high-water mark, the
 * row arena's buffers, and the shared task slots the decode tasks use.
 */
import { TaskSlots } from '../decode/index.js';

/**
 * Default {@link TelemetryIngestOptions.highWaterBytes}: 256 MiB. Above the steady queue at peak: a
 * 48 MiB insert block pending, one being spooled and two in the store's inserts are ~190 MiB of rows
 * (plus batches being filled and decoded), so a store that keeps up normally does not pause the
 * robots. With 64 MiB and 16 MiB blocks it did, and the smaller blocks kept the store from catching up
 * (bench/notes/telemetry-ingest.md, "Target 1 on the Intel machine"; memory at peak:
 * bench/README.md#telemetry-ingest-at-peak).
 */
export const DEFAULT_HIGH_WATER_BYTES = 256 * 1024 * 1024;

/** Size of one row buffer (row-arena.ts). */
export const ROW_ARENA_BUFFER_BYTES = 4 * 1024 * 1024;
/**
 * Row buffers allocated at once at peak load: what the high-water mark lets wait (256 MiB, the
 * default: 64), at least 4, at most 64 (setPeakLoad, RowArena.prefill).
 */
const MAX_ROW_ARENA_PREFILL = 64;
/** Most empty row buffers kept, whatever the high-water mark (rowArenaMaxSpares). */
const MAX_ROW_ARENA_SPARES = 96;

/**
 * Row buffers the arena allocates at once at peak load for a high-water mark: what that mark lets
 * wait, in buffers (at least 4, at most {@link MAX_ROW_ARENA_PREFILL}). Two 48 MiB inserts finishing
 * together free 24 buffers, which the next blocks' rows take.
 */
export function rowArenaSpares(highWaterBytes: number): number {
  return Math.min(MAX_ROW_ARENA_PREFILL, Math.max(4, Math.ceil(highWaterBytes / ROW_ARENA_BUFFER_BYTES)));
}

/**
 * Most empty row buffers the arena keeps for a high-water mark: 1.5x what the mark lets wait (96 at
 * the 256 MiB default), at least 4. Why past the mark: the rows held overshoot it (what robots had in
 * flight when paused, rows of tasks in the pool: 79-81 buffers in use at the 256 MiB mark, 38 at 100
 * MiB), and every buffer in use past the spares bound was dropped when its insert finished and
 * allocated again at the next burst. When the store fell behind that was 160 buffers (640 MiB) in
 * 45 s at the 100 MiB mark, old-generation garbage that started a full GC every 1-2 s (bench/notes/telemetry-ingest.md,
 * "Bursts after a pause reuse their buffers"). The arena never keeps more buffers than were in use at once, and gives back those nobody
 * took for 10-20 s below peak load (RowArena.trim). At most 96 (384 MiB), whatever the mark.
 */
export function rowArenaMaxSpares(highWaterBytes: number): number {
  return Math.min(MAX_ROW_ARENA_SPARES, Math.max(4, Math.ceil((highWaterBytes * 1.5) / ROW_ARENA_BUFFER_BYTES)));
}

/** Default {@link TelemetryIngestOptions.maxBatchBytes}: 1 MiB. */
export const DEFAULT_MAX_BATCH_BYTES = 1024 * 1024;
/** Room past the batch bound for its last frame (a larger frame moves the batch to a private buffer). */
const SLOT_FRAME_HEADROOM = 256 * 1024;
/**
 * Rows region per frames byte: a RowBinary row is ~1.8x its protobuf sample with the simulator's
 * samples; rows that do not fit come back in a buffer of their own.
 */
const SLOT_ROWS_PER_FRAME_BYTE = 3;

/**
 * Slots for full batches waiting for a pool task (the pool is busy: after the robots resume from a
 * pause, or while the store's own CPU slows the decode threads). Without them each waiting batch was
 * packed into a private ~1 MiB ArrayBuffer that waited long enough to reach V8's old generation: 650
 * MB of them in 45 s when the store fell behind, which with the row buffers started a full GC every
 * 1-2 s (bench/notes/telemetry-ingest.md, "Bursts after a pause reuse their buffers"). A slot's pages are committed when first written (slots are taken
 * last-freed first), so at light load these cost address space; once a burst wrote into them they stay
 * committed: up to 8 x 5 MiB with the default batch bound (a slot is 1.25x the batch bound for frames
 * and 3x that for rows).
 */
const WAITING_BATCH_SLOTS = 8;

/**
 * The shared task slots for at most `maxTasks` tasks in the pool: those tasks, the batch being filled,
 * two for results waiting to be applied in order, and {@link WAITING_BATCH_SLOTS} for batches waiting
 * for the pool. Each holds a batch of `maxBatchBytes` plus headroom, and its rows.
 */
export function createTaskSlots(maxTasks: number, maxBatchBytes: number): TaskSlots {
  const framesBytes = maxBatchBytes + SLOT_FRAME_HEADROOM;
  return new TaskSlots(maxTasks + 3 + WAITING_BATCH_SLOTS, framesBytes, framesBytes * SLOT_ROWS_PER_FRAME_BYTE);
}
