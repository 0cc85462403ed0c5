/**
 * ClickHouse server store through @clickhouse/client (HTTP). Rows go in as RowBinary, the cheapest
 * format for the server to parse. The DDL flavor follows `version()`: 18.x gets the legacy table,
 * 21.x and later the modern one (DateTime64, codecs, LowCardinality, TTL).
 */
import { Readable } from 'node:stream';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { INSERT_COLUMN_LIST, TABLE_NAME } from './columns.js';
import type { SampleStore } from './sample-store.js';
import { flavorForVersion, loadSamplesDdl, type SchemaFlavor } from './schema.js';

export interface ClickHouseStoreOptions {
  /** e.g. http://127.0.0.1:8123 (credentials, if any, in the URL's userinfo; never logged). */
  url: string;
  /** Database name. Default: the URL's path, else `default`. */
  database?: string;
  /** Modern servers only (TTL). Default 90. */
  retentionDays?: number;
  /** Per-request timeout. Default 30 s. */
  requestTimeoutMs?: number;
}

export interface ClickHouseSampleStore extends SampleStore {
  readonly flavor: SchemaFlavor;
}

async function drain(stream: Readable): Promise<void> {
  for await (const _ of stream) {
    // The response body must be consumed so the keep-alive socket returns to the pool.
  }
}

/** Connects, detects the version, creates `telemetry_samples` if missing. */
export async function openClickHouseStore(opts: ClickHouseStoreOptions): Promise<ClickHouseSampleStore> {
  const client: ClickHouseClient = createClient({
    url: opts.url,
    ...(opts.database !== undefined ? { database: opts.database } : {}),
    request_timeout: opts.requestTimeoutMs ?? 30_000,
    // 18.16 rejects settings it does not know; send none by default.
    clickhouse_settings: {},
    // Failures surface as rejected promises that the insert queue logs once, with context and retry
    // state; the client's own error lines would repeat each one without it.
    log: { level: ClickHouseLogLevel.OFF },
  });
  try {
    const rs = await client.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' });
    const [row] = await rs.json<{ v: string }>();
    const version = row?.v ?? '0';
    const flavor = flavorForVersion(version);
    await client.command({ query: await loadSamplesDdl(flavor, opts.retentionDays ?? 90) });
    const insertSql = `INSERT INTO ${TABLE_NAME} ${INSERT_COLUMN_LIST} FORMAT RowBinary`;
    return {
      kind: 'clickhouse',
      version,
      flavor,
      async insert(chunks) {
        // Streamed chunk by chunk: no concatenation copy on the main thread.
        const res = await client.exec({ query: insertSql, values: Readable.from(chunks, { objectMode: false }) });
        await drain(res.stream);
      },
      async queryText(sql) {
        const res = await client.query({ query: sql, format: 'TabSeparated' });
        return res.text();
      },
      close: () => client.close(),
    };
  } catch (e) {
    await client.close();
    throw e;
  }
}
