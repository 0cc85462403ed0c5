/**
 * Typed messages between the ingest (main thread) and the decode worker (piscina).
 *
 * Frames buffer layout (little-endian), written by frame-packer.ts:
 *   repeated { robotIndex u32 | byteLength u32 | receivedAtMs f64 | byteLength bytes of TelemetryBatch }
 * `robotIndex` points into `robotIds`/`fleetIds`. The buffer is transferred, never copied.
 */
import type { TelemetrySnapshot } from './snapshot.js';

/**
 * Row encoding the store wants. Both stores take RowBinary (chdb through a spool file, chdb-store.ts);
 * TSV remains for a store that only accepts text.
 */
export type RowFormat = 'rowbinary' | 'tsv';

export const FRAME_HEADER_BYTES = 16;

export interface DecodeTask {
  format: RowFormat;
  frames: ArrayBuffer;
  /** Bytes of `frames` in use (the buffer may be larger). */
  byteLength: number;
  frameCount: number;
  robotIds: string[];
  fleetIds: string[];
  /** Per robot index, 1 when its fleet had live subscribers when the task was posted; null: none had. */
  live: Uint8Array | null;
}

/** Errors cross the thread boundary as plain data, never as class instances. */
export interface WorkerError {
  code: 'corrupt_frame' | 'bad_task' | 'internal';
  message: string;
}

/** Live JSON messages: `index` holds triples (robotIndex, start, end) into `data`, in sample order. */
export interface LiveBatch {
  data: Uint8Array;
  index: Uint32Array;
  robotIds: string[];
  fleetIds: string[];
}

export interface DecodeResult {
  rows: Uint8Array;
  rowCount: number;
  /** The newest sample (by robot clock) of each robot in the task. */
  snapshots: TelemetrySnapshot[];
  live: LiveBatch | null;
  frames: number;
  corruptFrames: number;
  /** The first few errors of the task (the count is in `corruptFrames`). */
  errors: WorkerError[];
  /** Linux thread id of the worker that ran the task (0 when unknown): CPU per thread from /proc. */
  threadId: number;
}

/** How many individual errors a result carries at most (the rest are only counted). */
export const MAX_ERRORS_PER_RESULT = 8;
