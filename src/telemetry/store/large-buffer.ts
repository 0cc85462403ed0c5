/**
 * Memory for the telemetry core's large long-lived buffers, on transparent huge pages when the addon
 * is loaded (native-bridge/src/huge_buffer.cc).
 *
 * Why: on the machines here (Firecracker guests, transparent huge pages in `madvise` mode) the first
 * fill of fresh memory costs an order of magnitude more CPU with 4 KiB pages than with 2 MiB pages
 * (figures: bench/micro/page-touch.mjs and bench/notes/telemetry-ingest.md). A
 * peak fills the row arena (up to 96 buffers of 4 MiB) and the Native insert buffers within its first
 * seconds, so on 4 KiB pages those first fills cost more CPU than the decoding (bench/notes/telemetry-ingest.md,
 * "The row buffers on huge pages"). Only memory the process asks for gets huge pages in `madvise` mode, and V8 cannot be asked.
 *
 * Cost: a huge page is committed whole, so a buffer filled only partly holds up to 2 MiB more than was
 * written; the arena fills its buffers front to back, so at most one partly used 2 MiB block per
 * buffer. With the kernel's `defrag` setting at `madvise` (the default), a huge-page fault on a
 * fragmented host may compact memory first. `FLEETGW_HUGE_PAGES=off` turns it all off
 * (docs/operations.md). When the kernel has no huge pages, or a mapping fails, the buffers are V8's
 * own, with 4 KiB pages; nothing else changes.
 */
import { loadNative } from '../decode/index.js';

export const HUGE_PAGES_ENV = 'FLEETGW_HUGE_PAGES';

/** Below this a buffer is V8's own: a huge page would commit 2 MiB for it. */
export const HUGE_PAGE_MIN_BYTES = 2 * 1024 * 1024;

/**
 * SharedArrayBuffers are advised from this size on: glibc serves smaller ones from its heap once its
 * mmap threshold has risen (up to 32 MiB), and advice there would outlive the buffer, for whatever
 * small allocations take that memory next. At this size calloc always maps memory of its own.
 */
export const ADVISE_MIN_BYTES = 32 * 1024 * 1024;

/** FLEETGW_HUGE_PAGES of this process (src/config.ts parses it; the gateway's options set it). */
let hugePages: 'on' | 'off' = 'on';

/** Turns huge pages on (the default) or off for the buffers made from now on. */
export function setHugePages(value: 'on' | 'off'): void {
  hugePages = value;
}

/** Whether huge pages are on or off. */
export function hugePagesSetting(): 'on' | 'off' {
  return hugePages;
}

/** Set once a huge-page buffer could not be had (out of mappings, a Node without external buffers): V8's from then on. */
let failed = false;

function binding() {
  if (failed || hugePagesSetting() === 'off') return null;
  return loadNative().binding;
}

/**
 * A zeroed ArrayBuffer of `bytes`: from 2 MiB on, over a 2 MiB-aligned mapping advised for huge
 * pages when the addon is loaded and huge pages are on; else (or if that mapping fails) `new
 * ArrayBuffer`. Its memory is unmapped when V8 collects it; V8 counts it toward its next full GC as it
 * does an ArrayBuffer of its own.
 */
export function largeArrayBuffer(bytes: number): ArrayBuffer {
  const b = bytes >= HUGE_PAGE_MIN_BYTES ? binding() : null;
  if (b !== null) {
    try {
      return b.hugePageBuffer(bytes);
    } catch {
      failed = true;
    }
  }
  return new ArrayBuffer(bytes);
}

/**
 * Advises huge pages for the whole 2 MiB blocks inside `view`'s memory (a SharedArrayBuffer's, which
 * only V8 allocates), for views of at least {@link ADVISE_MIN_BYTES}: 15 of 16 blocks for 32 MiB.
 * Returns the bytes advised (0 without the addon, with huge pages off, or for a smaller view).
 */
export function adviseHugePages(view: Uint8Array): number {
  const b = view.byteLength >= ADVISE_MIN_BYTES ? binding() : null;
  return b === null ? 0 : b.adviseHugePages(view);
}
