/**
 * One shard of the ClickHouse cluster store (clickhouse-cluster-store.ts, docs/scale-out.md): its
 * client and set-up state, the check of the shard list against the server's `system.clusters`, and
 * the set-up (database, migrations of cluster-schema.ts) run at start or at the first insert after
 * the shard answers again.
 */
import type { ClickHouseClient } from '@clickhouse/client';
import { bootClientFor, serverHost, type ClickHouseStoreOptions } from './clickhouse-store.js';
import { parseClickHouseUrl } from './clickhouse-target.js';
import { clusterMigrations } from './cluster-schema.js';
import { migrateSchema, type MigrationResult } from './migrations.js';
import { flavorForVersion, type SchemaFlavor } from './schema.js';
import type { DeferredSetUp } from './store-setup.js';

/** What the cluster store needs to set a shard up (a subset of its options). */
export interface ShardSetUpOptions extends ClickHouseStoreOptions {
  cluster: string;
}

/** A shard as the cluster store holds it. */
export interface Shard {
  index: number;
  /** `ClickHouse shard N at host:port (database …)`, for messages. */
  where: string;
  origin: string;
  client: ClickHouseClient;
  /** The shard's checks and migrations: run at start, or at the first insert after it answers. */
  setUp: DeferredSetUp<ShardInfo>;
}

/** What a shard's set-up found: its version, schema flavor and migrations. */
export interface ShardInfo {
  version: string;
  flavor: SchemaFlavor;
  schema: MigrationResult;
}

/** A ClickHouse string literal. */
export function sqlString(s: string): string {
  return `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** An error's message, for the one-line errors the insert queue logs. */
export function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The origin of a shard URL; a path, if any, must name the same database. */
export function shardOrigin(raw: string, database: string): string {
  const t = parseClickHouseUrl(raw);
  if (t.database !== 'default' && t.database !== database) throw new Error(`--clickhouse-shard-urls: ${serverHost(raw)} names database ${t.database}, --clickhouse-url ${database}`);
  return t.origin;
}

/**
 * Checks the shard list against the server's `system.clusters`: the same number of shards, weight 1
 * each (the gateway's `hash % shards` is the Distributed table's rule only then), and the server is
 * the shard its position says.
 */
async function checkClusterLayout(client: ClickHouseClient, cluster: string, index: number, count: number, where: string): Promise<void> {
  const text = await (await client.query({
    query: `SELECT shard_num, shard_weight, is_local FROM system.clusters WHERE cluster = ${sqlString(cluster)} ORDER BY shard_num`,
    format: 'TabSeparated',
  })).text();
  const rows = text.trim() === '' ? [] : text.trim().split('\n').map((l) => l.split('\t').map(Number) as [number, number, number]);
  const shards = new Set(rows.map((r) => r[0]));
  if (shards.size === 0) throw new Error(`cluster ${cluster} is not in the <remote_servers> of ${where}`);
  if (shards.size !== count) throw new Error(`cluster ${cluster} has ${shards.size} shards on ${where}, --clickhouse-shard-urls lists ${count}`);
  if (rows.some((r) => r[1] !== 1)) throw new Error(`cluster ${cluster} has shard weights other than 1 on ${where}: not supported (docs/scale-out.md)`);
  if (!rows.some((r) => r[0] === index + 1 && r[2] === 1)) throw new Error(`${where} is not shard ${index + 1} of cluster ${cluster} (--clickhouse-shard-urls are in shard_num order)`);
}

/**
 * A shard's version, layout check, database and migrations.
 * @throws Error naming the shard (host:port, database, user; never the password) and the reason
 */
export async function setUpShard(opts: ShardSetUpOptions, s: Shard, count: number, database: string, username: string | undefined): Promise<ShardInfo> {
  const boot = bootClientFor(opts, s.origin, username);
  let version: string;
  try {
    const rs = await boot.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' });
    version = (await rs.json<{ v: string }>())[0]?.v ?? '0';
    await checkClusterLayout(boot, opts.cluster, s.index, count, s.where);
    if (database !== 'default') await boot.command({ query: `CREATE DATABASE IF NOT EXISTS \`${database}\`` });
  } catch (e) {
    throw new Error(`telemetry store: ${s.where}: ${message(e)}`, { cause: e });
  } finally {
    await boot.close();
  }
  const flavor = flavorForVersion(version);
  const schema = await migrateSchema({
    exec: async (query) => {
      await s.client.command({ query });
    },
    queryText: async (query) => (await s.client.query({ query, format: 'TabSeparated' })).text(),
  }, { flavor, retentionDays: opts.retentionDays ?? 90, engine: 'server' }, clusterMigrations(opts.cluster, database)).catch((e: unknown) => {
    throw new Error(`telemetry store: ${s.where} refused the cluster table set-up: ${message(e)}`, { cause: e });
  });
  return { version, flavor, schema };
}

/** True for a connection-level failure (the server is down or unreachable), not an answer. */
export function unreachable(e: unknown): boolean {
  for (let c: unknown = e; c instanceof Error; c = c.cause) {
    const code = (c as NodeJS.ErrnoException).code;
    if (code !== undefined && ['ECONNREFUSED', 'ECONNRESET', 'EHOSTUNREACH', 'ENETUNREACH', 'ETIMEDOUT', 'ENOTFOUND', 'EAI_AGAIN', 'EPIPE'].includes(code)) return true;
    if (/timeout/i.test(c.message)) return true;
  }
  return false;
}
