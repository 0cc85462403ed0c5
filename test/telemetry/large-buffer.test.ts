/**
 * Huge-page buffers (large-buffer.ts, native-bridge/src/huge_buffer.cc): what the addon hands out, the
 * advice the kernel records for it (/proc/self/smaps: `hg` in VmFlags is MADV_HUGEPAGE), and the row
 * arena's use of it. On the JS-decoder pass (the addon disabled) the same calls fall back to V8's own
 * buffers.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DECODER_ENV, loadNative } from '../../src/telemetry/decode/native.js';
import { adviseHugePages, largeArrayBuffer } from '../../src/telemetry/large-buffer.js';
import { RowArena } from '../../src/telemetry/row-arena.js';

const MiB = 1024 * 1024;
const fallbackRun = process.env[DECODER_ENV] === 'js';
const binding = loadNative().binding;

/** Mappings of exactly `kib` KiB that carry the huge-page advice. */
function advisedMappings(kib: number): number {
  let n = 0;
  for (const vma of readFileSync('/proc/self/smaps', 'utf8').split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)) {
    const size = /\nSize:\s+(\d+) kB/.exec(vma);
    const flags = /\nVmFlags:([^\n]*)/.exec(vma);
    if (size && Number(size[1]) === kib && flags && flags[1]!.split(' ').includes('hg')) n++;
  }
  return n;
}

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
    expect(advisedMappings(8 * 1024) - before).toBe(binding ? 1 : 0);
  });

  it.skipIf(!binding)('hugePageBuffer refuses sizes that are not integers from 1 to 2^30, naming the rule', () => {
    for (const bad of [0, -1, 1.5, 2 ** 30 + 1, Number.NaN]) expect(() => binding!.hugePageBuffer(bad)).toThrow(/integer from 1 to 2\^30/);
    expect(() => binding!.hugePageBuffer('4' as unknown as number)).toThrow(/hugePageBuffer\(bytes: number\)/);
  });

  it('adviseHugePages: the whole 2 MiB blocks inside a SharedArrayBuffer, none inside a small one', () => {
    const big = new Uint8Array(new SharedArrayBuffer(8 * MiB));
    const advised = adviseHugePages(big);
    if (binding) {
      expect(advised % (2 * MiB)).toBe(0);
      expect(advised).toBeGreaterThanOrEqual(6 * MiB);
      expect(advised).toBeLessThanOrEqual(8 * MiB);
    } else {
      expect(advised).toBe(0);
    }
    expect(adviseHugePages(new Uint8Array(new SharedArrayBuffer(MiB)))).toBe(0);
    if (binding) expect(() => binding.adviseHugePages([1, 2] as unknown as Uint8Array)).toThrow(/adviseHugePages\(buffer: Uint8Array\)/);
  });

  it("the row arena's buffers are huge-page mappings (4 MiB each, advised), not V8's", () => {
    const before = advisedMappings(4 * 1024);
    const arena = new RowArena({ maxSpare: 4 });
    arena.prefill(3);
    const rows = arena.copy(new Uint8Array(100).fill(1));
    expect(rows.length).toBe(100);
    expect(advisedMappings(4 * 1024) - before).toBe(binding ? 3 : 0);
    arena.release([rows]);
  });
});
