/**
 * For stores that do not deduplicate a repeated insert (`store.dedup === 'none'`: ClickHouse 18.16's
 * non-replicated MergeTree, measured in test/telemetry/ingest-clickhouse.test.ts), a block replayed
 * from the spool after a failure that may have come after the commit (a timeout, a crash) is first
 * looked for: its first row's (robot_id, ts_ms, received_at_ms) is unique to it (the gateway's
 * receive clock in milliseconds, per robot and sample time), so finding it means the block is stored.
 * 18.16 commits an insert block of one partition atomically, so the first row stands for the block.
 * Known gap: a block whose samples span two days is two partitions, written one after the other; a
 * failure between the two leaves part of the block stored, and the probe (one row: the first as the
 * gateway received it) treats the block as wholly stored or not stored, so the replay loses or
 * repeats that part. Only a store failure in the middle of such an insert, on a server without
 * deduplication.
 * One small query per replayed block, never on the normal insert path.
 */
import { TABLE_NAME } from './columns.js';

/** The first row's key, read from RowBinary (robot_id String, fleet_id String, ts_ms Int64, received_at_ms Int64 lead every row). */
export function firstRowKey(rows: Uint8Array): { robotId: string; tsMs: bigint; receivedAtMs: bigint } | null {
  let pos = 0;
  const str = (): string | null => {
    let len = 0;
    let mul = 1;
    for (;;) {
      if (pos >= rows.length) return null;
      const b = rows[pos++]!;
      len += (b & 0x7f) * mul;
      if (b < 0x80) break;
      mul *= 128;
    }
    if (pos + len > rows.length) return null;
    const s = Buffer.from(rows.buffer, rows.byteOffset + pos, len).toString('utf8');
    pos += len;
    return s;
  };
  const robotId = str();
  if (robotId === null || str() === null || pos + 16 > rows.length) return null;
  const view = new DataView(rows.buffer, rows.byteOffset, rows.byteLength);
  return { robotId, tsMs: view.getBigInt64(pos, true), receivedAtMs: view.getBigInt64(pos + 8, true) };
}

function sqlString(s: string): string {
  return `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** The query that counts the first row of `rows` in the table (null when the rows are empty or torn). */
export function probeQuery(rows: Uint8Array): string | null {
  const k = firstRowKey(rows);
  if (k === null) return null;
  return `SELECT count() FROM ${TABLE_NAME} WHERE robot_id = ${sqlString(k.robotId)} AND ts_ms = ${k.tsMs} AND received_at_ms = ${k.receivedAtMs}`;
}
