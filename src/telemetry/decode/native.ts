/**
 * The C++ addon (native-bridge/, built by node-gyp at `npm install`): loaded once per thread, used
 * when present and not disabled. When it cannot be loaded the hand-rolled JS reader runs instead
 * (same output, see decoders.test.ts), and the gateway's ready line says which one runs.
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { liveJsonPrefix, BOUND_LIMITS } from '../sample/index.js';
import { rowBinaryIds } from './id-cache.js';
import { frameError, type DecodeResult, type DecodeTask, type FrameFault, type WorkerError } from './worker-protocol.js';

/** The addon interface version this file speaks: the task protocol and the exported functions (the addon exports its own as `abi`). */
const ABI = 9;

/** The variable that picks the decoder (src/config.ts parses it; `js` or `reference` run without the addon). */
export const DECODER_ENV = 'FLEETGW_TELEMETRY_DECODER';

export type DecoderSetting = 'native' | 'js' | 'reference';

/** This thread's decoder setting: given by the CLI in the main thread, by workerData in a decode worker. */
let setting: DecoderSetting = 'native';

/**
 * Sets this thread's decoder: `js` or `reference` leave the addon unloaded (for every use of it, as
 * the decoder, for huge pages and for Native inserts). Must come before the addon is first loaded.
 * @throws Error when the addon was already loaded (or refused) under another setting
 */
export function setDecoderSetting(value: DecoderSetting): void {
  if (loaded !== null && value !== setting) throw new Error(`${DECODER_ENV}=${value} set after the telemetry addon was loaded under ${setting}`);
  setting = value;
}

/** This thread's decoder setting (the decode pool gives it to its workers). */
export function decoderSetting(): DecoderSetting {
  return setting;
}

interface NativeResult {
  /** A buffer of their own; undefined when the rows were written into `rowsInto`. */
  rows: ArrayBuffer | undefined;
  /** Bytes of rows. */
  rowsLength: number;
  rowCount: number;
  snapshots: Uint32Array;
  snapshotTs: Float64Array;
  live: ArrayBuffer | null;
  liveIndex: Uint32Array | null;
  corrupt: number;
  faults: Int32Array;
  /** (robotIndex, reason, count) triples of bounded strings; null when none. */
  bounded: Uint32Array | null;
}

export interface NativeBinding {
  abi: number;
  decodeTask(frames: Uint8Array, frameCount: number, ids: Uint8Array, idOffsets: Uint32Array,
    live: Uint8Array | null, liveOffsets: Uint32Array | null, rowsInto: Uint8Array | undefined, bounds: Uint32Array): NativeResult;
  formatNumber(v: number): string;
  /** Bytes the calling thread's decoder keeps between tasks (its own rows and live buffers). */
  retainedBytes(): number;
  /** memmove of all of `src` into `dst` at `dstOffset` (shared-copy.ts): Uint8Arrays, a non-negative integer offset; a RangeError when it does not fit. */
  copyBytes(this: void, dst: Uint8Array, dstOffset: number, src: Uint8Array): void;
  /**
   * Whole RowBinary rows (`chunks`, `rowCount` of them) as one ClickHouse Native block written into
   * `out`, on a libuv thread (native-insert.ts), ordered by `sortKey` ([fleet id, robot id, ts_ms]
   * column indexes) when given; resolves to the bytes written. Rejects when a row is cut short or
   * malformed, the rows are not `rowCount`, or `out` is too small. `chunks` and `out` must stay
   * untouched until it settles.
   */
  rowBinaryToNative(chunks: readonly Uint8Array[], rowCount: number, kinds: Uint8Array, headers: Uint8Array,
    headerOffsets: Uint32Array, out: Uint8Array, sortKey?: Int32Array | null): Promise<number>;
  /** CPU seconds the thread pool has spent in {@link rowBinaryToNative} in this process. */
  rowBinaryToNativeCpuSeconds(): number;
  /** Gives the whole pages inside `buffer` back to the kernel (they read as zeros after); returns the bytes released. */
  releasePages(buffer: Uint8Array): number;
  /** A zeroed ArrayBuffer over a 2 MiB-aligned mapping of its own, advised for huge pages (large-buffer.ts); bytes from 1 to 2^30. */
  hugePageBuffer(bytes: number): ArrayBuffer;
  /** Advises huge pages for the whole 2 MiB blocks inside `buffer`; returns the bytes advised. */
  adviseHugePages(buffer: Uint8Array): number;
}

