/**
 * Embedded store: chdb (ClickHouse engine in-process) with MergeTree tables under `<dataDir>/chdb`.
 *
 * chdb must stay on a process main thread: loading it in a worker_thread crashes the process when the
 * worker exits (docs/platform facts). Its async calls run on libuv's pool, so inserts do not block the
 * event loop. It is imported lazily: the engine is ~540 MB and only loaded when this store is chosen.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import { INSERT_COLUMNS, TABLE_NAME } from './columns.js';
import type { SampleStore } from './sample-store.js';
import { loadSamplesDdl } from './schema.js';

export interface ChdbStoreOptions {
  /** The gateway's data dir; the chdb session lives in `<dataDir>/chdb`. */
  dataDir: string;
  /** Rows older than this are dropped by the table's TTL. Default 90. */
  retentionDays?: number;
}

/** Opens the chdb session and creates `telemetry_samples` if missing. Main thread only. */
export async function openChdbStore(opts: ChdbStoreOptions): Promise<SampleStore> {
  if (!isMainThread) throw new Error('chdb must run on the main thread, never in a worker_thread');
  const { Session } = await import('chdb');
  const path = join(opts.dataDir, 'chdb');
  mkdirSync(path, { recursive: true });
  const session = new Session(path);
  let closed = false;
  try {
    const version = (await session.queryAsync('SELECT version()', { format: 'TabSeparated' })).text().trim();
    await session.queryAsync(await loadSamplesDdl('modern', opts.retentionDays ?? 90));
    return {
      kind: 'chdb',
      format: 'tsv',
      version,
      async insert(chunks, totalBytes) {
        if (closed) throw new Error('chdb store is closed');
        const values = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, totalBytes);
        await session.insert({ table: TABLE_NAME, values, format: 'TabSeparated', columns: INSERT_COLUMNS });
      },
      async queryText(sql) {
        return (await session.queryAsync(sql, { format: 'TabSeparated' })).text();
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
    throw e;
  }
}
