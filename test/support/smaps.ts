/**
 * What the kernel says of this process's memory, for the huge-page tests (large-buffer.ts and the
 * Native insert buffers), and a forced GC so buffers collected earlier cannot vanish mid-test.
 */
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Start addresses (hex) of this process's mappings of `minKiB`-`maxKiB` KiB that carry the huge-page
 * advice (`hg` in /proc/self/smaps VmFlags: madvise(MADV_HUGEPAGE)).
 */
export function hugePageAdvisedMappings(minKiB: number, maxKiB = minKiB): Set<string> {
  const found = new Set<string>();
  for (const vma of readFileSync('/proc/self/smaps', 'utf8').split(/\n(?=[0-9a-f]+-[0-9a-f]+ )/)) {
    const kib = Number(/\nSize:\s+(\d+) kB/.exec(vma)?.[1] ?? 0);
    const flags = /\nVmFlags:([^\n]*)/.exec(vma)?.[1]?.split(' ') ?? [];
    if (kib >= minKiB && kib <= maxKiB && flags.includes('hg')) found.add(vma.slice(0, vma.indexOf('-')));
  }
  return found;
}

setFlagsFromString('--expose-gc');
/** V8's full GC (exposed once for the process of the test file that imports this). */
export const gc = runInNewContext('gc') as () => void;
