// Only a database's owner reads it directly: every `store.<db>.get/getRange/…` (and `store.records`,
// the registry's decode cache), and every `store.<db>` handle handed on as an argument, in src/ sits in
// the folder of the module whose plugin claims <db>.
// Others read through the owner's reads (`identity`, `snapshots`, `catalog` parts) or its functions.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../src/gateway/parts.js';
import { gatewayPlugins } from '../../src/gateway/plugins/index.js';
import { MODULE_FOLDERS } from './module-folders.js';

const ROOT = join(import.meta.dirname, '../..');

/** Where each plugin's module lives: the files allowed to read its databases directly. */
const MODULE_FILES: Record<string, RegExp> = {
  registry: /^src\/store\/(identity|identity-reads|robot-names|record-cache|vda5050-index)\.ts$/,
  ...MODULE_FOLDERS,
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

// A read call on a handle, or the handle itself handed on (to a helper that iterates or caches it).
const READ = /\bstore\.(\w+)(?:\.(?:get|getRange|getBinaryFast|getBinary|getKeys|getValues|getCount|getMany|doesExist|robot|fleet)\(|(?=[),\]]))/g;

describe('LMDB read ownership', () => {
  it('every direct read of a named database is in its owner module, or listed as still to move', () => {
    const owner = new Map<string, string>([['records', 'registry']]);
    for (const p of gatewayPlugins({ opts: {} } as unknown as GatewayContext)) for (const db of p.storage.databases) owner.set(db, p.name);
    const foreign = new Set<string>();
    for (const file of sources(join(ROOT, 'src'))) {
      const rel = relative(ROOT, file).replaceAll('\\', '/');
      for (const m of readFileSync(file, 'utf8').matchAll(READ)) {
        const db = m[1]!;
        const plugin = owner.get(db);
        if (plugin === undefined) continue; // index, meta (divided by prefix), or not a store handle
        if (!MODULE_FILES[plugin]!.test(rel)) foreign.add(`${db} ${rel}`);
      }
    }
    expect([...foreign].sort()).toEqual([]);
  });
});
