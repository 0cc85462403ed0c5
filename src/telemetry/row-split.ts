/**
 * Splits RowBinary telemetry rows by shard (issue 14 part 4, docs/scale-out.md): the cluster store
 * writes each robot's rows to the shard that owns the robot. Rows are walked with the field table's
 * wire types (sample-table.ts), never decoded: a few byte reads per column, and the robot id (the
 * first column) is compared with the previous row's bytes, so a run of one robot's rows (a batch is
 * one robot) costs one shard lookup.
 *
 * The split is deterministic: the same block bytes give the same per-shard bytes, in the same order,
 * however the block is chunked (in memory or read back from the spool). ReplicatedMergeTree drops a
 * retried block only when it is byte-identical, so this is what makes a retry safe.
 */
import { SAMPLE_FIELDS, type RowType } from './sample-table.js';

/** Bytes of each fixed-width wire type; 0 for the variable ones (String, Array(String)). */
const FIXED: Record<RowType, number> = {
  String: 0, 'Array(String)': 0, Int64: 8, Float64: 8, Float32: 4, UInt8: 1, Int32: 4, Enum8: 1,
};

/** Column layout as runs: fixed bytes to skip, or a variable column. Built once. */
const LAYOUT: readonly (number | 'String' | 'Array(String)')[] = (() => {
  const out: (number | 'String' | 'Array(String)')[] = [];
  for (const f of SAMPLE_FIELDS.slice(1)) {
    const n = FIXED[f.rowType];
    if (n === 0) out.push(f.rowType as 'String' | 'Array(String)');
    else if (typeof out[out.length - 1] === 'number') (out[out.length - 1] as number) += n;
    else out.push(n);
  }
  return out;
})();

if (SAMPLE_FIELDS[0]?.column !== 'robot_id' || SAMPLE_FIELDS[0].rowType !== 'String') throw new Error('row-split expects robot_id String as the first column');

/** Reads a LEB128 length at `pos`; returns [value, next pos] or null when torn. */
function varint(buf: Uint8Array, pos: number): [number, number] | null {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 5; i++) {
    if (pos >= buf.length) return null;
    const b = buf[pos++]!;
    v += (b & 0x7f) * mul;
    if (b < 0x80) return [v, pos];
    mul *= 128;
  }
  return null;
}

/** End offset of the row starting at `pos` whose robot id ends at `afterId`. */
function rowEnd(buf: Uint8Array, afterId: number): number {
  let pos = afterId;
  for (const step of LAYOUT) {
    if (typeof step === 'number') pos += step;
    else if (step === 'String') {
      const r = varint(buf, pos);
      if (r === null) return -1;
      pos = r[1] + r[0];
    } else {
      const r = varint(buf, pos);
      if (r === null) return -1;
      pos = r[1];
      for (let i = 0; i < r[0]; i++) {
        const s = varint(buf, pos);
        if (s === null) return -1;
        pos = s[1] + s[0];
      }
    }
    if (pos > buf.length) return -1;
  }
  return pos;
}

/**
 * The rows of `chunks` for each of `shards` shards, as views into the chunks (no copy), in row order.
 * `shardOf` gets each new run's robot id and returns its shard index (0 … shards - 1).
 * @throws Error when a chunk does not hold whole rows (a programming error upstream)
 */
export function splitByShard(chunks: readonly Uint8Array[], shards: number, shardOf: (robotId: string) => number): { parts: Uint8Array[][]; bytes: number[] } {
  const parts: Uint8Array[][] = Array.from({ length: shards }, () => []);
  const bytes: number[] = new Array<number>(shards).fill(0);
  let runChunk: Uint8Array | null = null;
  let runStart = 0;
  let runEnd = 0;
  let runShard = -1;
  const close = (): void => {
    if (runChunk !== null && runEnd > runStart) {
      parts[runShard]!.push(runChunk.subarray(runStart, runEnd));
      bytes[runShard]! += runEnd - runStart;
    }
    runChunk = null;
  };
  walk(chunks, (id, chunk, start, end) => {
    const shard = id === null ? runShard : shardOf(id);
    if (runChunk === chunk && shard === runShard && start === runEnd) runEnd = end;
    else {
      close();
      runChunk = chunk;
      runStart = start;
      runEnd = end;
      runShard = shard;
    }
  });
  close();
  return { parts, bytes };
}

/**
 * Calls `row` for every row: its robot id, or null when it equals the previous row's (same bytes),
 * its chunk and byte range.
 */
function walk(chunks: readonly Uint8Array[], row: (id: string | null, chunk: Uint8Array, start: number, end: number) => void): void {
  let prev: Uint8Array | null = null;
  for (const chunk of chunks) {
    let pos = 0;
    while (pos < chunk.length) {
      const len = varint(chunk, pos);
      if (len === null || len[1] + len[0] > chunk.length) throw new Error('row-split: torn robot_id');
      const idBytes = chunk.subarray(len[1], len[1] + len[0]);
      const end = rowEnd(chunk, len[1] + len[0]);
      if (end < 0) throw new Error('row-split: torn row');
      const same = prev !== null && Buffer.from(prev.buffer, prev.byteOffset, prev.length).equals(idBytes);
      row(same ? null : Buffer.from(idBytes.buffer, idBytes.byteOffset, idBytes.length).toString('utf8'), chunk, pos, end);
      prev = idBytes;
      pos = end;
    }
  }
}
