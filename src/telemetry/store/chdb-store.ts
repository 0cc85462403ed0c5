/**
 * Embedded store: chdb (ClickHouse engine in-process) with MergeTree tables under `<dataDir>/chdb`.
 *
 * chdb must stay on a process main thread: loading it in a worker_thread crashes the process when the
 * worker exits (docs/platform facts). Its async calls run on libuv's pool, so inserts do not block the
 * event loop. It is imported lazily: the engine is ~540 MB and only loaded when this store is chosen.
 *
 * Rows travel as RowBinary through a spool file: chdb's raw `insert()` accepts text formats only, and
 * TSV cost ~2.5x the CPU of RowBinary on both sides (the decode worker spelling every float, the
 * engine parsing it back: bench/notes/telemetry-ingest.md, "After the first performance pass"). So each insert writes its row chunks to
 * `<dataDir>/chdb-spool/<pid>-<n>.rowbinary` with one `writev` (no concatenation copy), runs
 * `INSERT INTO telemetry_samples (...) SELECT * FROM file('<that file>', RowBinary, '<structure>')`,
 * and deletes the file whatever the outcome. Files are transient: at most `maxInFlight` of the insert
 * queue exist at once, each at most one insert block (48 MiB by default); leftovers of a crashed
 * process are removed when the store opens (their rows were never acknowledged as stored).
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { open, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { INSERT_COLUMN_LIST, ROWBINARY_STRUCTURE, TABLE_NAME } from './columns.js';
import type { SampleStore } from './sample-store.js';
import { checkBoundQuery, chdbParams, parseTabSeparated } from './bound-query.js';
import { migrateSchema } from './migrations.js';

export interface ChdbStoreOptions {
  /** The gateway's data dir; the chdb session lives in `<dataDir>/chdb`. */
  dataDir: string;
  /** Rows older than this are dropped by the table's TTL. Default 90. */
  retentionDays?: number;
}

/** A ClickHouse string literal (the path is the only value interpolated into SQL here). */
function sqlString(s: string): string {
  return `'${s.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** Writes `chunks` to a new file in one gather write. */
async function writeSpool(file: string, chunks: readonly Uint8Array[], totalBytes: number): Promise<void> {
  const fh = await open(file, 'wx');
  try {
    let written = 0;
    // writev takes at most IOV_MAX (1024) buffers per call on Linux.
    for (let i = 0; i < chunks.length; i += 1024) {
      written += (await fh.writev(chunks.slice(i, i + 1024))).bytesWritten;
    }
    if (written !== totalBytes) throw new Error(`spool write incomplete: ${written} of ${totalBytes} bytes`);
  } finally {
    await fh.close();
  }
}

/** Opens the chdb session and creates `telemetry_samples` if missing. Main thread only. */
export async function openChdbStore(opts: ChdbStoreOptions): Promise<SampleStore> {
  if (!isMainThread) throw new Error('chdb must run on the main thread, never in a worker_thread');
  const { Session } = await import('chdb');
  const path = join(opts.dataDir, 'chdb');
  const spoolDir = join(opts.dataDir, 'chdb-spool');
  // Sync I/O once at start-up, not on the hot path.
  mkdirSync(path, { recursive: true });
  mkdirSync(spoolDir, { recursive: true });
  for (const name of readdirSync(spoolDir)) rmSync(join(spoolDir, name), { force: true });
  const session = new Session(path);
  let closed = false;
  let nextFile = 0;
  try {
    const version = (await session.queryAsync('SELECT version()', { format: 'TabSeparated' })).text().trim();
    const schema = await migrateSchema(
      {
        exec: async (sql) => {
          await session.queryAsync(sql);
        },
        queryText: async (sql) => (await session.queryAsync(sql, { format: 'TabSeparated' })).text(),
      },
      { flavor: 'modern', retentionDays: opts.retentionDays ?? 90, engine: 'chdb' },
    );
    const insertSuffix = `, RowBinary, ${sqlString(ROWBINARY_STRUCTURE)})`;
    // The token makes a retried block a no-op (the table's deduplication window: migration 2).
    const insertSql = (file: string, token: string | undefined): string =>
      `INSERT INTO ${TABLE_NAME} ${INSERT_COLUMN_LIST}${token !== undefined ? ` SETTINGS insert_deduplication_token = ${sqlString(token)}` : ''} SELECT * FROM file(${sqlString(file)}${insertSuffix}`;
    return {
      kind: 'chdb',
      version,
      schema,
      // Set up by the open above, which throws when it cannot: nothing is left to do later.
      setUpError: null,
      setUpDone: () => Promise.resolve(),
      ensureSetUp: () => Promise.resolve(),
      // `SELECT 1` in the session tells whether it answers (store-health.ts).
      probe: null,
      dedup: 'token',
      async insertFile(file, _rows, token) {
        if (closed) throw new Error('chdb store is closed');
        await session.queryAsync(insertSql(file, token));
      },
      async insert(chunks, totalBytes, _rows, token) {
        if (closed) throw new Error('chdb store is closed');
        const file = join(spoolDir, `${process.pid}-${nextFile++}.rowbinary`);
        try {
          await writeSpool(file, chunks, totalBytes);
          await session.queryAsync(insertSql(file, token));
        } finally {
          // Not logged: the file is gone when the insert consumed it, and any left over is removed
          // with the whole spool directory at the next start (above); nothing an operator can act on.
          await unlink(file).catch(() => {});
        }
      },
      async queryText(sql) {
        return (await session.queryAsync(sql, { format: 'TabSeparated' })).text();
      },
      async select(query) {
        if (closed) throw new Error('chdb store is closed');
        checkBoundQuery(query);
        return parseTabSeparated((await session.queryBindAsync(query.sql, chdbParams(query), { format: 'TabSeparated' })).text());
      },
      close() {
        if (!closed) {
          closed = true;
          session.close();
        }
        return Promise.resolve();
      },
    };
  } catch (e) {
    session.close();
    throw new Error(`telemetry store: embedded chdb in ${path} failed to start: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
  }
}
