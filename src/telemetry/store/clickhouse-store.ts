/**
 * ClickHouse server store through @clickhouse/client (HTTP). Rows reach the store as RowBinary (what
 * the decoders write) and go in as Native blocks converted by the addon where that is verified
 * (native-insert.ts: far cheaper for the server to parse), as RowBinary otherwise. The DDL flavor
 * follows `version()`: 18.x gets the legacy table, 21.x and later the modern one (DateTime64, codecs,
 * LowCardinality, TTL). A server that does not answer at start is set up when it first does
 * (store-setup.ts): the gateway starts without it and its rows wait in the disk spool.
 */
import { Readable } from 'node:stream';
import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';
import { INSERT_COLUMN_LIST, TABLE_NAME } from './columns.js';
import { isDatabaseName, parseClickHouseUrl } from './clickhouse-target.js';
import { migrateSchema, type MigrationResult } from './migrations.js';
import type { SampleStore } from './sample-store.js';
import { flavorForVersion, type SchemaFlavor } from './schema.js';
import { selectWithExternalData } from './external-data.js';
import { loadNative } from '../decode/index.js';
import { DeferredSetUp } from './store-setup.js';
import { chooseInsertFormat, NativeInsert, type InsertFormat, type NativeInsertStats } from './native-insert.js';

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
  /** How long the open waits for the server's first answer; the attempt goes on after it. Default 2 s. */
  startDeadlineMs?: number;
  /** Insert encoding (native-insert.ts; FLEETGW_CLICKHOUSE_INSERT_FORMAT). Default `auto`. */
  insertFormat?: 'auto' | InsertFormat;
  /** Told when a block could not be converted to Native and went as RowBinary (never expected). */
  warn?: (message: string) => void;
}

