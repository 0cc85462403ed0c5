/**
 * The telemetry schema as an ordered list of migrations, run by the gateway at start-up on chdb and
 * on a ClickHouse server alike. Applied versions are recorded in `fleetgw_schema_migrations`, so a
 * later release runs only the steps a store has not seen, in order.
 *
 * Rules every migration follows (docs/operations.md, "Upgrade"):
 * - idempotent: two gateways starting at once against one server may both run a step; both then
 *   record it, and the duplicate row is harmless (the state is `max(version)`). Tables use
 *   `IF NOT EXISTS`; columns use {@link addColumnIfMissing}, because 18.16 has no
 *   `ADD COLUMN IF NOT EXISTS`;
 * - additive for writers (new tables, new columns with a DEFAULT): a gateway one release older keeps
 *   inserting with its explicit column list, so depots can be upgraded one at a time.
 *
 * Each step names the SQL it runs; the statements are plain DDL, and a step that needs a setting or
 * an engine looks before it acts (Debian's ClickHouse 18.16 server, chdb 3.x).
 */
import { loadSamplesDdl, type SchemaFlavor } from './schema.js';

/** The table that records applied versions (in the gateway's database). */
export const MIGRATIONS_TABLE = 'fleetgw_schema_migrations';

/** What a migration needs to know about the store it runs on. */
export interface MigrationContext {
  flavor: SchemaFlavor;
  retentionDays: number;
  /** chdb in the gateway's process, or a ClickHouse server (a step may apply to one only: migration 3). */
  engine: 'chdb' | 'server';
}

export interface Migration {
  /** 1, 2, 3 …: consecutive, never reused, never edited once released. */
  version: number;
  name: string;
  /** The statements to run; `db` lets a step look before it acts (system.columns on 18.16). */
  statements(ctx: MigrationContext, db: SchemaExecutor): Promise<string[]>;
}

/** The SQL surface both stores offer (ClickHouse server over HTTP, chdb in-process). */
export interface SchemaExecutor {
  /** Runs a statement that returns no rows. */
  exec(sql: string): Promise<void>;
  /** Runs a query and returns its TabSeparated text. */
  queryText(sql: string): Promise<string>;
}

export interface MigrationResult {
  /** The highest version recorded before this run (0: a new store). */
  from: number;
  /** The version the store is at now. */
  to: number;
  /** Versions applied by this run, in order. */
  applied: number[];
  /** Set when the store records a version this gateway does not know (a newer gateway migrated it). */
  newerThanKnown: boolean;
}

/** The released migrations, in order. Append only. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'telemetry_samples',
    // telemetry/schema/samples.{modern,legacy}.sql: the table existed before migrations were recorded,
    // so a store created by an older gateway passes through this step unchanged (IF NOT EXISTS).
    statements: async (ctx) => [await loadSamplesDdl(ctx.flavor, ctx.retentionDays)],
  },
  {
    version: 2,
    name: 'telemetry_samples deduplication window',
    // A block replayed from the spool after an ambiguous insert or a crash carries
    // the same insert_deduplication_token (or, before 22.2, the same bytes), and a non-replicated
    // MergeTree drops it only with this window (the last 1,000 blocks; the spool replays far fewer
    // than that after any one failure). 18.16 has no such setting (and no MODIFY SETTING): nothing.
    statements: (ctx) => Promise.resolve(ctx.flavor === 'modern'
      ? ['ALTER TABLE telemetry_samples MODIFY SETTING non_replicated_deduplication_window = 1000']
      : []),
  },
  {
    version: 3,
    name: 'telemetry_samples merge selector base',
    // The embedded store only: the gateway writes a part per insert (every 1-5 s),
    // and with the default base (5) chdb merged the small parts again on nearly every insert (at 100
    // robots the largest cost of the embedded store: bench/README.md#chdb-merges).
    // Base 20 lets more parts of a size gather before they are merged (less merge CPU, a few more
    // active parts, far below parts_to_delay_insert, 1,000 per partition; bench/notes/telemetry-ingest.md,
    // "Merge selector base"). Not on a server (nor a cluster's shards):
    // not measured there, and a server's parts are its operator's to tune; the step records itself
    // there as done with nothing run, so an operator wanting it sets it by hand. The literal is part
    // of the released step: never edit it (a new base is a new migration).
    statements: async (ctx, db) => {
      if (ctx.engine !== 'chdb') return [];
      const known = (await db.queryText("SELECT count() FROM system.merge_tree_settings WHERE name = 'merge_selector_base'")).trim();
      return known === '1' ? ['ALTER TABLE telemetry_samples MODIFY SETTING merge_selector_base = 20'] : [];
    },
  },
  {
    version: 4,
    name: 'telemetry_samples map id and loads',
    statements: (ctx, db) => addColumnsIfMissing(db, 'telemetry_samples', MAP_AND_LOADS_COLUMNS[ctx.flavor]),
  },
];

/**
 * Migration 4's columns (the map id and the load group), as the DDL files of that release declare
 * them, each with the DEFAULT a writer one release older leaves it at. A released step's literals:
 * never edited (the cluster's migration 3 adds the same).
 */
