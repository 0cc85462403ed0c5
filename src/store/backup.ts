/**
 * A consistent copy of the LMDB environment while the gateway runs, and its verification.
 *
 * LMDB copies under one read transaction (mdb_env_copy2 through lmdb-js `backup`): the copy is the
 * state of one committed transaction, whatever the writers do meanwhile, and writers are not blocked.
 * A read transaction held for the copy keeps pages from being reused, so the live file may grow while
 * a long copy runs; compaction (`compact`) writes only live pages (smaller, slower).
 */
import { chmodSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { DATABASE_NAMES } from './lmdb.js';

/** Entries per named database. */
export type StoreCounts = Record<string, number>;

/**
 * Copies `<dataDir>/lmdb` into the empty directory `<targetDir>/lmdb` (created here).
 * Safe while a gateway has the environment open (LMDB is multi-process).
 */
export async function copyStore(dataDir: string, targetDir: string, compact: boolean): Promise<void> {
  const env = open({ path: join(dataDir, 'lmdb'), maxDbs: 32, compression: false });
  try {
    const dest = join(targetDir, 'lmdb');
    mkdirSync(dest, { recursive: true, mode: 0o700 });
    await env.backup(dest, compact);
    // The copy holds hashed credentials: readable by the backup's owner only.
    chmodSync(join(dest, 'data.mdb'), 0o600);
  } finally {
    await env.close();
  }
}

/** Opens `<dir>/lmdb` read-only and counts the entries of every named database. */
export async function countStore(dir: string): Promise<StoreCounts> {
  const env = open({ path: join(dir, 'lmdb'), maxDbs: 32, readOnly: true, compression: false });
  try {
    const counts: StoreCounts = {};
    for (const name of DATABASE_NAMES) counts[name] = env.openDB({ name }).getCount();
    return counts;
  } finally {
    await env.close();
  }
}
