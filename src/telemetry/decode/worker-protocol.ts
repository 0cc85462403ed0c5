/**
 * Typed messages between the ingest (main thread) and the decode worker (piscina).
 *
 * Frames buffer layout (little-endian), written by frame-packer.ts:
 *   repeated { robotIndex u32 | byteLength u32 | receivedAtMs f64 | byteLength bytes of TelemetryBatch }
 * `robotIndex` points into `robotIds`/`fleetIds`. The buffer is a shared slot (task-slots.ts), or when
 * none was free a private buffer that is transferred, never copied.
 */

export const FRAME_HEADER_BYTES = 16;

export interface DecodeTask {
  /**
   * The frames when they are not in a shared slot: a private buffer, transferred. In the worker, the
   * slot's shared buffer is put here before decoding, so decoders read `frames` either way.
   */
  frames?: ArrayBuffer | SharedArrayBuffer;
  /** The shared slot (task-slots.ts) holding the frames and receiving the rows; -1: none. */
  slot: number;
  /** Bytes of `frames` in use (the buffer may be larger). */
  byteLength: number;
  frameCount: number;
  robotIds: string[];
  fleetIds: string[];
  /** Per robot index, 1 when its fleet had live subscribers when the task was posted; null: none had. */
  live: Uint8Array | null;
  /**
   * Worker-side only (never posted): where the rows go when they fit (the slot's rows region);
   * otherwise the decoder returns them in a buffer of their own.
   */
  rowsInto?: Uint8Array;
  /**
   * Per robot index, the Foxglove channel kinds some Foxglove socket subscribes to (bits of
   * FOXGLOVE_KINDS in foxglove-channels.ts); absent or null: no Foxglove subscriber in the task.
   */
  foxglove?: Uint8Array | null;
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
  /**
   * Set when the batch was decoded on the main thread for the live stream (live-decoder.ts): the
   * RowBinary rows of the same samples (the stream's binary encoding), `rowSpans` (start, end) pairs
   * into `rows` and `ts` the robot clock of each, in the order of `index`.
   */
  rows?: Uint8Array;
  rowSpans?: Uint32Array;
  ts?: Float64Array;
}

/**
 * Foxglove MESSAGE_DATA frames (foxglove-output.ts): `index` holds quadruples (robotIndex, kind index
 * in FOXGLOVE_KINDS, start, end) into `data`, in sample order; each frame's subscription id is 0.
 */
export interface FoxgloveBatch {
  data: Uint8Array;
  index: Uint32Array;
  robotIds: string[];
}

export interface DecodeResult {
  /** RowBinary rows, columns in sample-table.ts order; empty when they are in the task's slot. */
  rows: Uint8Array;
  /** Set when the rows were written into the task's shared slot: their length there. */
  rowsInSlot?: number;
  rowCount: number;
  /**
   * The newest sample (robot clock; the later one on a tie) of each robot index that had a valid
   * sample, as triples (robotIndex, start, end) into `rows`, by robot index: that row is the robot's
   * LMDB snapshot (snapshot-codec.ts).
   */
  snapshots: Uint32Array;
  /** The robot clock (ms) of each snapshot, in the same order. */
  snapshotTs: Float64Array;
  live: LiveBatch | null;
  /** Frames for Foxglove subscribers; absent or null when the task had none. */
  foxglove?: FoxgloveBatch | null;
  frames: number;
  corruptFrames: number;
  /**
   * Robot-supplied values the decoder cut to their bound (sample-table.ts `bound`), as triples
   * (robotIndex, reason index in BOUND_REASONS, count); null when none was.
   */
  bounded?: Uint32Array | null;
  /** The first few errors of the task (the count is in `corruptFrames`). */
  errors: WorkerError[];
  /** Linux thread id of the worker that ran the task (0 when unknown): CPU per thread from /proc. */
  threadId: number;
  /** The task's private frames buffer (no slot), handed back for a later batch (frame-packer.ts recycle()). */
  spare?: ArrayBuffer;
}

/** How many individual errors a result carries at most (the rest are only counted). */
export const MAX_ERRORS_PER_RESULT = 8;

/** What went wrong with a frame, as every decoder reports it (messages are built in one place). */
export const FrameFault = {
  /** The task buffer ends inside a frame header (a packer bug). */
  HeaderPastEnd: 1,
  /** A header's robot index or length does not fit the task (a packer bug). */
  BadHeader: 2,
  /** The bytes are not a valid TelemetryBatch (the robot's fault). */
  Corrupt: 3,
} as const;
export type FrameFault = (typeof FrameFault)[keyof typeof FrameFault];

/** The error entry of a fault, identical for every decoder. */
export function frameError(fault: FrameFault, frame: number, robotIndex: number, length: number, robotIds: readonly string[]): WorkerError {
  switch (fault) {
    case FrameFault.HeaderPastEnd:
      return { code: 'bad_task', message: `frame ${frame} header past end of buffer` };
    case FrameFault.BadHeader:
      return { code: 'bad_task', message: `frame ${frame} has robot index ${robotIndex}, length ${length}` };
    default:
      return { code: 'corrupt_frame', message: `robot ${robotIds[robotIndex] ?? '?'}: frame ${frame} is not a valid TelemetryBatch` };
  }
}
