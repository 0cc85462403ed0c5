/**
 * Splits RowBinary telemetry rows by shard (docs/scale-out.md): the cluster store
 * writes each robot's rows to the shard that owns the robot. Rows are walked with the field table's
 * wire types (sample-table.ts), never decoded: a few byte reads per column, and the robot id (the
 * first column) is compared with the previous row's bytes, so a run of one robot's rows (a batch is
 * one robot) costs one shard lookup.
 *
 * The split is deterministic: the same block bytes give the same per-shard bytes, in the same order,
 * however the block is chunked (in memory or read back from the spool). ReplicatedMergeTree drops a
 * retried block only when it is byte-identical, so this is what makes a retry safe.
 */
import { SAMPLE_FIELDS, type RowType } from '../sample/index.js';

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

/** Where the last {@link varint} ended (a module cursor: no tuple allocated per column). */
let after = 0;

/** Reads a LEB128 length at `pos` (its end in {@link after}); -1 when torn. */
function varint(buf: Uint8Array, pos: number): number {
  let v = 0;
  let mul = 1;
  for (let i = 0; i < 5; i++) {
    if (pos >= buf.length) return -1;
    const b = buf[pos++]!;
    v += (b & 0x7f) * mul;
    if (b < 0x80) {
      after = pos;
      return v;
    }
    mul *= 128;
  }
  return -1;
}

/** End offset of the row whose robot id ends at `afterId`; -1 when torn. */
function rowEnd(buf: Uint8Array, afterId: number): number {
  let pos = afterId;
  for (const step of LAYOUT) {
    if (typeof step === 'number') pos += step;
    else if (step === 'String') {
      const n = varint(buf, pos);
      if (n < 0) return -1;
      pos = after + n;
    } else {
      const count = varint(buf, pos);
      if (count < 0) return -1;
      pos = after;
      for (let i = 0; i < count; i++) {
        const n = varint(buf, pos);
        if (n < 0) return -1;
        pos = after + n;
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
  // The previous row's robot id bytes, compared in place: no object per row.
  let prev: Uint8Array | null = null;
  let prevStart = 0;
  let prevLen = -1;
  for (const chunk of chunks) {
    let pos = 0;
    while (pos < chunk.length) {
      const idLen = varint(chunk, pos);
      const idStart = after;
      if (idLen < 0 || idStart + idLen > chunk.length) throw new Error('row-split: torn robot_id');
      const end = rowEnd(chunk, idStart + idLen);
      if (end < 0) throw new Error('row-split: torn row');
      let same = prev !== null && prevLen === idLen;
      for (let i = 0; same && i < idLen; i++) same = prev![prevStart + i] === chunk[idStart + i];
      row(same ? null : Buffer.from(chunk.buffer, chunk.byteOffset + idStart, idLen).toString('utf8'), chunk, pos, end);
      prev = chunk;
      prevStart = idStart;
      prevLen = idLen;
      pos = end;
    }
  }
}
