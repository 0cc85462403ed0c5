/**
 * copyBytes (shared-copy.ts): the same bytes as TypedArray.set into and out of shared memory, below
 * and above the size where the addon takes over, and the same refusals. The addon's own checks run
 * unless this is the fallback run (FLEETGW_TELEMETRY_DECODER=js), where copyBytes is `set` alone.
 */
import { describe, expect, it } from 'vitest';
import { DECODER_ENV, loadNative } from '../../src/telemetry/decode/native.js';
import { copyBytes, copyBytesIsNative, NATIVE_MIN_BYTES } from '../../src/telemetry/decode/shared-copy.js';

const fallbackRun = process.env[DECODER_ENV] === 'js';

function pattern(n: number, seed: number): Uint8Array {
  const b = new Uint8Array(n + 7).subarray(3, 3 + n); // an odd byteOffset: the unaligned case
  for (let i = 0; i < n; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

describe('copyBytes', () => {
  it('copies like set() into and out of a SharedArrayBuffer at odd offsets, below and above the addon threshold', () => {
    for (const n of [0, 1, NATIVE_MIN_BYTES - 1, NATIVE_MIN_BYTES, 12_291]) {
      const src = pattern(n, n);
      const shared = new Uint8Array(new SharedArrayBuffer(n + 64));
      const expected = new Uint8Array(n + 64);
      shared.fill(0xee);
      expected.fill(0xee);
      copyBytes(shared, 5, src);
      expected.set(src, 5);
      expect(Buffer.from(shared).equals(Buffer.from(expected)), `into shared, ${n} bytes`).toBe(true);
      // And back out of shared memory into an ArrayBuffer.
      const out = new Uint8Array(n + 3);
      copyBytes(out, 3, shared.subarray(5, 5 + n));
      expect(Buffer.from(out.subarray(3)).equals(Buffer.from(src)), `out of shared, ${n} bytes`).toBe(true);
      expect(out.subarray(0, 3)).toEqual(new Uint8Array(3));
    }
  });

  it('refuses a copy that does not fit, as set() does, and writes nothing', () => {
    for (const n of [8, NATIVE_MIN_BYTES * 2]) {
      const dst = new Uint8Array(new SharedArrayBuffer(n + 4));
      expect(() => copyBytes(dst, 5, pattern(n, 1))).toThrow(RangeError);
      expect(() => copyBytes(dst, n + 5, new Uint8Array(0))).toThrow(RangeError);
      expect(dst.every((b) => b === 0)).toBe(true);
    }
  });

  it('copies between overlapping views of one buffer like set()', () => {
    const n = NATIVE_MIN_BYTES * 3;
    const a = new Uint8Array(new SharedArrayBuffer(n * 2));
    a.set(pattern(n, 9));
    const b = new Uint8Array(n * 2);
    b.set(pattern(n, 9));
    copyBytes(a, 3, a.subarray(0, n));
    b.set(b.slice(0, n), 3);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });

  it(fallbackRun ? 'copies with set() alone in the fallback run' : 'copies with the addon when it is loaded', () => {
    copyBytes(new Uint8Array(NATIVE_MIN_BYTES), 0, new Uint8Array(NATIVE_MIN_BYTES));
    expect(copyBytesIsNative()).toBe(!fallbackRun);
  });

  it.skipIf(fallbackRun)('the addon checks its arguments: types, offset and length', () => {
    const { copyBytes: native } = loadNative().binding!;
    const dst = new Uint8Array(new SharedArrayBuffer(16));
    const src = new Uint8Array(8).fill(1);
    expect(() => native(dst, 9, src)).toThrow(RangeError);
    // Past the end: dstLen - dstOffset must not wrap around.
    expect(() => native(dst, 17, src)).toThrow(RangeError);
    expect(() => native(dst, 17, new Uint8Array(0))).toThrow(RangeError);
    expect(() => native(dst, Number.POSITIVE_INFINITY, src)).toThrow(RangeError);
    expect(() => native(dst, 2 ** 64, src)).toThrow(RangeError);
    expect(() => native(dst, -1, src)).toThrow(RangeError);
    expect(() => native(dst, 1.5, src)).toThrow(RangeError);
    expect(() => native(dst, Number.NaN, src)).toThrow(RangeError);
    expect(() => native(new Uint16Array(8) as unknown as Uint8Array, 0, src)).toThrow(TypeError);
    expect(() => native(dst, 0, [1, 2] as unknown as Uint8Array)).toThrow(TypeError);
    expect(() => native(dst, '0' as unknown as number, src)).toThrow(TypeError);
    expect(dst.every((b) => b === 0)).toBe(true);
    native(dst, 8, src);
    expect([...dst]).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1]);
  });
});
