/**
 * Inserts into a ClickHouse server as Native blocks: the insert block's RowBinary rows (the one row
 * format the decoders write, and what the spool keeps) converted column by column by the addon
 * (native-bridge/src/native_block.cc) on a libuv thread, just before the INSERT.
 *
 * Why: the server parses Native far more cheaply, and need not sort a block already in its key's
 * order: Debian's 18.16 spends about 40% less CPU per row on such inserts than on RowBinary with the
 * same rows (bench/README.md#clickhouse-insert-formats), and at peak load
 * the store, on the same 2-core machine as the gateway, is what falls behind first.
 *
 * When: {@link INSERT_FORMAT_ENV} (`auto`, `native`, `rowbinary`), default `auto`: Native on servers
 * of the legacy flavor (18.x: the types the decoders write are the table's own, checked byte for byte
 * against the server's own Native output by test/telemetry/native-insert.test.ts), RowBinary on modern
 * servers, whose LowCardinality columns would need their own Native encoding (`native` forces it on:
 * for an operator who has checked their server converts). Never without the addon (the JS decoder
 * path keeps RowBinary), and never for a block the addon refuses: that block goes as RowBinary, so a
 * conversion failure never loses rows (counted in {@link NativeInsert.stats}, and logged).
 *
 * Row order: the block goes out ordered by the table's sort key (fleet_id, robot_id, ts: both DDL
 * files say `ORDER BY (fleet_id, robot_id, ts)`, and `ts` follows `ts_ms`), which the server then
 * need not sort itself: less CPU per row again (bench/README.md#clickhouse-insert-formats; native_block.cc).
 *
 * Memory: the converted block needs a buffer at least as large as the block (a block is cut at 48
 * MiB of rows by default, and overshoots that by at most the last decoded batch); buffers are powers
 * of two from 4 MiB (64 MiB for the largest default block), SharedArrayBuffers (below), reused: at
 * most `maxSpare` are kept between inserts (3: the insert queue's 2 inserts in flight and its replay),
 * and one is in use per insert running, so at most 6 exist (384 MiB at peak with default blocks).
 * A kept buffer over 4x what a block needs (and over 16 MiB) is dropped when that block comes, so a
 * peak's buffers are not kept at light load.
 *
 * Why SharedArrayBuffers, though no other thread uses them: V8 counts a new ArrayBuffer's bytes
 * toward starting its next full GC (every 64 MiB buffer started one as a peak began), and does not
 * count a SharedArrayBuffer's (bench/micro/shared-buffer-gc.mjs). The flip side: a dropped one is
 * freed only at some later full GC, so its pages are given back to the kernel when it is dropped
 * (the addon's releasePages: madvise), and only its address space waits for the GC. From 32 MiB
 * their whole 2 MiB blocks are advised for huge pages (large-buffer.ts: why a first fill on 4 KiB pages
 * is costly here).
 */
import { ROWBINARY_TYPES } from './columns.js';
import { adviseHugePages } from './large-buffer.js';
import { encodeRowBinaryString, SAMPLE_FIELDS, type RowType } from '../sample/index.js';
import type { NativeBinding } from '../decode/index.js';
import type { SchemaFlavor } from './schema.js';

/** `auto` (default), `native` or `rowbinary`: how inserts into a ClickHouse server are encoded. */
export const INSERT_FORMAT_ENV = 'FLEETGW_CLICKHOUSE_INSERT_FORMAT';

export type InsertFormat = 'native' | 'rowbinary';

/** Column kinds as native_block.cc numbers them: 0 String, 1/4/8 fixed width, 100 Array(String). */
const KIND: Record<RowType, number> = {
  String: 0, Int64: 8, Float64: 8, Float32: 4, UInt8: 1, Int32: 4, Enum8: 1, 'Array(String)': 100,
};

/** The table's sort key as the converter takes it: the fleet_id, robot_id and ts_ms column indexes. */
export function sortKeyColumns(): Int32Array {
  const at = (column: string): number => SAMPLE_FIELDS.findIndex((f) => f.column === column);
  return Int32Array.from([at('fleet_id'), at('robot_id'), at('ts_ms')]);
}

/** Per column: its kind, and its Native header (name then type, each a varint-prefixed string). */
export function nativeColumns(): { kinds: Uint8Array; headers: Uint8Array; headerOffsets: Uint32Array } {
  const kinds = new Uint8Array(SAMPLE_FIELDS.length);
  const headerOffsets = new Uint32Array(SAMPLE_FIELDS.length + 1);
  const bytes: number[] = [];
  SAMPLE_FIELDS.forEach((f, i) => {
    kinds[i] = KIND[f.rowType];
    headerOffsets[i] = bytes.length;
    // Native spells a column's name and type as RowBinary spells a String.
    bytes.push(...encodeRowBinaryString(f.column), ...encodeRowBinaryString(ROWBINARY_TYPES[f.column]!));
  });
  headerOffsets[SAMPLE_FIELDS.length] = bytes.length;
  return { kinds, headers: Uint8Array.from(bytes), headerOffsets };
}

/** The format a server store inserts with, and why (for the store's start-up log line). */
export function chooseInsertFormat(setting: 'auto' | InsertFormat, flavor: SchemaFlavor, binding: NativeBinding | null): { format: InsertFormat; reason: string } {
  if (setting === 'rowbinary') return { format: 'rowbinary', reason: `${INSERT_FORMAT_ENV}=rowbinary` };
  if (binding === null) return { format: 'rowbinary', reason: 'the telemetry addon is not loaded' };
  if (setting === 'native') return { format: 'native', reason: `${INSERT_FORMAT_ENV}=native` };
  return flavor === 'legacy'
    ? { format: 'native', reason: 'legacy server (before 21): the rows carry the table\'s own types (checked against 18.16\'s own Native output)' }
    : { format: 'rowbinary', reason: `modern server: Native not verified for its LowCardinality columns (${INSERT_FORMAT_ENV}=native forces it)` };
}

