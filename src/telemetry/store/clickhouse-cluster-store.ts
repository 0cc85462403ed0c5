/**
 * Telemetry to a ClickHouse cluster (docs/scale-out.md): many depots' gateways, each
 * with its own LMDB, write to one cluster. Every shard gets a ReplicatedMergeTree table of the rows it
 * owns and a Distributed table over all of them (cluster-schema.ts); readers query the Distributed one.
 *
 * Writes go straight to the owning shard's local table, not through the Distributed table: a block
 * is split by robot (row-split.ts; owner = `cityHash64(robot_id) % shards`, computed by the server so
 * it always matches the Distributed table's sharding expression) and each shard's part is one INSERT.
 * Why direct, on 18.16: ReplicatedMergeTree drops a block whose bytes hash like one of its recent
 * blocks, so a retried part is dropped only if it is byte-identical and reaches the same shard. The
 * split is deterministic, so a retry (and a replay from the spool after a crash) sends exactly the
 * same bytes to exactly the same shard. Through the Distributed table instead, the receiving server
 * re-splits and re-forms blocks itself: asynchronously by default (an acknowledged insert is only
 * queued on that server's disk, beyond the spool's and the gateway's view), and with
 * `insert_distributed_sync=1` a failure on one shard after another committed leaves the caller unable
 * to tell which; the retry then relies on the re-formed blocks being identical, which 18.16 does not
 * promise.
 *
 * A shard that does not answer at start is set up by the first insert that reaches it: a depot starts
 * (and serves its robots) during a shard's outage. At least one shard must answer (the version and
 * schema flavor come from it), and a shard that answers with another layout stops the start.
 *
 * Partial failure: a block is stored once every shard has its part. A part that succeeded is
 * remembered by the block's token (its spool name), and a retry sends only the missing parts; after a
 * gateway restart the remembered set is gone and the shard's block-hash deduplication drops the part
 * it already has. While any shard is down, blocks wait in the disk spool in order (spool.ts), those of
 * healthy shards too: the order and the simple replay are kept at the price of the healthy shards'
 * rows arriving late (documented limit).
 */
import { Readable } from 'node:stream';
import { INSERT_COLUMN_LIST } from './columns.js';
import { clientFor, drain, serverHost, START_DEADLINE_MS, type ClickHouseSampleStore, type ClickHouseStoreOptions } from './clickhouse-store.js';
import { isDatabaseName, parseClickHouseUrl } from './clickhouse-target.js';
import { clusterMigrations, LOCAL_TABLE, SHARDING_KEY } from './cluster-schema.js';
import { message, setUpShard, shardOrigin, sqlString, unreachable, type Shard, type ShardInfo } from './cluster-shard.js';
import { selectWithExternalData } from './external-data.js';
import type { MigrationResult } from './migrations.js';
import { splitByShard } from './row-split.js';
import type { SchemaFlavor } from './schema.js';
import { DeferredSetUp } from './store-setup.js';

export interface ClickHouseClusterStoreOptions extends ClickHouseStoreOptions {
  /** Told once per shard that did not answer at start (the gateway logs it as a warning). */
  warn?: (message: string) => void;
  /** The cluster's name in the servers' `<remote_servers>`. */
  cluster: string;
  /**
   * One HTTP URL per shard (`http://host:8123`), in `system.clusters` shard_num order. The database
   * and user come from {@link ClickHouseStoreOptions.url}, which must be one of these servers: reads
   * go there first.
   */
  shardUrls: string[];
}

/** Parts remembered as stored, by block token, at most this many blocks (oldest forgotten first). */
const MAX_PARTIAL_BLOCKS = 4_096;

/**
 * Opens every shard it can reach (version, layout check, database, migrations) and returns the store.
 * A shard that does not answer is set up at the first insert that needs it (its parts wait in the
 * spool until then), so a depot starts, and serves robots, during one shard's outage; one message per
 * such shard goes to `opts.warn`.
 * @throws Error naming the shard (host:port, database, never the password) when no shard answers, or
 *   when one answers with a layout that is not the shard list's
 */
