/**
 * One decode task, wherever it runs: a piscina worker (decode-worker.ts) or, for a batch that is
 * not full at light and medium load, the main thread (inline-decode.ts). Both call this, so a batch gives the same rows,
 * snapshots, Foxglove frames and errors on either side.
 */
import { foxgloveOutput } from './foxglove-output.js';
import type { TaskDecoder } from './select.js';
import type { DecodeResult, DecodeTask } from './worker-protocol.js';

/**
 * Decodes `task` with `decoder` and, when the task names Foxglove subscribers, writes their frames.
 * Bad input is answered (counted in the result), never thrown.
 */
export function decodeTaskWith(decoder: TaskDecoder, task: DecodeTask, threadId: number): DecodeResult {
  const result = decoder.decode(task, threadId);
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

/**
 * Like decodeTaskWith, but a decoder bug (a throw) becomes a result that counts every frame as
 * corrupt, so the caller can count it and go on.
 */
export function decodeTaskOrFault(decoder: TaskDecoder, task: DecodeTask, threadId: number): DecodeResult {
  try {
    return decodeTaskWith(decoder, task, threadId);
  } catch (e) {
    return {
      rows: new Uint8Array(0), rowCount: 0, snapshots: new Uint32Array(0), snapshotTs: new Float64Array(0), live: null,
      frames: task.frameCount, corruptFrames: task.frameCount,
      errors: [{ code: 'internal', message: e instanceof Error ? e.message : String(e) }], threadId,
    };
  }
}
