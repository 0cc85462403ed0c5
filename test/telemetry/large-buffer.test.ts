/**
 * Huge-page buffers (large-buffer.ts, native-bridge/src/huge_buffer.cc): what the addon hands out, the
 * advice the kernel records for it (/proc/self/smaps: `hg` in VmFlags is MADV_HUGEPAGE), the mapping's
 * release when V8 collects the buffer, the FLEETGW_HUGE_PAGES switch, and the row arena's use of it. On
 * the JS-decoder pass (the addon disabled) the same calls fall back to V8's own buffers. The advice
 * needs a kernel with transparent huge pages (any mode: `never` still records it); without them the
 * assertions on it are skipped and the buffers must still work.
 */
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { DECODER_ENV, loadNative } from '../../src/telemetry/decode/native.js';
import { parseConfig } from '../../src/config.js';
import { adviseHugePages, ADVISE_MIN_BYTES, HUGE_PAGES_ENV, hugePagesSetting, largeArrayBuffer, setHugePages } from '../../src/telemetry/store/large-buffer.js';
import { RowArena } from '../../src/telemetry/store/row-arena.js';
import { gc, hugePageAdvisedMappings } from '../support/smaps.js';

const MiB = 1024 * 1024;
const fallbackRun = process.env[DECODER_ENV] === 'js';
const binding = loadNative().binding;
/** Whether madvise(MADV_HUGEPAGE) is known to this kernel. */
const thp = existsSync('/sys/kernel/mm/transparent_hugepage/enabled');
const advising = binding !== null && thp;

/** Mappings of exactly `kib` KiB that carry the huge-page advice. */
function advisedMappings(kib: number): number {
  return hugePageAdvisedMappings(kib).size;
}

afterEach(() => {
  setHugePages('on');
});

describe('large buffers on huge pages', () => {
  it('the addon is loaded on the native pass and disabled on the JS pass', () => {
    expect(binding === null).toBe(fallbackRun);
  });

  it('largeArrayBuffer: exactly the bytes asked for, zeroed, writable, in a mapping advised for huge pages', () => {
    const before = advisedMappings(8 * 1024);
    const buf = largeArrayBuffer(8 * MiB - 3);
    expect(buf).toBeInstanceOf(ArrayBuffer);
    expect(buf.byteLength).toBe(8 * MiB - 3);
    const u8 = new Uint8Array(buf);
    expect(u8.every((b) => b === 0)).toBe(true);
    u8.fill(7);
    expect(u8[u8.length - 1]).toBe(7);
    // Rounded up to whole 2 MiB blocks: the mapping is 8 MiB.
    expect(advisedMappings(8 * 1024) - before).toBe(advising ? 1 : 0);
  });

  it('below 2 MiB, or with FLEETGW_HUGE_PAGES=off, the buffer is V8\'s own', () => {
    const before = advisedMappings(2 * 1024);
    expect(largeArrayBuffer(2 * MiB - 1).byteLength).toBe(2 * MiB - 1);
    expect(largeArrayBuffer(0).byteLength).toBe(0);
    expect(advisedMappings(2 * 1024)).toBe(before);
    setHugePages('off');
    const off = advisedMappings(10 * 1024);
    expect(largeArrayBuffer(10 * MiB).byteLength).toBe(10 * MiB);
    expect(advisedMappings(10 * 1024)).toBe(off);
    expect(adviseHugePages(new Uint8Array(new SharedArrayBuffer(ADVISE_MIN_BYTES)))).toBe(0);
  });

  it('FLEETGW_HUGE_PAGES is on or off; anything else names the variable and the values', () => {
    expect(hugePagesSetting()).toBe('on');
    expect(parseConfig({}).hugePages).toBe('on');
    expect(parseConfig({ [HUGE_PAGES_ENV]: 'on' }).hugePages).toBe('on');
    expect(parseConfig({ [HUGE_PAGES_ENV]: 'off' }).hugePages).toBe('off');
    expect(() => parseConfig({ [HUGE_PAGES_ENV]: 'yes' })).toThrow(`${HUGE_PAGES_ENV} must be one of: on, off, got 'yes'`);
  });

  it.skipIf(!advising)('the mapping goes away when V8 collects the buffer', async () => {
    const kib = 6 * 1024;
    const before = advisedMappings(kib);
    let buf: ArrayBuffer | null = binding!.hugePageBuffer(6 * MiB);
    new Uint8Array(buf).fill(1);
    expect(advisedMappings(kib)).toBe(before + 1);
    buf = null;
    for (let i = 0; i < 50 && advisedMappings(kib) > before; i++) {
      gc();
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(buf).toBeNull();
    expect(advisedMappings(kib)).toBe(before);
  });

  it.skipIf(!binding)('hugePageBuffer refuses sizes that are not integers from 1 to 2^30, naming the rule', () => {
    for (const bad of [0, -1, 1.5, 2 ** 30 + 1, Number.NaN]) expect(() => binding!.hugePageBuffer(bad)).toThrow(/integer from 1 to 2\^30/);
    expect(() => binding!.hugePageBuffer('4' as unknown as number)).toThrow(/hugePageBuffer\(bytes: number\)/);
  });

  it('adviseHugePages: the whole 2 MiB blocks inside a SharedArrayBuffer from 32 MiB on, none below', () => {
    const big = new Uint8Array(new SharedArrayBuffer(ADVISE_MIN_BYTES));
    const advised = adviseHugePages(big);
    if (advising) {
      expect(advised % (2 * MiB)).toBe(0);
      expect(advised).toBeGreaterThanOrEqual(ADVISE_MIN_BYTES - 2 * MiB);
      expect(advised).toBeLessThanOrEqual(ADVISE_MIN_BYTES);
    } else {
      expect(advised).toBe(0);
    }
    // Below the floor: glibc may have served it from its heap, where the advice would outlive it.
    expect(adviseHugePages(new Uint8Array(new SharedArrayBuffer(ADVISE_MIN_BYTES - 1)))).toBe(0);
    if (binding) {
      // The addon itself advises any whole blocks it is given; none fit inside 1 MiB.
      expect(binding.adviseHugePages(new Uint8Array(new SharedArrayBuffer(MiB)))).toBe(0);
      expect(() => binding.adviseHugePages([1, 2] as unknown as Uint8Array)).toThrow(/adviseHugePages\(buffer: Uint8Array\)/);
    }
  });

  it("the row arena's buffers are huge-page mappings (4 MiB each, advised), not V8's", () => {
    const before = advisedMappings(4 * 1024);
    const arena = new RowArena({ maxSpare: 4 });
    arena.prefill(3);
    const rows = arena.copy(new Uint8Array(100).fill(1));
    expect(rows.length).toBe(100);
    expect(advisedMappings(4 * 1024) - before).toBe(advising ? 3 : 0);
    arena.release([rows]);
  });
});