export async function openClickHouseClusterStore(opts: ClickHouseClusterStoreOptions): Promise<ClickHouseSampleStore> {
  const target = parseClickHouseUrl(opts.url);
  const database = opts.database ?? target.database;
  if (!isDatabaseName(database)) throw new Error(`ClickHouse database name '${database}' is not a plain identifier`);
  if (opts.shardUrls.length === 0) throw new Error('a ClickHouse cluster needs at least one shard URL');
  const username = opts.username ?? target.username;
  const origins = opts.shardUrls.map((u) => shardOrigin(u, database));
  const readFirst = origins.indexOf(target.origin);
  if (readFirst < 0) throw new Error(`--clickhouse-url ${serverHost(opts.url)} is not one of --clickhouse-shard-urls`);
  clusterMigrations(opts.cluster, database); // checks the names before anything is sent
  const shards: Shard[] = origins.map((origin, index) => {
    const s: Shard = {
      index,
      where: `ClickHouse shard ${index + 1} at ${serverHost(origin)} (database ${database}${username !== undefined ? `, user ${username}` : ''})`,
      origin,
      client: clientFor(opts, origin, database, username),
      setUp: new DeferredSetUp(() => setUpShard(opts, s, origins.length, database, username)),
    };
    return s;
  });
  const results = await firstAnswers(shards, opts.startDeadlineMs ?? START_DEADLINE_MS);
  const first = results[readFirst]?.status === 'fulfilled' ? results[readFirst] : results.find((r) => r.status === 'fulfilled');
  // A shard that answered with the wrong layout is a configuration error: refuse to start.
  const wrong = results.find((r) => r.status === 'rejected' && !unreachable(r.reason));
  if (first?.status !== 'fulfilled' || wrong !== undefined) {
    for (const s of shards) await s.client.close();
    const cause = (wrong ?? results.find((r) => r.status === 'rejected')) as PromiseRejectedResult;
    throw cause.reason instanceof Error ? cause.reason : new Error(message(cause.reason));
  }
  for (const [i, r] of results.entries()) {
    if (r.status === 'rejected') opts.warn?.(`${message(r.reason)}; its rows wait in the disk spool until it answers`);
    else if (r.status === 'pending') opts.warn?.(`${shards[i]!.where} has not answered yet; its set-up goes on, and its rows wait in the disk spool until it answers`);
  }
  return new ClusterStore(opts, shards, readFirst, database, username, first.value);
}

type Outcome = PromiseSettledResult<ShardInfo> | { status: 'pending' };

/**
 * Every shard's first set-up attempt, waited for until all ended, or until `deadlineMs` passed and at
 * least one shard answered (a shard dropping packets would hold the start for the client's request
 * timeout). The layout comes from a shard that answered, so with none answered by the deadline the
 * wait goes on until one does or every attempt failed. Attempts still out go on in the background.
 */
async function firstAnswers(shards: readonly Shard[], deadlineMs: number): Promise<Outcome[]> {
  const outcomes: Outcome[] = shards.map(() => ({ status: 'pending' }));
  let pastDeadline = false;
  let wake: () => void = () => undefined;
  const attempts = shards.map((s, i) => s.setUp.ensure().then(
    (value) => { outcomes[i] = { status: 'fulfilled', value }; wake(); },
    (reason: unknown) => { outcomes[i] = { status: 'rejected', reason }; wake(); },
  ));
  const timer = setTimeout(() => { pastDeadline = true; wake(); }, deadlineMs);
  try {
    for (;;) {
      const pending = outcomes.some((o) => o.status === 'pending');
      if (!pending || (pastDeadline && outcomes.some((o) => o.status === 'fulfilled'))) return [...outcomes];
      await new Promise<void>((resolve) => {
        wake = resolve;
      });
    }
  } finally {
    clearTimeout(timer);
    void Promise.all(attempts);
  }
}

class ClusterStore implements ClickHouseSampleStore {
  readonly kind = 'clickhouse' as const;
  readonly dedup = 'block-hash' as const;
  /** Robot -> shard index; one entry per robot this depot ever wrote (bounded by its fleet). */
  private readonly owner = new Map<string, number>();
  /** Block token -> shards that have its part (blocks whose insert failed on another shard). */
  private readonly partial = new Map<string, Set<number>>();
  private readonly insertSql = `INSERT INTO ${LOCAL_TABLE} ${INSERT_COLUMN_LIST} FORMAT RowBinary`;
  /** Each shard's rows are split out of the block as RowBinary rows (row-split.ts) and sent as such. */
  readonly insertFormat = { format: 'rowbinary' as const, reason: 'cluster store: rows are split by shard as RowBinary' };

  /** The servers read no file of the gateway's: a spooled block is read back and sent. */
  readonly insertFile = null;
  /**
   * The open fails unless a shard answered, whose set-up gives the version, flavor and schema; a shard
   * that did not answer is set up by the first insert that reaches it, and {@link probe} reports it.
   */
  readonly setUpError = null;

  readonly version: string;
  readonly flavor: SchemaFlavor;
  readonly schema: MigrationResult;

  setUpDone(): Promise<void> {
    return Promise.resolve();
  }

  /** Nothing store-wide is left to set up; each shard's own set-up runs before its first insert. */
  ensureSetUp(): Promise<void> {
    return Promise.resolve();
  }

  nativeStats(): null {
    return null;
  }

