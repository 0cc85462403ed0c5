/**
 * The schema migration runner on the real engines: Debian's ClickHouse 18.16 server (or
 * FLEETGW_TEST_CLICKHOUSE_URL) and chdb. Versions apply in order, once, are recorded, resume after a
 * failure, and a store ahead of the gateway is reported, not touched.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openChdbStore } from '../../src/telemetry/store/chdb-store.js';
import { addColumnIfMissing, MIGRATIONS, MIGRATIONS_TABLE, migrateSchema, schemaVersion, type Migration, type SchemaExecutor } from '../../src/telemetry/store/migrations.js';
import { SAMPLE_FIELDS } from '../../src/telemetry/sample/sample-table.js';
import { samplesDdlFile } from '../../src/telemetry/store/samples-ddl.js';
import { tempDir } from './helpers.js';

const url = inject('clickhouseUrl');
const skipReason = inject('clickhouseSkipReason');
const ctx = { flavor: 'legacy' as const, retentionDays: 30, engine: 'server' as const };

/** SQL over the server's HTTP interface in one database. */
function httpExecutor(base: string, database: string): SchemaExecutor {
  const run = async (sql: string): Promise<string> => {
    const res = await fetch(`${base}/?database=${database}`, { method: 'POST', body: sql });
    const text = await res.text();
    if (res.status !== 200) throw new Error(text.trim());
    return text;
  };
  return { exec: async (sql) => void (await run(sql)), queryText: run };
}

const step = (version: number, name: string, ...sql: string[]): Migration => ({ version, name, statements: () => Promise.resolve(sql) });
const m1 = step(1, 'things', 'CREATE TABLE IF NOT EXISTS things (id UInt32) ENGINE = MergeTree ORDER BY id');
const m2: Migration = { version: 2, name: 'things.note', statements: (_ctx, db) => addColumnIfMissing(db, 'things', 'note', "String DEFAULT ''") };
const m3 = step(3, 'others', 'CREATE TABLE IF NOT EXISTS others (id UInt32) ENGINE = MergeTree ORDER BY id');

describe('migration list', () => {
  it('is numbered 1, 2, 3 … and the runner refuses a gap', async () => {
    MIGRATIONS.forEach((m, i) => expect(m.version).toBe(i + 1));
    const never: SchemaExecutor = { exec: () => Promise.reject(new Error('not reached')), queryText: () => Promise.reject(new Error('not reached')) };
    await expect(migrateSchema(never, ctx, [m1, m3])).rejects.toThrow('migration others has version 3, expected 2');
  });

  it('migration 3 (merge selector base) changes chdb only, and only where the engine has the setting', async () => {
    const step3 = MIGRATIONS[2]!;
    const has = (n: string): SchemaExecutor => ({ exec: () => Promise.resolve(), queryText: () => Promise.resolve(`${n}\n`) });
    expect(await step3.statements({ flavor: 'modern', retentionDays: 30, engine: 'chdb' }, has('1'))).toEqual(['ALTER TABLE telemetry_samples MODIFY SETTING merge_selector_base = 20']);
    expect(await step3.statements({ flavor: 'modern', retentionDays: 30, engine: 'chdb' }, has('0'))).toEqual([]);
    expect(await step3.statements({ flavor: 'modern', retentionDays: 30, engine: 'server' }, has('1'))).toEqual([]);
  });
});

