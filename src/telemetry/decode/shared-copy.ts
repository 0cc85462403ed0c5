/**
 * Copies bytes into or out of a task slot (shared memory) at memcpy speed: the addon's `copyBytes`
 * for copies of {@link NATIVE_MIN_BYTES} and more; `TypedArray.prototype.set` for smaller ones (the
 * call into the addon costs more than V8's copy of a short message: bench/notes/telemetry-ingest.md) and when the addon is
 * not loaded (the JS decoder path: same bytes, slower).
 *
 * Why: V8 copies into or out of a SharedArrayBuffer with relaxed atomic stores, byte by byte when the
 * two sides are not equally aligned: an order of magnitude slower than between ArrayBuffers
 * (`bench/micro/shared-copy.mjs`). At peak the frame packer's copy of each message into its slot and
 * the row arena's copy of pool results out of theirs were a tenth of the gateway's CPU
 * (bench/notes/telemetry-ingest.md, "Target 1: the copies into shared memory").
 */
import { loadNative } from './native.js';

/** Below this many bytes `set` is cheaper than the call into the addon (bench/micro/shared-copy.mjs: equal at ~300). */
export const NATIVE_MIN_BYTES = 256;

/** The addon's copy, null when it is not loaded; undefined until first asked (the addon loads lazily). */
let copyNative: ((dst: Uint8Array, dstOffset: number, src: Uint8Array) => void) | null | undefined;

/**
 * Copies all of `src` into `dst` at `dstOffset`, as `dst.set(src, dstOffset)` does for what callers pass:
 * Uint8Arrays (or Buffers) and a non-negative integer offset; a RangeError when it does not fit. (The
 * addon refuses what `set` would coerce: a fractional or NaN offset, a Uint8ClampedArray, a detached
 * buffer.) Either side may be a view of a SharedArrayBuffer; the caller owns the bytes copied.
 */
export function copyBytes(dst: Uint8Array, dstOffset: number, src: Uint8Array): void {
  if (src.length >= NATIVE_MIN_BYTES) {
    if (copyNative === undefined) copyNative = loadNative().binding?.copyBytes ?? null;
    if (copyNative !== null) {
      copyNative(dst, dstOffset, src);
      return;
    }
  }
  dst.set(src, dstOffset);
}

/** Whether copies of {@link NATIVE_MIN_BYTES} and more go through the addon (false before the first such copy). */
export function copyBytesIsNative(): boolean {
  return typeof copyNative === 'function';
}