  constructor(
    private readonly opts: ClickHouseClusterStoreOptions,
    private readonly shards: Shard[],
    private readonly readFirst: number,
    private readonly database: string,
    private readonly username: string | undefined,
    info: ShardInfo,
  ) {
    this.version = info.version;
    this.flavor = info.flavor;
    this.schema = info.schema;
  }

  async insert(chunks: readonly Uint8Array[], _bytes: number, _rows: number, token?: string): Promise<void> {
    let missing: Set<string> | null = null;
    let split = splitByShard(chunks, this.shards.length, (id) => {
      const s = this.owner.get(id);
      if (s !== undefined) return s;
      (missing ??= new Set()).add(id);
      return 0;
    });
    if (missing !== null) {
      await this.learnOwners(missing);
      split = splitByShard(chunks, this.shards.length, (id) => this.owner.get(id)!);
    }
    const done = token !== undefined ? this.partial.get(token) : undefined;
    const results = await Promise.allSettled(this.shards.map(async (s) => {
      const part = split.parts[s.index]!;
      if (part.length === 0 || done?.has(s.index) === true) return;
      // A shard that did not answer at start is set up first (store-setup.ts).
      await s.setUp.ensure();
      // One copy of the part (at most the block's bytes, for the request's life) rather than a stream
      // of one view per run of rows: a write per run cost more per row (bench/README.md#clickhouse-cluster-inserts).
      const res = await s.client.exec({ query: this.insertSql, values: Readable.from([Buffer.concat(part)], { objectMode: false }) });
      await drain(res.stream);
    }));
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [{ shard: this.shards[i]!, reason: r.reason as unknown }] : []));
    if (failed.length === 0) {
      if (token !== undefined) this.partial.delete(token);
      return;
    }
    if (token !== undefined) {
      const set = done ?? new Set<number>();
      results.forEach((r, i) => {
        if (r.status === 'fulfilled') set.add(i);
      });
      if (done === undefined) {
        if (this.partial.size >= MAX_PARTIAL_BLOCKS) this.partial.delete(this.partial.keys().next().value!);
        this.partial.set(token, set);
      }
    }
    throw new Error(failed.map((f) => `shard ${f.shard.index + 1} (${serverHost(f.shard.origin)}): ${message(f.reason)}`).join('; '));
  }

  /** Asks a server for the owners of new robots: the Distributed table's own expression, so they always agree. */
  private async learnOwners(ids: ReadonlySet<string>): Promise<void> {
    const list = [...ids];
    const text = await this.queryText(`SELECT arrayMap(r -> ${SHARDING_KEY.replace('robot_id', 'r')} % ${this.shards.length}, [${list.map(sqlString).join(', ')}])`);
    const owners = text.trim().replace(/^\[|\]$/g, '').split(',').map(Number);
    if (owners.length !== list.length || owners.some((n) => !Number.isInteger(n) || n < 0 || n >= this.shards.length)) {
      throw new Error(`unexpected shard lookup answer for ${list.length} robots`);
    }
    list.forEach((id, i) => this.owner.set(id, owners[i]!));
  }

  /** Runs `fn` on the read shard, then on the others in order while they fail (a shard may be down). */
  private async readVia<T>(fn: (s: Shard) => Promise<T>): Promise<T> {
    let first: unknown;
    for (let k = 0; k < this.shards.length; k++) {
      const s = this.shards[(this.readFirst + k) % this.shards.length]!;
      try {
        return await fn(s);
      } catch (e) {
        first ??= e;
      }
    }
    throw first;
  }

  /**
   * Readiness: every shard is set up (its layout checked, its migrations run: a shard that answers
   * but refuses them takes no insert) and answers `SELECT 1`. Reads fall back to any shard, so one
   * answering would hide an outage that holds every depot's blocks in the spool.
   */
  async probe(): Promise<void> {
    const results = await Promise.allSettled(this.shards.map(async (s) => {
      await s.setUp.ensure();
      await (await s.client.query({ query: 'SELECT 1', format: 'TabSeparated' })).text();
    }));
    const failed = results.flatMap((r, i) => (r.status === 'rejected' ? [`shard ${i + 1} (${serverHost(this.shards[i]!.origin)}): ${message(r.reason)}`] : []));
    if (failed.length > 0) throw new Error(failed.join('; '));
  }

  queryText(sql: string): Promise<string> {
    return this.readVia(async (s) => (await s.client.query({ query: sql, format: 'TabSeparated' })).text());
  }

  select: ClickHouseSampleStore['select'] = (query) => this.readVia((s) => selectWithExternalData({
    origin: s.origin,
    database: this.database,
    ...(this.username !== undefined ? { username: this.username } : {}),
    ...(this.opts.password !== undefined ? { password: this.opts.password } : {}),
    timeoutMs: this.opts.requestTimeoutMs ?? 30_000,
  }, query));

  async close(): Promise<void> {
    for (const s of this.shards) await s.client.close();
  }
}
