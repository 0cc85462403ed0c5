/**
 * The outputs of one decode task for the JavaScript decoders (fast-reader.ts, reference.ts): rows,
 * each robot's newest row as its snapshot, live messages; all-or-nothing per frame (a frame that fails
 * half way is rolled back). The C++ addon keeps the same rules in native-bridge/src/.
 *
 * The writers are reused by every task of a worker thread (the result is copied out at its exact size,
 * transferable), so a task allocates its outputs once instead of growing fresh zero-filled buffers.
 */
import { ByteWriter, liveJsonPrefix, BOUND_REASONS } from '../sample/index.js';
import { rowBinaryIds } from './id-cache.js';
import {
  FRAME_HEADER_BYTES,
  FrameFault,
  frameError,
  MAX_ERRORS_PER_RESULT,
  type DecodeResult,
  type DecodeTask,
} from './worker-protocol.js';

const rowsWriter = new ByteWriter(1024 * 1024);
const liveWriter = new ByteWriter(64 * 1024);
const encoder = new TextEncoder();

/** Per-frame decoder: throws on bytes that are not a valid TelemetryBatch. */
export type FrameDecoder = (out: TaskOutput, u8: Uint8Array, view: DataView, start: number, end: number, robotIndex: number, receivedAtMs: number) => void;

export class TaskOutput {
  readonly rows = rowsWriter;
  /** null when no robot of the task is live. */
  readonly live: ByteWriter | null;
  readonly liveIndex: number[] = [];
  /** Per robot index: RowBinary robot id (length-prefixed), written at the head of every row. */
  readonly rbRobot: Uint8Array[];
  /** Per robot index: RowBinary fleet id, written after the robot id. */
  readonly rbFleet: Uint8Array[];
  /** Per robot index: the live message head up to `"ts_ms":`, or null when its fleet is not live. */
  readonly livePrefix: (Uint8Array | null)[];
  rowCount = 0;
  /** The current frame's bounded values by reason (sample-table.ts BOUND_REASONS); zeroed by {@link mark}. */
  readonly frameBounds = new Uint32Array(BOUND_REASONS.length);
  /** Triples (robotIndex, reason, count) of the frames decoded so far. */
  private readonly bounded: number[] = [];
  // Newest sample per robot index: its row [start, end) and robot clock (signed hi, unsigned lo words).
  private readonly snapStart: Int32Array;
  private readonly snapEnd: Int32Array;
  private readonly snapHi: Int32Array;
  private readonly snapLo: Uint32Array;
  // Frame marks for the rollback.
  private mRows = 0;
  private mLive = 0;
  private mLiveIndex = 0;
  private mRowCount = 0;
  private mRobot = 0;
  private mStart = -1;
  private mEnd = -1;
  private mHi = 0;
  private mLo = 0;

  constructor(readonly task: DecodeTask) {
    const n = task.robotIds.length;
    this.rows.pos = 0;
    this.live = task.live ? liveWriter : null;
    if (this.live) this.live.pos = 0;
    this.rbRobot = rowBinaryIds(task.robotIds);
    this.rbFleet = rowBinaryIds(task.fleetIds);
    this.livePrefix = task.robotIds.map((id, i) => (task.live?.[i] === 1 ? encoder.encode(liveJsonPrefix(id, task.fleetIds[i] ?? '')) : null));
    this.snapStart = new Int32Array(n).fill(-1);
    this.snapEnd = new Int32Array(n);
    this.snapHi = new Int32Array(n);
    this.snapLo = new Uint32Array(n);
  }

  /** Marks the state before a frame of `robotIndex`, for {@link rollback}. */
  mark(robotIndex: number): void {
    this.mRows = this.rows.pos;
    this.mLive = this.live?.pos ?? 0;
    this.mLiveIndex = this.liveIndex.length;
    this.mRowCount = this.rowCount;
    this.mRobot = robotIndex;
    this.mStart = this.snapStart[robotIndex]!;
    this.mEnd = this.snapEnd[robotIndex]!;
    this.mHi = this.snapHi[robotIndex]!;
    this.mLo = this.snapLo[robotIndex]!;
    this.frameBounds.fill(0);
  }

  /** The frame of `robotIndex` decoded: its bounded values join the result. */
  commitBounds(robotIndex: number): void {
    const b = this.frameBounds;
    for (let i = 0; i < b.length; i++) if (b[i] !== 0) this.bounded.push(robotIndex, i, b[i]!);
  }

