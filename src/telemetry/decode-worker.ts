/**
 * Piscina worker: decodes packed TelemetryBatch frames off the main thread and returns, per task,
 * (a) the RowBinary rows, (b) which row is each robot's newest (its LMDB snapshot), (c) live JSON
 * messages for the robots whose fleet has stream subscribers, (d) Foxglove frames for the robots a Foxglove
 * socket subscribes to (foxglove-output.ts). Output buffers are transferred, not
 * copied. The decoder is the C++ addon when it loads, else the hand-rolled JS reader (decode/select.ts).
 *
 * A frame that fails to decode is counted and skipped; the task itself never throws for bad input,
 * so one corrupt robot cannot take the pool down.
 */
import { readlinkSync } from 'node:fs';
import { move, transferableSymbol, valueSymbol } from 'piscina';
import { chooseDecoder } from './decode/select.js';
import { foxgloveOutput } from './foxglove-output.js';
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

const decoder = chooseDecoder();

/** Decodes one task; exported for piscina (default) and for direct unit tests. */
export function decodeTask(task: DecodeTask): DecodeResult {
  const result = decoder.decode(task, THREAD_ID);
  // Read back from the rows every decoder writes alike (foxglove-output.ts says why).
  if (task.foxglove) {
    try {
      result.foxglove = foxgloveOutput(result.rows, task.robotIds, task.foxglove);
    } catch (e) {
      // A bug in the Foxglove writer must not cost the rows their insert: only the frames are lost.
      result.errors.push({ code: 'internal', message: `foxglove output: ${e instanceof Error ? e.message : String(e)}` });
    }
  }
  return result;
}

/** Piscina entry point: the result's buffers are moved to the main thread. */
export default function run(task: DecodeTask): unknown {
  let result: DecodeResult;
  try {
    result = decodeTask(task);
  } catch (e) {
    // A bug, not bad input: still answer with data so the main thread can count it and go on.
    result = {
      rows: new Uint8Array(0), rowCount: 0, snapshots: new Uint32Array(0), snapshotTs: new Float64Array(0), live: null,
      frames: task.frameCount, corruptFrames: task.frameCount,
      errors: [{ code: 'internal', message: e instanceof Error ? e.message : String(e) }], threadId: THREAD_ID,
    };
  }
  // The frames buffer goes back too: the main thread reuses it for a later batch.
  result.spare = task.frames;
  const transfer: ArrayBufferLike[] = [result.rows.buffer, result.snapshots.buffer, result.snapshotTs.buffer, task.frames];
  if (result.live) transfer.push(result.live.data.buffer, result.live.index.buffer);
  if (result.foxglove) transfer.push(result.foxglove.data.buffer, result.foxglove.index.buffer);
  return move({ [transferableSymbol]: transfer, [valueSymbol]: result });
}