describe.skipIf(url === null)(`schema migrations on a ClickHouse server${url === null ? ` (skipped: ${skipReason})` : ''}`, () => {
  const database = `fleetgw_migrations_${process.pid}_${Date.now()}`;
  let db: SchemaExecutor;

  beforeAll(async () => {
    await fetch(`${url}/`, { method: 'POST', body: `CREATE DATABASE ${database}` });
    db = httpExecutor(url!, database);
  });
  afterAll(async () => {
    await fetch(`${url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${database}` });
  });

  it('applies pending versions in order, records each, and applies nothing twice', async () => {
    expect(await migrateSchema(db, ctx, [m1])).toEqual({ from: 0, to: 1, applied: [1], newerThanKnown: false });
    expect(await migrateSchema(db, ctx, [m1, m2, m3])).toEqual({ from: 1, to: 3, applied: [2, 3], newerThanKnown: false });
    expect(await migrateSchema(db, ctx, [m1, m2, m3])).toEqual({ from: 3, to: 3, applied: [], newerThanKnown: false });
    expect(await db.queryText(`SELECT version, name FROM ${MIGRATIONS_TABLE} ORDER BY version`)).toBe('1\tthings\n2\tthings.note\n3\tothers\n');
    expect(await db.queryText("SELECT name, type FROM system.columns WHERE database = currentDatabase() AND table = 'things' ORDER BY name")).toBe('id\tUInt32\nnote\tString\n');
  });

  it('addColumnIfMissing is a no-op once the column exists (a step re-run after a crash)', async () => {
    expect(await addColumnIfMissing(db, 'things', 'note', "String DEFAULT ''")).toEqual([]);
    expect(await addColumnIfMissing(db, 'things', 'extra', 'UInt8 DEFAULT 0')).toEqual(['ALTER TABLE things ADD COLUMN extra UInt8 DEFAULT 0']);
  });

  it('stops at a failing step, names it, records nothing for it, and resumes there once it is fixed', async () => {
    const bad = step(4, 'broken', 'CREATE TABLE IF NOT EXISTS broken (id UInt32) ENGINE = NoSuchEngine');
    const m5 = step(5, 'after', 'CREATE TABLE IF NOT EXISTS after (id UInt32) ENGINE = MergeTree ORDER BY id');
    await expect(migrateSchema(db, ctx, [m1, m2, m3, bad, m5])).rejects.toThrow(/telemetry schema migration 4 \(broken\) failed: .*NoSuchEngine/);
    expect(await schemaVersion(db)).toBe(3);
    const fixed = step(4, 'broken', 'CREATE TABLE IF NOT EXISTS broken (id UInt32) ENGINE = MergeTree ORDER BY id');
    expect(await migrateSchema(db, ctx, [m1, m2, m3, fixed, m5])).toMatchObject({ from: 3, to: 5, applied: [4, 5] });
  });

  it('reports a store migrated by a newer gateway and changes nothing', async () => {
    expect(await migrateSchema(db, ctx, [m1, m2])).toEqual({ from: 5, to: 5, applied: [], newerThanKnown: true });
  });

  it('runs the real list: telemetry_samples (legacy flavor on 18.16), then the deduplication window (nothing on 18.16)', async () => {
    const fresh = `${database}_real`;
    await fetch(`${url}/`, { method: 'POST', body: `CREATE DATABASE ${fresh}` });
    try {
      const real = httpExecutor(url!, fresh);
      const version = (await real.queryText('SELECT version()')).trim();
      const flavor = Number.parseInt(version, 10) >= 21 ? 'modern' : 'legacy';
      expect(await migrateSchema(real, { flavor, retentionDays: 30, engine: 'server' })).toEqual({ from: 0, to: 4, applied: [1, 2, 3, 4], newerThanKnown: false });
      expect(await real.queryText("SELECT count() FROM system.tables WHERE database = currentDatabase() AND name = 'telemetry_samples'")).toBe('1\n');
    } finally {
      await fetch(`${url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${fresh}` });
    }
  });

  it('migration 4 adds the map id and load columns to a table of the release before, keeping its rows', async () => {
    const old = `${database}_v3`;
    await fetch(`${url}/`, { method: 'POST', body: `CREATE DATABASE ${old}` });
    try {
      const db = httpExecutor(url!, old);
      const version = (await db.queryText('SELECT version()')).trim();
      const flavor = Number.parseInt(version, 10) >= 21 ? 'modern' : 'legacy';
      // The store as the release before left it: the table without the new columns, versions 1-3 recorded.
      const before = SAMPLE_FIELDS.filter((f) => !NEW_COLUMNS.includes(f.column));
      await db.exec(samplesDdlFile(flavor, before).split('\n').filter((l) => !l.startsWith('--')).join('\n').replaceAll('{retention_days}', '30'));
      expect(await migrateSchema(db, { flavor, retentionDays: 30, engine: 'server' }, MIGRATIONS.slice(0, 3))).toMatchObject({ to: 3 });
      const columnsOf = async (): Promise<string> => db.queryText("SELECT name FROM system.columns WHERE database = currentDatabase() AND table = 'telemetry_samples'");
      expect((await columnsOf()).trim().split('\n')).not.toContain('map_id');
      // Rows written by that release's column list.
      const oldColumns = before.map((f) => f.column);
      await db.exec(`INSERT INTO telemetry_samples (${oldColumns.join(', ')}) FORMAT JSONEachRow ${[1, 2, 3].map((i) => JSON.stringify(Object.fromEntries(before.map((f) => [f.column, valueFor(f.rowType, i)])))).join('\n')}`);
      const oldRows = await db.queryText(`SELECT ${oldColumns.join(', ')} FROM telemetry_samples ORDER BY ts_ms FORMAT JSONEachRow`);

      expect(await migrateSchema(db, { flavor, retentionDays: 30, engine: 'server' })).toEqual({ from: 3, to: 4, applied: [4], newerThanKnown: false });
      // The columns are there, in the table's order (the insert order), after the old ones.
      const names = (await columnsOf()).trim().split('\n');
      expect(names.slice(-NEW_COLUMNS.length)).toEqual(NEW_COLUMNS);
      expect(names.filter((n) => n !== 'ts')).toEqual(SAMPLE_FIELDS.map((f) => f.column));
      // No row lost or changed; the new columns read their defaults.
      expect(await db.queryText(`SELECT ${oldColumns.join(', ')} FROM telemetry_samples ORDER BY ts_ms FORMAT JSONEachRow`)).toBe(oldRows);
      expect(await db.queryText('SELECT map_id, load_count, load_ids, load_types, load_weight_kg FROM telemetry_samples ORDER BY ts_ms FORMAT TabSeparated')).toBe("\t0\t[]\t[]\t0\n".repeat(3));
      // A gateway of the release before keeps inserting with its column list; the new release writes the new columns.
      await db.exec(`INSERT INTO telemetry_samples (${oldColumns.join(', ')}) FORMAT JSONEachRow ${JSON.stringify(Object.fromEntries(before.map((f) => [f.column, valueFor(f.rowType, 4)])))}`);
      await db.exec(`INSERT INTO telemetry_samples (${SAMPLE_FIELDS.map((f) => f.column).join(', ')}) FORMAT JSONEachRow ${JSON.stringify({ ...Object.fromEntries(before.map((f) => [f.column, valueFor(f.rowType, 5)])), map_id: 'hall-2', load_count: 2, load_ids: ['p-7', ''], load_types: ['EPAL', 'box'], load_weight_kg: 812.5 })}`);
      expect(await db.queryText('SELECT ts_ms, map_id, load_count, load_ids, load_types, load_weight_kg FROM telemetry_samples WHERE ts_ms >= 1700000000004 ORDER BY ts_ms FORMAT TabSeparated'))
        .toBe("1700000000004\t\t0\t[]\t[]\t0\n1700000000005\thall-2\t2\t['p-7','']\t['EPAL','box']\t812.5\n");
      // Re-run after a crash before it was recorded: nothing to add.
      expect(await MIGRATIONS[3]!.statements({ flavor, retentionDays: 30, engine: 'server' }, db)).toEqual([]);
    } finally {
      await fetch(`${url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${old}` });
    }
  });
});

