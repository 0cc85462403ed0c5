/**
 * Where decoded rows wait for their insert: a pool task's rows are copied out of its shared slot into
 * a large buffer shared by many tasks (an inline decode on the main thread writes its rows there in
 * place: {@link RowArena.reserve}), and the buffer is reused once every block that used it has been
 * inserted. A copy of the rows costs far less than the buffers it saves: a fresh buffer per task
 * (~1-2 MB at high rates) is external memory to V8, and every 64 MiB of it starts a full GC.
 *
 * Spares: an emptied buffer is kept for the next rows, up to `maxSpare` (the ingest passes 1.5x its
 * high-water mark in buffers, at least 4: 96 by default, ingest.ts rowArenaMaxSpares), so a steady
 * load and the bursts after a pause reuse the same buffers: at peak the rows waiting for their inserts
 * span dozens of buffers and two inserts finishing together free many at once; with fewer spares kept
 * the others would be dropped after each insert and allocated again (bench/notes/telemetry-ingest.md,
 * "Bursts after a pause reuse their buffers"),
 * each one a 4 MiB ArrayBuffer that lives long enough to reach the old generation, where V8 counts
 * it toward starting the next full GC. Spares nobody took between two {@link RowArena.trim} calls
 * (the ingest calls it every 10 s below peak load) are given back to the GC down to `keepSpare`, so a
 * burst does not pin its peak for long. At peak load the ingest allocates the spares at once and
 * does not trim ({@link RowArena.prefill}: what the high-water mark lets wait, 64 by default;
 * TelemetryIngest.setPeakLoad).
 *
 * Bounds: at most `maxSpare` empty buffers are kept; buffers in use are bounded by the rows the
 * ingest holds: its high-water mark limits what it admits, and the rows held overshoot it by what was
 * in flight when the robots were paused (79-81 buffers in use at the 256 MiB mark). Rows larger than a
 * buffer get a buffer of their own.
 */

import { largeArrayBuffer } from './large-buffer.js';
import { copyBytes } from '../decode/index.js';

export interface RowArenaOptions {
  /** Bytes per buffer (default 4 MiB). */
  bufferBytes?: number;
  /** Most empty buffers kept (default 4). */
  maxSpare?: number;
  /** Spares kept however long they stay unused (default 4, at most maxSpare). */
  keepSpare?: number;
}

interface Arena {
  buf: ArrayBuffer;
  /** Chunks handed out and not yet released. */
  refs: number;
}

export class RowArena {
  private readonly arenas = new Map<ArrayBuffer, Arena>();
  private readonly spare: Arena[] = [];
  private current: Arena | null = null;
  private pos = 0;
  /** Chunks handed out and not released: a chunk counts once, however often it is released. */
  private readonly live = new WeakSet<Uint8Array>();
  private readonly bufferBytes: number;
  private readonly maxSpare: number;
  private readonly keepSpare: number;
  /** Fewest spares there were since the last trim(): that many were not needed in that time. */
  private minSpare = 0;
  /** Buffers allocated since start (a steady load allocates none). */
  allocated = 0;

  constructor(opts: RowArenaOptions = {}) {
    this.bufferBytes = opts.bufferBytes ?? 4 * 1024 * 1024;
    this.maxSpare = opts.maxSpare ?? 4;
    this.keepSpare = Math.min(this.maxSpare, opts.keepSpare ?? 4);
  }

  /** Copies `rows` into an arena buffer; the returned view stays valid until {@link release}d. */
  copy(rows: Uint8Array): Uint8Array {
    const n = rows.length;
    // No rows (every frame of the task was corrupt): nothing to hold, no buffer to pin.
    if (n === 0) return new Uint8Array(0);
    if (n > this.bufferBytes) return rows.slice();
    const out = this.take(this.room(n), n);
    // Out of a shared slot: V8's own copy from there runs at a tenth of memcpy's speed (shared-copy.ts).
    copyBytes(out, 0, rows);
    return out;
  }

  /**
   * The free rest of the current buffer, at least `minBytes` long (a fresh buffer when the current
   * one has less), for a decoder to write rows into in place (the main thread's inline decodes: no
   * copy of the rows afterwards); then {@link commit} what it wrote. Nothing else may use the arena
   * in between. Null when `minBytes` is more than a buffer.
   */
  reserve(minBytes: number): Uint8Array | null {
    if (minBytes > this.bufferBytes) return null;
    const a = this.room(Math.max(1, minBytes));
    return new Uint8Array(a.buf, this.pos, this.bufferBytes - this.pos);
  }