export interface NativeInsertStats {
  /** Blocks sent as Native. */
  blocks: number;
  /** Blocks the addon refused, sent as RowBinary instead (0 unless a row in the queue is malformed). */
  fallbacks: number;
  /** Bytes of the converter's buffers kept for the next inserts. */
  bufferBytes: number;
  /** CPU seconds the conversions took on the thread pool (all converters of the process). */
  cpuS: number;
}

/** One converted block: `body` is valid until `release()` (call it once the insert has settled). */
export interface NativeBody {
  body: Uint8Array;
  release(): void;
}

const MiB = 1024 * 1024;
/** The smallest buffer; larger ones are powers of two. */
const MIN_BUFFER = 4 * MiB;

/**
 * Converts insert blocks to Native through the addon, one at a time, reusing its output buffers.
 * One at a time: each conversion holds a libuv pool thread for up to tens of milliseconds, and that
 * pool (4 threads) also writes the spool and the logs; two at once would not finish sooner on 2 cores.
 */
export class NativeInsert {
  private readonly cols = nativeColumns();
  private readonly arrays = [...this.cols.kinds].filter((k) => k === KIND['Array(String)']).length;
  private readonly spare: Uint8Array[] = [];
  private readonly s = { blocks: 0, fallbacks: 0 };
  private readonly sortKey: Int32Array | null;
  /** Settles when the conversion before the next one is done. */
  private turn: Promise<unknown> = Promise.resolve();

  /**
   * @param maxSpare buffers kept between inserts (the insert queue's 2 inserts in flight and its replay: 3)
   * @param sortByKey rows in the table's key order (default); false keeps the order they came in
   */
  constructor(private readonly binding: NativeBinding, private readonly maxSpare = 3, sortByKey = true) {
    this.sortKey = sortByKey ? sortKeyColumns() : null;
  }

  /**
   * The Native block of `chunks` (whole RowBinary rows, `rows` of them, `totalBytes` long), or the
   * reason the addon refused them (then send them as RowBinary).
   */
  convert(chunks: readonly Uint8Array[], totalBytes: number, rows: number): Promise<NativeBody | { error: string }> {
    const run = this.turn.then(() => this.convertNow(chunks, totalBytes, rows));
    this.turn = run.catch(() => undefined);
    return run;
  }

  stats(): NativeInsertStats {
    return { ...this.s, bufferBytes: this.spare.reduce((n, b) => n + b.byteLength, 0), cpuS: this.binding.rowBinaryToNativeCpuSeconds() };
  }

  private async convertNow(chunks: readonly Uint8Array[], totalBytes: number, rows: number): Promise<NativeBody | { error: string }> {
    // Native differs from RowBinary only by the headers and the arrays' 8-byte offsets (RowBinary: a
    // varint of at least 1 byte), so this always suffices.
    const bound = totalBytes + rows * 8 * this.arrays + this.cols.headers.length + 20;
    let out: Uint8Array | null = null;
    let written: number;
    try {
      out = this.take(bound);
      written = await this.binding.rowBinaryToNative(chunks, rows, this.cols.kinds, this.cols.headers, this.cols.headerOffsets, out, this.sortKey);
    } catch (e) {
      if (out !== null) this.give(out);
      this.s.fallbacks++;
      return { error: e instanceof Error ? e.message : String(e) };
    }
    this.s.blocks++;
    let released = false;
    const kept = out;
    return {
      body: kept.subarray(0, written),
      release: () => {
        if (released) return;
        released = true;
        this.give(kept);
      },
    };
  }

  private take(bound: number): Uint8Array {
    // A peak's buffers are not pinned for a trickle of small blocks: those over 4x what this block
    // needs (and over 16 MiB) go back to the GC.
    for (let i = this.spare.length - 1; i >= 0; i--) {
      const len = this.spare[i]!.byteLength;
      if (len > 4 * bound && len > 16 * MiB) this.drop(this.spare.splice(i, 1)[0]!);
    }
    let best = -1;
    for (let i = 0; i < this.spare.length; i++) {
      const len = this.spare[i]!.byteLength;
      if (len >= bound && (best < 0 || len < this.spare[best]!.byteLength)) best = i;
    }
    if (best >= 0) return this.spare.splice(best, 1)[0]!;
    // Powers of two: as blocks grow at the start of a peak, a handful of allocations (4, 8, ... 64
    // MiB) instead of one per 4 MiB step, each of which counts toward V8's next full GC.
    let size = MIN_BUFFER;
    while (size < bound) size *= 2;
    // Shared memory: see the file's comment. Huge pages: large-buffer.ts.
    const b = new Uint8Array(new SharedArrayBuffer(size));
    adviseHugePages(b);
    return b;
  }

  private give(b: Uint8Array): void {
    if (this.spare.length < this.maxSpare) {
      this.spare.push(b);
      return;
    }
    // Keep the larger ones: they serve any block a smaller one serves.
    let smallest = 0;
    for (let i = 1; i < this.spare.length; i++) if (this.spare[i]!.byteLength < this.spare[smallest]!.byteLength) smallest = i;
    if (this.spare[smallest]!.byteLength < b.byteLength) {
      this.drop(this.spare[smallest]!);
      this.spare[smallest] = b;
    } else {
      this.drop(b);
    }
  }

  /** A buffer no longer kept: its pages go back now, not at the next full GC (see the file's comment). */
  private drop(b: Uint8Array): void {
    this.binding.releasePages(b);
  }
}