const NEW_COLUMNS = ['map_id', 'load_count', 'load_ids', 'load_types', 'load_weight_kg'];

/** A value of a column of each type for row `i` (JSONEachRow). */
function valueFor(rowType: string, i: number): unknown {
  switch (rowType) {
    case 'String': return `s${i}`;
    case 'Int64': return 1_700_000_000_000 + i;
    case 'Array(String)': return [`a${i}`, 'b'];
    case 'Enum8': return 'ok';
    default: return i;
  }
}

describe('schema migrations on chdb', () => {
  const tmp = tempDir('migrations-chdb');
  afterAll(() => tmp.remove());

  it('a new data dir is migrated to the latest version; reopening applies nothing', async () => {
    const first = await openChdbStore({ dataDir: tmp.dir });
    try {
      expect(first.schema).toEqual({ from: 0, to: MIGRATIONS.length, applied: MIGRATIONS.map((m) => m.version), newerThanKnown: false });
      expect(await first.queryText(`SELECT version, name FROM ${MIGRATIONS_TABLE} ORDER BY version`)).toBe('1\ttelemetry_samples\n2\ttelemetry_samples deduplication window\n3\ttelemetry_samples merge selector base\n4\ttelemetry_samples map id and loads\n');
      // Migration 2: a replayed block with the same insert_deduplication_token is dropped (issue 14 part 1).
      expect(await first.queryText("SELECT count() FROM system.tables WHERE name = 'telemetry_samples' AND engine_full LIKE '%non_replicated_deduplication_window = 1000%'")).toBe('1\n');
      // Migration 3: fewer re-merges of the small parts the gateway writes (issue 12 target 2).
      expect(await first.queryText(`SELECT count() FROM system.tables WHERE name = 'telemetry_samples' AND engine_full LIKE '%merge_selector_base = 20%'`)).toBe('1\n');
    } finally {
      await first.close();
    }
    const again = await openChdbStore({ dataDir: tmp.dir });
    try {
      expect(again.schema).toEqual({ from: MIGRATIONS.length, to: MIGRATIONS.length, applied: [], newerThanKnown: false });
    } finally {
      await again.close();
    }
  });
});
