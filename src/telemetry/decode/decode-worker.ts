/**
 * Piscina worker: decodes packed TelemetryBatch frames off the main thread and returns, per task,
 * (a) the RowBinary rows, (b) which row is each robot's newest (its LMDB snapshot), (c) live JSON
 * messages for the robots whose fleet has stream subscribers, (d) Foxglove frames for the robots a Foxglove
 * socket subscribes to (foxglove-output.ts). Frames are read from the task's shared slot and rows
 * written into it (task-slots.ts); a task without a slot, or rows too large for it, use buffers that
 * are transferred, not copied. The decoder is the C++ addon when it loads, else the hand-rolled JS reader (decode/select.ts).
 *
 * A frame that fails to decode is counted and skipped; the task itself never throws for bad input,
 * so one corrupt robot cannot take the pool down.
 */
import { readlinkSync } from 'node:fs';
import { move, transferableSymbol, valueSymbol, workerData } from 'piscina';
import { setDecoderSetting, type DecoderSetting } from './native.js';
import { chooseDecoder } from './select.js';
import { decodeTaskOrFault, decodeTaskWith } from './decode-task.js';
import type { SharedSlot } from './task-slots.js';
import type { DecodeResult, DecodeTask } from './worker-protocol.js';

/** This thread's Linux tid (/proc/thread-self names the calling thread), read once; 0 elsewhere. */
const THREAD_ID = ((): number => {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').pop()) || 0;
  } catch {
    // Not Linux (no /proc): the id only labels per-thread stats, 0 says "unknown". Nothing to log.
    return 0;
  }
})();

const data = workerData as { slots?: SharedSlot[]; decoder?: DecoderSetting } | undefined;
// The pool's thread chose the decoder (decode-pool.ts); direct unit tests keep this thread's own.
if (data?.decoder !== undefined) setDecoderSetting(data.decoder);
const decoder = chooseDecoder();

/** The ingest's shared task slots (createDecodePool's workerData); none in direct unit tests. */
const slots: { frames: SharedArrayBuffer; rows: Uint8Array }[] = (data?.slots ?? [])
  .map((s) => ({ frames: s.frames, rows: new Uint8Array(s.rows) }));
const EMPTY = new Uint8Array(0);

/** Decodes one task; exported for direct unit tests. */
export function decodeTask(task: DecodeTask): DecodeResult {
  return decodeTaskWith(decoder, task, THREAD_ID);
}

/** Piscina entry point: the result's buffers are moved to the main thread. */
export default function run(task: DecodeTask): unknown {
  const slot = task.slot >= 0 ? slots[task.slot] : undefined;
  if (task.slot >= 0 && slot === undefined) throw new Error(`decode task names slot ${task.slot}, this worker has ${slots.length}`);
  if (slot !== undefined) {
    task.frames = slot.frames;
    task.rowsInto = slot.rows;
  }
  // A bug, not bad input, still answers with data so the main thread can count it and go on.
  const result = decodeTaskOrFault(decoder, task, THREAD_ID);
  const transfer: ArrayBufferLike[] = [result.snapshots.buffer, result.snapshotTs.buffer];
  if (slot !== undefined && result.rows.buffer === slot.rows.buffer) {
    // In the slot: only the length crosses (a view of shared memory would arrive as a new buffer).
    result.rowsInSlot = result.rows.byteLength;
    result.rows = EMPTY;
  } else if (result.rows.byteLength > 0) {
    transfer.push(result.rows.buffer);
  }
  // A private frames buffer goes back too: the main thread reuses it for a later batch.
  if (slot === undefined && task.frames instanceof ArrayBuffer) {
    result.spare = task.frames;
    transfer.push(task.frames);
  }
  if (result.live) transfer.push(result.live.data.buffer, result.live.index.buffer);
  if (result.foxglove) transfer.push(result.foxglove.data.buffer, result.foxglove.index.buffer);
  return move({ [transferableSymbol]: transfer, [valueSymbol]: result });
}
