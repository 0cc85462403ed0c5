/**
 * ClickHouse server store through @clickhouse/client (HTTP). Rows reach the store as RowBinary (what
 * the decoders write) and go in as Native blocks converted by the addon where that is verified
 * (native-insert.ts: far cheaper for the server to parse), as RowBinary otherwise. The DDL flavor
 * follows `version()`: 18.x gets the legacy table, 21.x and later the modern one (DateTime64, codecs,
 * LowCardinality, TTL).
 */
import { Readable } from 'node:stream';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { INSERT_COLUMN_LIST, TABLE_NAME } from './columns.js';
import { isDatabaseName, parseClickHouseUrl } from './clickhouse-target.js';
import { migrateSchema } from './migrations.js';
import type { SampleStore } from './sample-store.js';
import { flavorForVersion, type SchemaFlavor } from './schema.js';
import { selectWithExternalData } from './external-data.js';
import { loadNative } from './decode/native.js';
import { chooseInsertFormat, insertFormatSetting, NativeInsert, type InsertFormat, type NativeInsertStats } from './native-insert.js';

export interface ClickHouseStoreOptions {
  /** e.g. http://127.0.0.1:8123/fleet: the path names the database; a password in it is refused. */
  url: string;
  /** Database name. Default: the URL's path, else `default`. Created when missing. */
  database?: string;
  /** Default: the URL's username, else the server's `default` user. */
  username?: string;
  /** From a file or the environment (src/cli/clickhouse-credentials.ts); never logged. */
  password?: string;
  /** Modern servers only (TTL). Default 90. */
  retentionDays?: number;
  /** Per-request timeout. Default 30 s. */
  requestTimeoutMs?: number;
  /** Insert encoding (native-insert.ts). Default: the FLEETGW_CLICKHOUSE_INSERT_FORMAT environment variable, else `auto`. */
  insertFormat?: 'auto' | InsertFormat;
  /** Told when a block could not be converted to Native and went as RowBinary (never expected). */
  warn?: (message: string) => void;
}

export interface ClickHouseSampleStore extends SampleStore {
  readonly flavor: SchemaFlavor;
  /** How inserts are encoded, and why (logged at start-up). */
  readonly insertFormat: { format: InsertFormat; reason: string };
  /** Native conversions: blocks, fallbacks to RowBinary, buffers kept. */
  nativeStats(): NativeInsertStats | null;
}

/** Consumes a response body (shared with the cluster store). */
export async function drain(stream: Readable): Promise<void> {
  for await (const _ of stream) {
    // The response body must be consumed so the keep-alive socket returns to the pool.
  }
}

/** An HTTP client for one server and database (shared with the cluster store). */
export function clientFor(opts: ClickHouseStoreOptions, origin: string, database: string, username: string | undefined): ClickHouseClient {
  return createClient({
    url: origin,
    database,
    ...(username !== undefined ? { username } : {}),
    ...(opts.password !== undefined ? { password: opts.password } : {}),
    request_timeout: opts.requestTimeoutMs ?? 30_000,
    // 18.16 rejects settings it does not know; send none by default.
    clickhouse_settings: {},
    // Failures surface as rejected promises that the insert queue logs once, with context and retry
    // state; the client's own error lines would repeat each one without it.
    log: { level: ClickHouseLogLevel.OFF },
  });
}

/**
 * Connects as `default` database (which always exists), detects the version, creates the gateway's
 * database if missing, then runs the schema migrations (src/telemetry/migrations.ts) in it.
 * @throws Error naming the server and database, with the server's reason (never the password)
 */