export const MAP_AND_LOADS_COLUMNS: Readonly<Record<SchemaFlavor, ReadonlyArray<readonly [column: string, definition: string]>>> = {
  modern: [
    ['map_id', "LowCardinality(String) DEFAULT ''"],
    ['load_count', 'Int32 DEFAULT 0 CODEC(T64, ZSTD(1))'],
    ['load_ids', 'Array(String) DEFAULT [] CODEC(ZSTD(1))'],
    ['load_types', 'Array(LowCardinality(String)) DEFAULT []'],
    ['load_weight_kg', 'Float32 DEFAULT 0 CODEC(Gorilla, ZSTD(1))'],
  ],
  legacy: [
    ['map_id', "String DEFAULT ''"],
    ['load_count', 'Int32 DEFAULT 0'],
    ['load_ids', 'Array(String) DEFAULT []'],
    ['load_types', 'Array(String) DEFAULT []'],
    ['load_weight_kg', 'Float32 DEFAULT 0'],
  ],
};

/** {@link addColumnIfMissing} for each column, in order (ADD COLUMN appends: the table's order is the insert order). */
export async function addColumnsIfMissing(db: SchemaExecutor, table: string, columns: ReadonlyArray<readonly [string, string]>): Promise<string[]> {
  const out: string[] = [];
  for (const [column, definition] of columns) out.push(...(await addColumnIfMissing(db, table, column, definition)));
  return out;
}

/** MergeTree with the ORDER BY form: accepted by 18.16 and by current engines (chdb). */
const MIGRATIONS_DDL = `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE}
(
    version    UInt32,
    name       String,
    applied_at DateTime DEFAULT now()
)
ENGINE = MergeTree
ORDER BY version`;

/** A ClickHouse string literal. */
function sqlString(s: string): string {
  return `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/**
 * `ALTER TABLE … ADD COLUMN` when the column is missing, nothing when it exists: the idempotent form
 * that works on 18.16 as well (it has no `ADD COLUMN IF NOT EXISTS`). `definition` is the type and any
 * DEFAULT (writers one release older omit the column, so give it one).
 */
export async function addColumnIfMissing(db: SchemaExecutor, table: string, column: string, definition: string): Promise<string[]> {
  const n = (await db.queryText(`SELECT count() FROM system.columns WHERE database = currentDatabase() AND table = ${sqlString(table)} AND name = ${sqlString(column)}`)).trim();
  return n === '0' ? [`ALTER TABLE ${table} ADD COLUMN ${column} ${definition}`] : [];
}

/** Checks that `list` is 1, 2, 3 … (a programming error otherwise, caught by the unit test). */
function checkOrder(list: readonly Migration[]): void {
  list.forEach((m, i) => {
    if (m.version !== i + 1) throw new Error(`migration ${m.name} has version ${m.version}, expected ${i + 1}`);
  });
}

/** The highest recorded version (0 when none). */
export async function schemaVersion(db: SchemaExecutor): Promise<number> {
  const text = (await db.queryText(`SELECT max(version) FROM ${MIGRATIONS_TABLE}`)).trim();
  const n = Number.parseInt(text === '' ? '0' : text, 10);
  if (!Number.isSafeInteger(n) || n < 0) throw new Error(`${MIGRATIONS_TABLE}: unexpected max(version) '${text}'`);
  return n;
}

/**
 * Creates the version table if missing, then applies every migration above the recorded version, in
 * order, recording each one right after its statements succeed (a crash between the two re-runs an
 * idempotent step next time; it never skips one).
 * @throws the engine's error, prefixed with the migration that failed
 */
export async function migrateSchema(db: SchemaExecutor, ctx: MigrationContext, list: readonly Migration[] = MIGRATIONS): Promise<MigrationResult> {
  checkOrder(list);
  await db.exec(MIGRATIONS_DDL);
  const from = await schemaVersion(db);
  const applied: number[] = [];
  for (const m of list) {
    if (m.version <= from) continue;
    try {
      for (const sql of await m.statements(ctx, db)) await db.exec(sql);
      await db.exec(`INSERT INTO ${MIGRATIONS_TABLE} (version, name) VALUES (${m.version}, ${sqlString(m.name)})`);
    } catch (e) {
      throw new Error(`telemetry schema migration ${m.version} (${m.name}) failed: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
    }
    applied.push(m.version);
  }
  const known = list.length;
  return { from, to: Math.max(from, known), applied, newerThanKnown: from > known };
}
