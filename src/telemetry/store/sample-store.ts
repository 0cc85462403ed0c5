/**
 * What the insert queue needs from a telemetry store (chdb-store.ts, clickhouse-store.ts). Both take
 * RowBinary rows in the field table's column order (sample-table.ts, columns.ts): the only row
 * format the decoders write.
 */
import type { BoundQuery, Rows } from './bound-query.js';
import type { MigrationResult } from './migrations.js';

export type StoreKind = 'chdb' | 'clickhouse';

export interface SampleStore {
  readonly kind: StoreKind;
  /** Human-readable engine version (e.g. "18.16.1"), for logs and the README's flavor rules. */
  readonly version: string;
  /**
   * What the start-up migrations found and did. Null while the set-up has not run (a server that did
   * not answer at open: {@link setUpError}); chdb and the cluster store have it once open.
   */
  readonly schema: MigrationResult | null;
  /**
   * Why the store is not set up yet: its server did not answer at open, or refused (store-setup.ts);
   * every use tries again until it succeeds once. Null once set up, and always on stores whose open
   * sets them up or fails (chdb; the cluster store, whose shards that did not answer are set up one
   * by one and reported by {@link probe}).
   */
  readonly setUpError: string | null;
  /** Resolves once the set-up the open could not do has run (at once on a store set up at open). */
  setUpDone(): Promise<void>;
  /**
   * Runs the set-up unless it ran (one attempt; {@link dedup} is known once it resolves). Resolves at
   * once on a store set up at open.
   * @throws the attempt's error
   */
  ensureSetUp(): Promise<void>;
  /**
   * What a repeated insert with the same `token` does (telemetry/README.md, "Duplicates"):
   * `token`: the store drops it (insert_deduplication_token: chdb, ClickHouse 22.2+);
   * `block-hash`: the store drops an identical block (ClickHouse 21.x-22.1, whose table has a
   * deduplication window; a retry sends identical bytes); `none`: it is inserted again (18.16's
   * non-replicated MergeTree).
   */
  readonly dedup: 'token' | 'block-hash' | 'none';
  /**
   * Writes the concatenation of `chunks` (whole RowBinary rows) as one INSERT. Rejects on
   * any failure; the caller owns retries. `chunks` are not mutated and not retained after settling.
   * `token` identifies the block: a retry of it passes the same token (see {@link dedup}).
   */
  insert(chunks: readonly Uint8Array[], totalBytes: number, rows: number, token?: string): Promise<void>;
  /**
   * Inserts a RowBinary file of whole rows in place: chdb, which reads files itself. Null on stores
   * that cannot (a server reads no file of the gateway's): the caller reads the file and calls
   * {@link insert}.
   */
  readonly insertFile: ((path: string, rows: number, token?: string) => Promise<void>) | null;
  /**
   * The readiness probe (store-health.ts), on a store where `SELECT 1` through {@link queryText} would
   * not tell: the cluster store asks every shard, because its reads fall back to any shard that
   * answers, and an insert into some shards says nothing about the others. Null where `SELECT 1`
   * tells (chdb, one server): there a recent successful insert also stands in for the probe.
   */
  readonly probe: (() => Promise<void>) | null;
  /** Runs a read query, returns TabSeparated text (tests, ops tooling; not on the hot path). */
  queryText(sql: string): Promise<string>;
  /** Runs a read query with bound parameters (bound-query.ts), the same SQL on every store. */
  select(query: BoundQuery): Promise<Rows>;
  close(): Promise<void>;
}
