/**
 * Which decoder runs: the C++ addon when it loads, else the hand-rolled JS reader;
 * `FLEETGW_TELEMETRY_DECODER=js` forces the JS reader (and `reference`, the slow protobuf-es path,
 * for diagnosis). The main thread asks too, only to report the choice (ready line, stats): worker
 * threads load the same file with the same environment, so they make the same choice.
 */
import type { DecodeResult, DecodeTask } from './worker-protocol.js';
import { decodeFrameFast } from './fast-reader.js';
import { DECODER_ENV, decodeTaskNative, loadNative } from './native.js';
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
  if (process.env[DECODER_ENV] === 'reference') return decoderOf('reference');
  return loadNative().binding ? decoderOf('native') : decoderOf('js');
}