export async function openClickHouseStore(opts: ClickHouseStoreOptions): Promise<ClickHouseSampleStore> {
  const target = parseClickHouseUrl(opts.url);
  const formatSetting = opts.insertFormat ?? insertFormatSetting();
  const database = opts.database ?? target.database;
  if (!isDatabaseName(database)) throw new Error(`ClickHouse database name '${database}' is not a plain identifier`);
  const username = opts.username ?? target.username;
  // host:port, database and user only: never the password.
  const where = `ClickHouse server at ${serverHost(opts.url)}`;
  const which = `(database ${database}${username !== undefined ? `, user ${username}` : ''})`;
  let version: string;
  const boot = clientFor(opts, target.origin, 'default', username);
  try {
    const rs = await boot.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' });
    const [row] = await rs.json<{ v: string }>();
    version = row?.v ?? '0';
    if (database !== 'default') await boot.command({ query: `CREATE DATABASE IF NOT EXISTS \`${database}\`` });
  } catch (e) {
    throw new Error(`telemetry store: ${where} is not reachable or refused the login ${which}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  } finally {
    await boot.close();
  }
  const client = clientFor(opts, target.origin, database, username);
  try {
    const flavor = flavorForVersion(version);
    const schema = await migrateSchema(
      {
        exec: async (query) => {
          await client.command({ query });
        },
        queryText: async (query) => (await client.query({ query, format: 'TabSeparated' })).text(),
      },
      { flavor, retentionDays: opts.retentionDays ?? 90, engine: 'server' },
    ).catch((e: unknown) => {
      throw new Error(`telemetry store: ${where} refused the telemetry table set-up ${which}: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    });
    const insertSql = `INSERT INTO ${TABLE_NAME} ${INSERT_COLUMN_LIST} FORMAT RowBinary`;
    const nativeSql = `INSERT INTO ${TABLE_NAME} ${INSERT_COLUMN_LIST} FORMAT Native`;
    const dedup = dedupOf(version, flavor);
    const binding = loadNative().binding;
    const insertFormat = chooseInsertFormat(formatSetting, flavor, binding);
    const native = insertFormat.format === 'native' && binding !== null ? new NativeInsert(binding) : null;
    // Never expected (the decoders write every row); said once a minute at most, with the count (what
    // a quiet minute left unsaid is said at the next refusal, or at close).
    let refusedSince = 0;
    let lastRefusal = '';
    let lastRefusalLogMs = 0;
    const sayRefusals = (): void => {
      if (refusedSince === 0) return;
      lastRefusalLogMs = Date.now();
      opts.warn?.(`telemetry insert sent as RowBinary: the Native conversion refused ${refusedSince} block(s) since the last such line (last: ${lastRefusal})`);
      refusedSince = 0;
    };
    const refused = (why: string): void => {
      refusedSince++;
      lastRefusal = why;
      if (Date.now() - lastRefusalLogMs >= 60_000) sayRefusals();
    };
    const send = async (query: string, chunks: readonly Uint8Array[], token: string | undefined): Promise<void> => {
      // Streamed chunk by chunk: no concatenation copy on the main thread. Older servers reject
      // settings they do not know, so the token goes only to those that have it.
      const res = await client.exec({
        query,
        values: Readable.from(chunks, { objectMode: false }),
        ...(token !== undefined && dedup === 'token' ? { clickhouse_settings: { insert_deduplication_token: token } } : {}),
      });
      await drain(res.stream);
    };
    return {
      kind: 'clickhouse',
      version,
      flavor,
      schema,
      dedup,
      insertFormat,
      nativeStats: () => native?.stats() ?? null,
      async insert(chunks, bytes, rows, token) {
        const block = native !== null && rows > 0 ? await native.convert(chunks, bytes, rows) : null;
        if (block === null || 'error' in block) {
          // A block the addon refused goes as it is: the server takes or refuses its rows as it always did.
          if (block !== null) refused(block.error);
          await send(insertSql, chunks, token);
          return;
        }
        try {
          await send(nativeSql, [block.body], token);
        } finally {
          block.release();
        }
      },
      async queryText(sql) {
        const res = await client.query({ query: sql, format: 'TabSeparated' });
        return res.text();
      },
      // Bound parameters as external data on every server version (18.16 has no query parameters).
      select: (query) => selectWithExternalData({
        origin: target.origin,
        database,
        ...(username !== undefined ? { username } : {}),
        ...(opts.password !== undefined ? { password: opts.password } : {}),
        timeoutMs: opts.requestTimeoutMs ?? 30_000,
      }, query),
      close: async () => {
        sayRefusals();
        await client.close();
      },
    };
  } catch (e) {
    await client.close();
    throw e;
  }
}

/**
 * How a server treats a retried block: `insert_deduplication_token` exists from 22.2; 21.x has the
 * table's block-hash window (migration 2 sets it on modern tables); 18.16's non-replicated MergeTree
 * deduplicates nothing (replicated tables do, by block hash).
 */
function dedupOf(version: string, flavor: SchemaFlavor): 'token' | 'block-hash' | 'none' {
  if (flavor === 'legacy') return 'none';
  const [major = 0, minor = 0] = version.split('.').map((p) => Number.parseInt(p, 10));
  return major > 22 || (major === 22 && minor >= 2) ? 'token' : 'block-hash';
}

/** `host:port` of a ClickHouse URL (default port by scheme), never its credentials. */
export function serverHost(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname}:${u.port !== '' ? u.port : u.protocol === 'https:' ? '8443' : '8123'}`;
  } catch {
    // The CLI checked the URL's shape; an embedder's odd URL is still named, without its user part.
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}