  /** Undoes everything written since {@link mark}. */
  rollback(): void {
    this.rows.pos = this.mRows;
    if (this.live) this.live.pos = this.mLive;
    this.liveIndex.length = this.mLiveIndex;
    this.rowCount = this.mRowCount;
    const r = this.mRobot;
    this.snapStart[r] = this.mStart;
    this.snapEnd[r] = this.mEnd;
    this.snapHi[r] = this.mHi;
    this.snapLo[r] = this.mLo;
  }

  /** A row [start, rows.pos) was written for a sample at robot clock (hi, lo): it becomes the snapshot if newest. */
  rowDone(robotIndex: number, start: number, hi: number, lo: number): void {
    this.rowCount++;
    const sh = this.snapHi[robotIndex]!;
    if (this.snapStart[robotIndex] === -1 || hi > sh || (hi === sh && lo >= this.snapLo[robotIndex]!)) {
      this.snapStart[robotIndex] = start;
      this.snapEnd[robotIndex] = this.rows.pos;
      this.snapHi[robotIndex] = hi;
      this.snapLo[robotIndex] = lo;
    }
  }

  /** A live message [start, live.pos) was written for `robotIndex`. */
  liveDone(robotIndex: number, start: number): void {
    this.liveIndex.push(robotIndex, start, this.live!.pos);
  }

  finish(corrupt: number, errors: DecodeResult['errors'], threadId: number): DecodeResult {
    let count = 0;
    for (let i = 0; i < this.snapStart.length; i++) if (this.snapStart[i] !== -1) count++;
    const snapshots = new Uint32Array(count * 3);
    const snapshotTs = new Float64Array(count);
    let k = 0;
    for (let i = 0; i < this.snapStart.length; i++) {
      if (this.snapStart[i] === -1) continue;
      snapshots[k * 3] = i;
      snapshots[k * 3 + 1] = this.snapStart[i]!;
      snapshots[k * 3 + 2] = this.snapEnd[i]!;
      // Correctly rounded like Number(bigint): hi * 2^32 is exact, the sum rounds once.
      snapshotTs[k++] = this.snapHi[i]! * 4294967296 + this.snapLo[i]!;
    }
    const t = this.task;
    return {
      rows: this.rows.copyOut(t.rowsInto),
      rowCount: this.rowCount,
      snapshots,
      snapshotTs,
      live: this.live && this.liveIndex.length > 0
        ? { data: this.live.copyOut(), index: Uint32Array.from(this.liveIndex), robotIds: t.robotIds, fleetIds: t.fleetIds }
        : null,
      frames: t.frameCount,
      corruptFrames: corrupt,
      bounded: this.bounded.length > 0 ? Uint32Array.from(this.bounded) : null,
      errors,
      threadId,
    };
  }
}

/**
 * Runs `decodeFrame` over every frame of the task: header checks, rollback of a frame that fails,
 * counted and reported errors. The same rules as the C++ addon's task loop.
 */
export function decodeFrames(task: DecodeTask, decodeFrame: FrameDecoder, threadId: number): DecodeResult {
  const out = new TaskOutput(task);
  if (task.frames === undefined) throw new Error('decode task without frames');
  const u8 = new Uint8Array(task.frames, 0, task.byteLength);
  const view = new DataView(task.frames, 0, task.byteLength);
  const errors: DecodeResult['errors'] = [];
  const robots = task.robotIds.length;
  let corrupt = 0;
  let off = 0;
  for (let frame = 0; frame < task.frameCount; frame++) {
    if (off + FRAME_HEADER_BYTES > task.byteLength) {
      errors.push(frameError(FrameFault.HeaderPastEnd, frame, 0, 0, task.robotIds));
      corrupt += task.frameCount - frame;
      break;
    }
    const robotIndex = view.getUint32(off, true);
    const len = view.getUint32(off + 4, true);
    const receivedAtMs = view.getFloat64(off + 8, true);
    const start = off + FRAME_HEADER_BYTES;
    off = start + len;
    if (robotIndex >= robots || off > task.byteLength) {
      errors.push(frameError(FrameFault.BadHeader, frame, robotIndex, len, task.robotIds));
      corrupt += task.frameCount - frame;
      break;
    }
    out.mark(robotIndex);
    try {
      decodeFrame(out, u8, view, start, off, robotIndex, receivedAtMs);
      out.commitBounds(robotIndex);
    } catch {
      // All or nothing per frame. Why it failed is not kept: the three decoders word it differently,
      // and the robot's bytes are what an operator needs (they are not logged either: size).
      out.rollback();
      corrupt++;
      if (errors.length < MAX_ERRORS_PER_RESULT) errors.push(frameError(FrameFault.Corrupt, frame, robotIndex, len, task.robotIds));
    }
  }
  return out.finish(corrupt, errors, threadId);
}
