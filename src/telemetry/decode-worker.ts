/**
 * Piscina worker: decodes packed TelemetryBatch frames off the main thread and returns, per task,
 * (a) the rows in the store's format, (b) the newest snapshot per robot, (c) live JSON messages for
 * the robots whose fleet has stream subscribers. Output buffers are transferred, not copied.
 *
 * A frame that fails to decode is counted and skipped; the task itself never throws for bad input,
 * so one corrupt robot cannot take the pool down.
 */
import { readlinkSync } from 'node:fs';
import { fromBinary } from '@bufbuild/protobuf';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { TelemetryBatchSchema } from '../gen/fleetgw/v1/telemetry_pb.js';
import { ByteWriter } from './byte-writer.js';
import { liveJsonPrefix, writeLiveJson } from './live-json.js';
import { encodeRowBinaryString, writeRowBinary } from './row-rowbinary.js';
import { escapeTsv, writeTsvRow } from './row-tsv.js';
import { emptyFlatSample, flattenSample, type FlatSample } from './sample-fields.js';
import { buildSnapshot } from './snapshot-build.js';
import type { TelemetrySnapshot } from './snapshot.js';
import {
  FRAME_HEADER_BYTES,
  MAX_ERRORS_PER_RESULT,
  type DecodeResult,
  type DecodeTask,
  type WorkerError,
} from './worker-protocol.js';

/** Per-robot state of one task: encoded ids and the newest sample seen. */
interface RobotSlot {
  rbRobot: Uint8Array | null;
  rbFleet: Uint8Array | null;
  tsvRobot: string;
  tsvFleet: string;
  livePrefix: string | null;
  latest: TelemetrySnapshot | null;
}

/** This thread's Linux tid (/proc/thread-self names the calling thread), read once; 0 elsewhere. */
const THREAD_ID = ((): number => {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').pop()) || 0;
  } catch {
    return 0;
  }
})();

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** Decodes one task; exported for piscina (default) and for direct unit tests. */
export function decodeTask(task: DecodeTask): DecodeResult {
  const { format, robotIds, fleetIds } = task;
  const errors: WorkerError[] = [];
  const slots: RobotSlot[] = robotIds.map((robotId, i) => {
    const fleetId = fleetIds[i] ?? '';
    return {
      rbRobot: format === 'rowbinary' ? encodeRowBinaryString(robotId) : null,
      rbFleet: format === 'rowbinary' ? encodeRowBinaryString(fleetId) : null,
      tsvRobot: format === 'tsv' ? escapeTsv(robotId) : '',
      tsvFleet: format === 'tsv' ? escapeTsv(fleetId) : '',
      livePrefix: task.live?.[i] === 1 ? liveJsonPrefix(robotId, fleetId) : null,
      latest: null,
    };
  });
  // ~120 B per RowBinary row, ~250 B per TSV row; a 90-byte sample is the typical input.
  const rows = new ByteWriter(Math.ceil(task.byteLength * (format === 'tsv' ? 3 : 1.5)) + 1024);
  const live = task.live ? new ByteWriter(task.byteLength * 6 + 1024) : null;
  const liveIndex: number[] = [];
  const view = new DataView(task.frames, 0, task.byteLength);
  const flat: FlatSample = emptyFlatSample();
  let rowCount = 0;
  let corrupt = 0;
  let off = 0;
  let frames = 0;
  for (; frames < task.frameCount; frames++) {
    if (off + FRAME_HEADER_BYTES > task.byteLength) {
      errors.push({ code: 'bad_task', message: `frame ${frames} header past end of buffer` });
      corrupt += task.frameCount - frames;
      break;
    }
    const robotIndex = view.getUint32(off, true);
    const len = view.getUint32(off + 4, true);
    const receivedAtMs = view.getFloat64(off + 8, true);
    const start = off + FRAME_HEADER_BYTES;
    off = start + len;
    const slot = slots[robotIndex];
    if (slot === undefined || off > task.byteLength) {
      errors.push({ code: 'bad_task', message: `frame ${frames} has robot index ${robotIndex}, length ${len}` });
      corrupt += task.frameCount - frames;
      break;
    }
    const rowsMark = rows.pos;
    const liveMark = live?.pos ?? 0;
    const liveIndexMark = liveIndex.length;
    const rowCountMark = rowCount;
    const latestMark = slot.latest;
    try {
      const batch = fromBinary(TelemetryBatchSchema, new Uint8Array(task.frames, start, len));
      for (const sample of batch.samples) {
        flattenSample(sample, receivedAtMs, flat);
        if (format === 'rowbinary') writeRowBinary(rows, slot.rbRobot!, slot.rbFleet!, flat);
        else writeTsvRow(rows, slot.tsvRobot, slot.tsvFleet, flat);
        rowCount++;
        if (slot.latest === null || flat.tsMs >= slot.latest.tsMs) {
          slot.latest = buildSnapshot(robotIds[robotIndex] ?? '', fleetIds[robotIndex] ?? '', flat);
        }
        if (live !== null && slot.livePrefix !== null) {
          const s = live.pos;
          writeLiveJson(live, slot.livePrefix, flat);
          liveIndex.push(robotIndex, s, live.pos);
        }
      }
    } catch (e) {
      // All-or-nothing per frame: roll back whatever this frame had written.
      rows.pos = rowsMark;
      if (live) live.pos = liveMark;
      liveIndex.length = liveIndexMark;
      rowCount = rowCountMark;
      slot.latest = latestMark;
      corrupt++;
      if (errors.length < MAX_ERRORS_PER_RESULT) {
        errors.push({ code: 'corrupt_frame', message: `robot ${robotIds[robotIndex]}: ${message(e)}` });
      }
    }
  }
  const snapshots: TelemetrySnapshot[] = [];
  for (const slot of slots) if (slot.latest) snapshots.push(slot.latest);
  return {
    rows: rows.take(64),
    rowCount,
    snapshots,
    live: live && liveIndex.length > 0
      ? { data: live.take(64), index: Uint32Array.from(liveIndex), robotIds, fleetIds }
      : null,
    frames: task.frameCount,
    corruptFrames: corrupt,
    errors,
    threadId: THREAD_ID,
  };
}

/** Piscina entry point: the result's buffers are moved to the main thread. */
export default function run(task: DecodeTask): unknown {
  let result: DecodeResult;
  try {
    result = decodeTask(task);
  } catch (e) {
    // A bug, not bad input: still answer with data so the main thread can count it and go on.
    result = {
      rows: new Uint8Array(0), rowCount: 0, snapshots: [], live: null, frames: task.frameCount,
      corruptFrames: task.frameCount, errors: [{ code: 'internal', message: message(e) }], threadId: THREAD_ID,
    };
  }
  const transfer: ArrayBufferLike[] = [result.rows.buffer];
  if (result.live) transfer.push(result.live.data.buffer, result.live.index.buffer);
  return move({ [transferableSymbol]: transfer, [valueSymbol]: result });
}