  /** The first `n` bytes of the view {@link reserve} returned, as a chunk like {@link copy}'s. */
  commit(region: Uint8Array, n: number): Uint8Array {
    const a = this.current;
    if (a === null || region.buffer !== a.buf || region.byteOffset !== this.pos || n > region.byteLength) {
      throw new Error('row arena: commit of a region that is not the last one reserved');
    }
    if (n === 0) return new Uint8Array(0);
    return this.take(a, n);
  }

  /** The current buffer when it has `n` free bytes, else a spare or fresh one (the current one retired). */
  private room(n: number): Arena {
    let a = this.current;
    if (a === null || this.pos + n > this.bufferBytes) {
      if (a !== null) this.retire(a);
      a = this.spare.pop() ?? this.fresh();
      if (this.spare.length < this.minSpare) this.minSpare = this.spare.length;
      this.current = a;
      this.pos = 0;
    }
    return a;
  }

  /** Hands out the next `n` bytes of `a` (the current buffer) as a chunk. */
  private take(a: Arena, n: number): Uint8Array {
    const out = new Uint8Array(a.buf, this.pos, n);
    this.pos += n;
    a.refs++;
    this.live.add(out);
    return out;
  }

  /** Chunks (from {@link copy} or {@link commit}) nothing reads any more; others are ignored. */
  release(chunks: readonly Uint8Array[]): void {
    for (const c of chunks) {
      if (!this.live.delete(c)) continue;
      const a = this.arenas.get(c.buffer as ArrayBuffer);
      if (a === undefined || a.refs === 0) continue;
      a.refs--;
      if (a.refs === 0 && a !== this.current) this.retire(a);
    }
  }

  /** Empty buffers kept for reuse. */
  get spares(): number {
    return this.spare.length;
  }

  /** Buffers this arena holds (in use, current and spare): its memory is this many times bufferBytes. */
  get buffers(): number {
    return this.arenas.size;
  }

  /**
   * Allocates spares until the arena holds `buffers` buffers (in use and spare; at most `maxSpare`
   * spares). For a sustained peak, so its buffers are allocated at once rather than one by one as its
   * queue first grows: V8 counts external memory allocated since its last full GC toward starting the
   * next one, so 4 MiB buffers added one at a time kept it marking every ~0.35 s while a peak began
   * (bench/notes/telemetry-ingest.md, "Target 1: full GCs as a peak begins"). Allocated together they start one full GC (V8's external memory
   * pressure), and then none while the arena stays within them. A fresh buffer's pages are committed
   * only when first written (2 MiB at a time on huge pages), so spares a load never reaches cost
   * address space, not memory.
   */
  prefill(buffers: number): void {
    // At the front: the spares used last (pages already committed) are taken first.
    while (this.arenas.size < buffers && this.spare.length < this.maxSpare) this.spare.unshift(this.fresh());
  }

  /**
   * Drops the spares nobody took since the previous call (down to keepSpare): the caller's interval
   * is the window. The ingest calls it every 10 s below peak load, so an idle gateway gives its spares back.
   */
  trim(): void {
    let drop = Math.min(this.minSpare, this.spare.length - this.keepSpare);
    while (drop-- > 0) this.arenas.delete(this.spare.shift()!.buf);
    this.minSpare = this.spare.length;
  }

  private fresh(): Arena {
    this.allocated++;
    // Huge pages: a peak fills its buffers within seconds, and on 4 KiB pages that first fill cost
    // more CPU than the decoding (large-buffer.ts). Such a buffer is the addon's: it cannot be
    // transferred to another thread, so neither it nor a chunk of it may go in a transferList.
    const a = { buf: largeArrayBuffer(this.bufferBytes), refs: 0 };
    this.arenas.set(a.buf, a);
    return a;
  }

  /** A buffer no longer written to: kept as a spare once empty, else dropped at its last release. */
  private retire(a: Arena): void {
    if (a.refs > 0) return;
    if (this.spare.length < this.maxSpare && !this.spare.includes(a)) this.spare.push(a);
    else if (!this.spare.includes(a)) this.arenas.delete(a.buf);
  }
}