/** Works from src/telemetry/decode and dist/telemetry/decode alike (three levels under the root). */
export const ADDON_PATH = fileURLToPath(new URL('../../../native-bridge/build/Release/fleetgw_telemetry.node', import.meta.url));

let loaded: { binding: NativeBinding | null; reason: string } | null = null;

/** The addon, or null with the reason (not built, disabled, wrong version, failed to load). */
export function loadNative(): { binding: NativeBinding | null; reason: string } {
  if (loaded) return loaded;
  if (setting !== 'native') {
    loaded = { binding: null, reason: `disabled by ${DECODER_ENV}=${setting}` };
  } else if (!existsSync(ADDON_PATH)) {
    loaded = { binding: null, reason: `not built (${ADDON_PATH} is missing: run \`npm run build:native\`)` };
  } else {
    try {
      const binding = createRequire(import.meta.url)(ADDON_PATH) as NativeBinding;
      loaded = binding.abi === ABI
        ? { binding, reason: 'loaded' }
        : { binding: null, reason: `stale build (abi ${binding.abi}, expected ${ABI}: run \`npm run build:native\`)` };
    } catch (e) {
      loaded = { binding: null, reason: `failed to load: ${e instanceof Error ? e.message : String(e)}` };
    }
  }
  return loaded;
}

/** Concatenates byte strings with a start offset per entry (plus the end), as the addon takes them. */
function pack(parts: Uint8Array[]): { bytes: Uint8Array; offsets: Uint32Array } {
  const offsets = new Uint32Array(parts.length + 1);
  let total = 0;
  for (let i = 0; i < parts.length; i++) {
    offsets[i] = total;
    total += parts[i]!.length;
  }
  offsets[parts.length] = total;
  const bytes = new Uint8Array(total);
  for (let i = 0; i < parts.length; i++) bytes.set(parts[i]!, offsets[i]);
  return { bytes, offsets };
}

/** Robot index i's RowBinary robot id then fleet id, at [offsets[i], offsets[i + 1]). */
function packIds(robotIds: readonly string[], fleetIds: readonly string[]): { bytes: Uint8Array; offsets: Uint32Array } {
  const n = robotIds.length;
  const robots = rowBinaryIds(robotIds);
  // A robot without a fleet id (never from the ingest) gets the empty string, as before.
  const fleets = rowBinaryIds(fleetIds.length >= n ? fleetIds : robotIds.map((_, i) => fleetIds[i] ?? ''));
  const offsets = new Uint32Array(n + 1);
  let total = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = total;
    total += robots[i]!.length + fleets[i]!.length;
  }
  offsets[n] = total;
  const bytes = new Uint8Array(total);
  for (let i = 0; i < n; i++) {
    const r = robots[i]!;
    bytes.set(r, offsets[i]);
    bytes.set(fleets[i]!, offsets[i]! + r.length);
  }
  return { bytes, offsets };
}

const encoder = new TextEncoder();
const NO_BYTES = new Uint8Array(0);

/** Runs one task through the addon. */
export function decodeTaskNative(binding: NativeBinding, task: DecodeTask, threadId: number): DecodeResult {
  const ids = packIds(task.robotIds, task.fleetIds);
  const live = task.live
    ? pack(task.robotIds.map((id, i) => (task.live![i] === 1 ? encoder.encode(liveJsonPrefix(id, task.fleetIds[i] ?? '')) : NO_BYTES)))
    : null;
  if (task.frames === undefined) throw new Error('decode task without frames');
  const frames = new Uint8Array(task.frames, 0, Math.min(task.byteLength, task.frames.byteLength));
  const r = binding.decodeTask(frames, task.frameCount, ids.bytes, ids.offsets, live?.bytes ?? null, live?.offsets ?? null, task.rowsInto, BOUND_LIMITS);
  const errors: WorkerError[] = [];
  for (let i = 0; i < r.faults.length; i += 4) {
    errors.push(frameError(r.faults[i] as FrameFault, r.faults[i + 1]!, r.faults[i + 2]!, r.faults[i + 3]!, task.robotIds));
  }
  return {
    rows: r.rows === undefined ? task.rowsInto!.subarray(0, r.rowsLength) : new Uint8Array(r.rows, 0, r.rowsLength),
    rowCount: r.rowCount,
    snapshots: r.snapshots,
    snapshotTs: r.snapshotTs,
    live: r.live && r.liveIndex ? { data: new Uint8Array(r.live), index: r.liveIndex, robotIds: task.robotIds, fleetIds: task.fleetIds } : null,
    frames: task.frameCount,
    corruptFrames: r.corrupt,
    bounded: r.bounded,
    errors,
    threadId,
  };
}
