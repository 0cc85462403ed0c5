/**
 * The store as one module sees it: the databases it owns are the environment's own handles, every other
 * named database is a read-only view whose write methods throw a {@link ForeignWriteError} naming the
 * database, its owner and the module that tried. The gateway hands each plugin such a view, so a write
 * to another module's database fails where it is made instead of corrupting the owner's records.
 *
 * The owned handles are the very same objects, so the module's own writes cost nothing more. A foreign
 * handle is a proxy: its reads are bound to the real handle once, then cached, so a read through it costs
 * one proxy trap. The shared `index` and `meta` databases are divided by key prefix and handed over whole:
 * their prefixes are checked at start (StorageOwnership) and by test/store/write-ownership.test.ts.
 */
import type { Database } from 'lmdb';
import { DATABASE_NAMES, type Store } from './lmdb.js';
import type { DatabaseName } from './ownership.js';

/** The lmdb-js methods of a named database that write to it (or run a write conditionally). */
const WRITE_METHODS: ReadonlySet<string | symbol> = new Set([
  'put',
  'putSync',
  'remove',
  'removeSync',
  'del',
  'ifNoExists',
  'ifVersion',
  'clear',
  'clearSync',
  'clearAsync',
  'drop',
  'dropSync',
  'deleteDB',
  'directWrite',
]);

/** A write to a database by a module that does not own it. */
export class ForeignWriteError extends Error {
  constructor(
    readonly db: string,
    readonly module: string,
    readonly owner: string | undefined,
    method: string,
  ) {
    super(`LMDB database '${db}' is owned by ${owner ?? 'no module'}: ${module} may not write it (${method}); call ${owner ?? 'its owner'}'s functions instead`);
    this.name = 'ForeignWriteError';
  }
}

/** `db` with every write method refusing `module`'s call; reads go to `db` itself. */
function readOnly(db: Database<unknown, string>, name: string, module: string, owner: string | undefined): Database<unknown, string> {
  const bound = new Map<string | symbol, unknown>();
  return new Proxy(db, {
    get(target, prop) {
      const cached = bound.get(prop);
      if (cached !== undefined) return cached;
      let value: unknown;
      if (WRITE_METHODS.has(prop)) {
        value = () => {
          throw new ForeignWriteError(name, module, owner, String(prop));
        };
      } else {
        value = Reflect.get(target, prop, target);
        // A method runs on the real handle: lmdb-js keeps per-handle state it reads and writes on `this`.
        if (typeof value !== 'function') return value;
        value = (value as (...args: unknown[]) => unknown).bind(target);
      }
      bound.set(prop, value);
      return value;
    },
    set(target, prop, value) {
      return Reflect.set(target, prop, value, target);
    },
  });
}

/**
 * `store` as `module` may use it: its own databases (`owns`) writable, every other named database
 * read-only. `ownerOf` names a database's owner for the error; `shared` lists the databases divided by
 * key prefix, handed over whole.
 */
export function writeScope(store: Store, module: string, owns: readonly DatabaseName[], ownerOf: (db: string) => string | undefined, shared: readonly string[]): Store {
  const own = new Set<string>([...owns, ...shared]);
  const view: Record<string, unknown> = { ...store };
  const handles = store as unknown as Record<string, Database<unknown, string>>;
  for (const name of DATABASE_NAMES) if (!own.has(name)) view[name] = readOnly(handles[name]!, name, module, ownerOf(name));
  return view as Store;
}
