// Only a database's owner writes it: every `store.<db>.put/remove/…` in src/ sits in the folder of
// the module whose plugin claims <db> (src/gateway/plugins). A foreign write fails here (and at run
// time, src/store/write-scope.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../src/gateway/parts.js';
import { gatewayPlugins } from '../../src/gateway/plugins/index.js';
import { MODULE_FOLDERS } from './module-folders.js';

const ROOT = join(import.meta.dirname, '../..');

/** Where each plugin's module lives: the files allowed to write its databases. */
const MODULE_FILES: Record<string, RegExp> = {
  registry: /^src\/store\/(identity|robot-names)\.ts$/,
  ...MODULE_FOLDERS,
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

const WRITE = /\bstore\.(\w+)\.(put|putSync|remove|removeSync|ifNoExists|ifVersion|clearSync|clearAsync|drop|dropSync)\(/g;

describe('LMDB write ownership', () => {
  it('every write to a named database is in its owner module (shared index/meta are divided by prefix)', () => {
    const owner = new Map<string, string>();
    for (const p of gatewayPlugins({ opts: {} } as unknown as GatewayContext)) for (const db of p.storage.databases) owner.set(db, p.name);
    const foreign: string[] = [];
    for (const file of sources(join(ROOT, 'src'))) {
      const rel = relative(ROOT, file).replaceAll('\\', '/');
      for (const m of readFileSync(file, 'utf8').matchAll(WRITE)) {
        const db = m[1]!;
        const plugin = owner.get(db);
        if (plugin === undefined) continue; // index, meta (divided by prefix), or not a store handle
        if (!MODULE_FILES[plugin]!.test(rel)) foreign.push(`${db} ${rel}`);
      }
    }
    expect([...new Set(foreign)].sort()).toEqual([]);
  });
});
