/**
 * The telemetry tables on a ClickHouse cluster (docs/scale-out.md), created by the
 * gateway on every shard at start-up, as migrations recorded per shard (migrations.ts rules apply:
 * idempotent, additive; several depots' gateways may run them at once):
 *
 * - `telemetry_samples_local`: the rows a shard owns, a ReplicatedMergeTree (its ZooKeeper path per
 *   `{shard}` macro, replica per `{replica}`), because only replicated tables deduplicate a retried
 *   block on 18.16. `replicated_deduplication_window` keeps the hashes of the last 10,000 blocks
 *   (default 100): every depot's blocks count in it, and a block replayed after a gateway crash must
 *   still find its hash (docs/scale-out.md has the arithmetic).
 * - `telemetry_samples`: a Distributed table over the local ones, sharded by `cityHash64(robot_id)`,
 *   the same expression the gateway uses to pick a robot's shard: readers query it on any shard and
 *   see every depot's rows once; the gateway's own reads (columns.ts TABLE_NAME) go through it too.
 */
import { TABLE_NAME } from './columns.js';
import { isDatabaseName } from './clickhouse-target.js';
import { addColumnsIfMissing, MAP_AND_LOADS_COLUMNS, type Migration } from './migrations.js';
import { loadSamplesDdl } from './schema.js';

export const LOCAL_TABLE = `${TABLE_NAME}_local`;

/** The sharding expression of the Distributed table; the gateway computes the same on the server. */
export const SHARDING_KEY = 'cityHash64(robot_id)';

/** Deduplication window of the local table, in blocks (see the file comment). */
export const DEDUP_WINDOW_BLOCKS = 10_000;

/** The cluster's migrations, in order; append only. */
export function clusterMigrations(cluster: string, database: string): Migration[] {
  if (!isDatabaseName(cluster)) throw new Error(`ClickHouse cluster name '${cluster}' is not a plain identifier`);
  if (!isDatabaseName(database)) throw new Error(`ClickHouse database name '${database}' is not a plain identifier`);
  return [
    {
      version: 1,
      name: `${LOCAL_TABLE} (ReplicatedMergeTree)`,
      statements: async (ctx) => [localDdl(await loadSamplesDdl(ctx.flavor, ctx.retentionDays), database)],
    },
    {
      version: 2,
      name: `${TABLE_NAME} (Distributed over ${cluster})`,
      statements: () => Promise.resolve([
        `CREATE TABLE IF NOT EXISTS ${TABLE_NAME} AS ${LOCAL_TABLE} ENGINE = Distributed(${cluster}, ${database}, ${LOCAL_TABLE}, ${SHARDING_KEY})`,
      ]),
    },
    {
      version: 3,
      name: `${LOCAL_TABLE} and ${TABLE_NAME} map id and loads`,
      // The local table first: the Distributed table reads the columns it names from it.
      statements: async (ctx, db) => [
        ...(await addColumnsIfMissing(db, LOCAL_TABLE, MAP_AND_LOADS_COLUMNS[ctx.flavor])),
        ...(await addColumnsIfMissing(db, TABLE_NAME, MAP_AND_LOADS_COLUMNS[ctx.flavor].map(([c, d]) => [c, d.replace(/ CODEC\(.*\)$/, '')] as const))),
      ],
    },
  ];
}

/** The single-server DDL turned into the shard-local replicated table. */
export function localDdl(samplesDdl: string, database: string): string {
  const head = `CREATE TABLE IF NOT EXISTS ${TABLE_NAME}\n`;
  if (!samplesDdl.startsWith(head) || !/\nENGINE = MergeTree\n/.test(samplesDdl) || !/\nSETTINGS [^\n]+$/.test(samplesDdl)) {
    throw new Error('telemetry/schema DDL changed shape: update cluster-schema.ts');
  }
  return samplesDdl
    .replace(head, `CREATE TABLE IF NOT EXISTS ${LOCAL_TABLE}\n`)
    .replace('\nENGINE = MergeTree\n', `\nENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/${database}/${LOCAL_TABLE}', '{replica}')\n`)
    .replace(/\nSETTINGS ([^\n]+)$/, `\nSETTINGS $1, replicated_deduplication_window = ${DEDUP_WINDOW_BLOCKS}`);
}