export interface ClickHouseSampleStore extends SampleStore {
  /** The server's schema flavor; null until the server first answered (see {@link SampleStore.setUpError}). */
  readonly flavor: SchemaFlavor | null;
  /** How inserts are encoded, and why (logged once chosen); null until the server first answered. */
  readonly insertFormat: { format: InsertFormat; reason: string } | null;
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
export function clientFor(opts: ClickHouseStoreOptions, origin: string, database: string, username: string | undefined, timeoutMs?: number): ClickHouseClient {
  return createClient({
    url: origin,
    database,
    ...(username !== undefined ? { username } : {}),
    ...(opts.password !== undefined ? { password: opts.password } : {}),
    request_timeout: timeoutMs ?? opts.requestTimeoutMs ?? 30_000,
    // 18.16 rejects settings it does not know; send none by default.
    clickhouse_settings: {},
    // Failures surface as rejected promises that the insert queue logs once, with context and retry
    // state; the client's own error lines would repeat each one without it.
    log: { level: ClickHouseLogLevel.OFF },
  });
}

/** How long a start waits for the first set-up attempt before going on without the store. */
export const START_DEADLINE_MS = 2_000;

/**
 * The set-up's first requests (version, database) answer at once on a live server; a host that holds
 * the connection without answering would otherwise hold each attempt, and a stop waiting on it, for
 * the full request timeout.
 */
const BOOT_TIMEOUT_MS = 5_000;

/** The client of a set-up's first requests, on the `default` database (shared with the cluster store). */
export function bootClientFor(opts: ClickHouseStoreOptions, origin: string, username: string | undefined): ClickHouseClient {
  return clientFor(opts, origin, 'default', username, Math.min(opts.requestTimeoutMs ?? 30_000, BOOT_TIMEOUT_MS));
}

/** What the server's set-up found: everything the store needs from the server before its first insert. */
interface ServerInfo {
  version: string;
  flavor: SchemaFlavor;
  schema: MigrationResult;
  dedup: 'token' | 'block-hash' | 'none';
  insertFormat: { format: InsertFormat; reason: string };
  native: NativeInsert | null;
}

/**
 * Opens the store: checks the options, then sets the server up (connects as `default` database,
 * which always exists, detects the version, creates the gateway's database if missing, runs the
 * schema migrations of src/telemetry/store/migrations.ts in it). A server that does not answer, or
 * answers with a refusal (the login, the database, the DDL), does not stop the open: the store is
 * returned with {@link SampleStore.setUpError} set (a first attempt that has not ended within
 * {@link START_DEADLINE_MS} goes on in the background and the store reports it is still trying), and every use of it (an insert, a query, the
 * readiness probe) tries the set-up again until it succeeds once (store-setup.ts). Until then its
 * inserts fail, so rows wait in the disk spool.
 * @throws Error for options that are wrong whatever the server says (database name, retention)
 */
export async function openClickHouseStore(opts: ClickHouseStoreOptions): Promise<ClickHouseSampleStore> {
  const target = parseClickHouseUrl(opts.url);
  const formatSetting = opts.insertFormat ?? 'auto';
  const database = opts.database ?? target.database;
  if (!isDatabaseName(database)) throw new Error(`ClickHouse database name '${database}' is not a plain identifier`);
  const retentionDays = opts.retentionDays ?? 90;
  if (!Number.isInteger(retentionDays) || retentionDays < 1) throw new Error(`ClickHouse retentionDays must be a positive integer, got ${retentionDays}`);
  const store = new ServerStore(opts, target.origin, database, opts.username ?? target.username, formatSetting, retentionDays);
  // A failure is kept in store.setUpError and tried again at the next use; an attempt still out at the
  // deadline goes on in the background (the store says it is still trying).
  await store.setUp.tryWithin(opts.startDeadlineMs ?? START_DEADLINE_MS);
  return store;
}

class ServerStore implements ClickHouseSampleStore {
  readonly kind = 'clickhouse' as const;
  readonly setUp: DeferredSetUp<ServerInfo>;
  /** The server reads no file of the gateway's: a spooled block is read back and sent. */
  readonly insertFile = null;
  /** `SELECT 1` (through {@link queryText}, which sets the server up first) tells. */
  readonly probe = null;
  private readonly client: ClickHouseClient;
  private readonly insertSql = `INSERT INTO ${TABLE_NAME} ${INSERT_COLUMN_LIST} FORMAT RowBinary`;
  private readonly nativeSql = `INSERT INTO ${TABLE_NAME} ${INSERT_COLUMN_LIST} FORMAT Native`;
  // Never expected (the decoders write every row); said once a minute at most, with the count (what
  // a quiet minute left unsaid is said at the next refusal, or at close).
  private refusedSince = 0;
  private lastRefusal = '';
  private lastRefusalLogMs = 0;

  constructor(
    private readonly opts: ClickHouseStoreOptions,
    private readonly origin: string,
    private readonly database: string,
    private readonly username: string | undefined,
    formatSetting: 'auto' | InsertFormat,
    retentionDays: number,
  ) {
    this.client = clientFor(opts, origin, database, username);
    this.setUp = new DeferredSetUp(() => this.runSetUp(formatSetting, retentionDays));
  }

  /** "unknown" until the server first answered. */
  get version(): string {
    return this.setUp.value?.version ?? 'unknown';
  }

  get flavor(): SchemaFlavor | null {
    return this.setUp.value?.flavor ?? null;
  }

  get schema(): MigrationResult | null {
    return this.setUp.value?.schema ?? null;
  }

  /** Before the set-up: `none` (a replay completes the set-up before it reads this: insert-queue.ts). */
  get dedup(): 'token' | 'block-hash' | 'none' {
    return this.setUp.value?.dedup ?? 'none';
  }

  get insertFormat(): { format: InsertFormat; reason: string } | null {
    return this.setUp.value?.insertFormat ?? null;
  }

  get setUpError(): string | null {
    return this.setUp.error;
  }

  async setUpDone(): Promise<void> {
    await this.setUp.done;
  }

  async ensureSetUp(): Promise<void> {
    await this.setUp.ensure();
  }

  nativeStats(): NativeInsertStats | null {
    return this.setUp.value?.native?.stats() ?? null;
  }

