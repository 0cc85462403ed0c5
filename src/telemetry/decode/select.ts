/**
 * Which decoder runs: the C++ addon when it loads, else the hand-rolled JS reader;
 * `FLEETGW_TELEMETRY_DECODER=js` forces the JS reader (and `reference`, the slow protobuf-es path,
 * for diagnosis). The main thread asks too, only to report the choice (ready line, stats): worker
 * threads get the same setting through their workerData (decode-pool.ts), so they make the same choice.
 */
import type { DecodeResult, DecodeTask } from './worker-protocol.js';
import { decodeFrameFast } from './fast-reader.js';
import { decoderSetting, decodeTaskNative, loadNative } from './native.js';
import { decodeFrameReference } from './reference.js';
import { decodeFrames } from './task-output.js';

export type DecoderKind = 'native' | 'js' | 'reference';

export interface TaskDecoder {
  readonly kind: DecoderKind;
  /** Why the addon is not used ('loaded' when it is). */
  readonly nativeStatus: string;
  decode(task: DecodeTask, threadId: number): DecodeResult;
}

/** The decoder of a given kind (tests run all three on the same tasks). */
export function decoderOf(kind: DecoderKind): TaskDecoder {
  const native = loadNative();
  if (kind === 'native') {
    const binding = native.binding;
    if (!binding) throw new Error(`telemetry decoder addon: ${native.reason}`);
    return { kind, nativeStatus: native.reason, decode: (task, tid) => decodeTaskNative(binding, task, tid) };
  }
  const frame = kind === 'js' ? decodeFrameFast : decodeFrameReference;
  return { kind, nativeStatus: native.reason, decode: (task, tid) => decodeFrames(task, frame, tid) };
}

/** The decoder this process uses. */
export function chooseDecoder(): TaskDecoder {
  if (decoderSetting() === 'reference') return decoderOf('reference');
  return loadNative().binding ? decoderOf('native') : decoderOf('js');
}
