/**
 * Memory for the telemetry core's large long-lived buffers, on transparent huge pages when the addon
 * is loaded (native-bridge/src/huge_buffer.cc).
 *
 * Why: on the machines here (Firecracker guests, transparent huge pages in `madvise` mode) the first
 * fill of fresh memory costs 3.5-3.9 ms of CPU per MiB with 4 KiB pages, every time, and 0.13-0.27
 * with 2 MiB pages (2.2 the first time the guest uses that memory): bench/micro/page-touch.mjs. A
 * peak fills the row arena (up to 96 buffers of 4 MiB) and the Native insert buffers within its first
 * seconds, so on 4 KiB pages those first fills cost more CPU than the decoding (bench/README.md, stop
 * 36). Only memory the process asks for gets huge pages in `madvise` mode, and V8 cannot be asked.
 *
 * Cost: a huge page is committed whole, so a buffer filled only partly holds up to 2 MiB more than it
 * was written; the arena fills its buffers front to back, so at most one partly used 2 MiB block per
 * buffer. When the kernel refuses huge pages the buffers work as before, with 4 KiB pages.
 */
import { loadNative } from './decode/native.js';

/**
 * A zeroed ArrayBuffer of `bytes`, over a 2 MiB-aligned mapping advised for huge pages when the
 * addon is loaded (else `new ArrayBuffer`). Its memory is unmapped when V8 collects it; V8 counts it
 * toward its next full GC as it does an ArrayBuffer of its own.
 */
export function largeArrayBuffer(bytes: number): ArrayBuffer {
  const binding = loadNative().binding;
  return binding ? binding.hugePageBuffer(bytes) : new ArrayBuffer(bytes);
}

/**
 * Advises huge pages for the whole 2 MiB blocks inside `view`'s memory (a SharedArrayBuffer's, which
 * only V8 allocates): 15 of 16 for 32 MiB, 1 of 2 for 4 MiB. Returns the bytes advised (0 without the
 * addon, or when none fit).
 */
export function adviseHugePages(view: Uint8Array): number {
  const binding = loadNative().binding;
  return binding ? binding.adviseHugePages(view) : 0;
}