  private async runSetUp(formatSetting: 'auto' | InsertFormat, retentionDays: number): Promise<ServerInfo> {
    // host:port, database and user only: never the password.
    const where = `ClickHouse server at ${serverHost(this.opts.url)}`;
    const which = `(database ${this.database}${this.username !== undefined ? `, user ${this.username}` : ''})`;
    let version: string;
    const boot = bootClientFor(this.opts, this.origin, this.username);
    try {
      const rs = await boot.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' });
      const [row] = await rs.json<{ v: string }>();
      version = row?.v ?? '0';
      if (this.database !== 'default') await boot.command({ query: `CREATE DATABASE IF NOT EXISTS \`${this.database}\`` });
    } catch (e) {
      throw new Error(`telemetry store: ${where} is not reachable or refused the login ${which}: ${message(e)}`, { cause: e });
    } finally {
      await boot.close();
    }
    const flavor = flavorForVersion(version);
    const schema = await migrateSchema(
      {
        exec: async (query) => {
          await this.client.command({ query });
        },
        queryText: async (query) => (await this.client.query({ query, format: 'TabSeparated' })).text(),
      },
      { flavor, retentionDays, engine: 'server' },
    ).catch((e: unknown) => {
      throw new Error(`telemetry store: ${where} refused the telemetry table set-up ${which}: ${message(e)}`, { cause: e });
    });
    const binding = loadNative().binding;
    const insertFormat = chooseInsertFormat(formatSetting, flavor, binding);
    const native = insertFormat.format === 'native' && binding !== null ? new NativeInsert(binding) : null;
    return { version, flavor, schema, dedup: dedupOf(version, flavor), insertFormat, native };
  }

  private sayRefusals(): void {
    if (this.refusedSince === 0) return;
    this.lastRefusalLogMs = Date.now();
    this.opts.warn?.(`telemetry insert sent as RowBinary: the Native conversion refused ${this.refusedSince} block(s) since the last such line (last: ${this.lastRefusal})`);
    this.refusedSince = 0;
  }

  private refused(why: string): void {
    this.refusedSince++;
    this.lastRefusal = why;
    if (Date.now() - this.lastRefusalLogMs >= 60_000) this.sayRefusals();
  }

  private async send(query: string, chunks: readonly Uint8Array[], token: string | undefined, dedup: ServerInfo['dedup']): Promise<void> {
    // Streamed chunk by chunk: no concatenation copy on the main thread. Older servers reject
    // settings they do not know, so the token goes only to those that have it.
    const res = await this.client.exec({
      query,
      values: Readable.from(chunks, { objectMode: false }),
      ...(token !== undefined && dedup === 'token' ? { clickhouse_settings: { insert_deduplication_token: token } } : {}),
    });
    await drain(res.stream);
  }

  async insert(chunks: readonly Uint8Array[], bytes: number, rows: number, token?: string): Promise<void> {
    const { native, dedup } = await this.setUp.ensure();
    const block = native !== null && rows > 0 ? await native.convert(chunks, bytes, rows) : null;
    if (block === null || 'error' in block) {
      // A block the addon refused goes as it is: the server takes or refuses its rows as it always did.
      if (block !== null) this.refused(block.error);
      await this.send(this.insertSql, chunks, token, dedup);
      return;
    }
    try {
      await this.send(this.nativeSql, [block.body], token, dedup);
    } finally {
      block.release();
    }
  }

  /** Also the readiness probe (`SELECT 1`): it sets the server up once it answers, with or without telemetry. */
  async queryText(sql: string): Promise<string> {
    await this.setUp.ensure();
    const res = await this.client.query({ query: sql, format: 'TabSeparated' });
    return res.text();
  }

  // Bound parameters as external data on every server version (18.16 has no query parameters).
  select: SampleStore['select'] = async (query) => {
    await this.setUp.ensure();
    return selectWithExternalData({
      origin: this.origin,
      database: this.database,
      ...(this.username !== undefined ? { username: this.username } : {}),
      ...(this.opts.password !== undefined ? { password: this.opts.password } : {}),
      timeoutMs: this.opts.requestTimeoutMs ?? 30_000,
    }, query);
  };

  async close(): Promise<void> {
    this.sayRefusals();
    await this.client.close();
  }
}

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
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
