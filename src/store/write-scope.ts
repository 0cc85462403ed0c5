/**
 * The store as one module sees it. The databases it owns are the environment's own handles; every
 * other named database is a read-only view whose write methods throw a {@link ForeignWriteError}
 * naming the database, its owner and the module that tried. The shared `index` and `meta`, divided by
 * key prefix, are views whose keyed writes go to the real handle only for a key whose first
 * '/'-separated part is one of the module's claimed prefixes (as StorageOwnership matches it; a key
 * without '/' is its own prefix); any other key throws a {@link ForeignKeyWriteError} naming the
 * database, the key's prefix (never the rest of the key: session ids are filed under one), the
 * prefix's owner and the module, and a write of the whole database (`clear…`, `drop…`) always throws.
 * The gateway hands
 * each plugin such a view, so a write to another module's records fails where it is made instead of
 * corrupting the owner's.
 *
 * The owned handles are the very same objects, so the module's own writes cost nothing more. The
 * other handles are proxies: every method is bound to the real handle once, then cached, so a read
 * costs one proxy trap, and a write to a shared database one trap and a scan of the module's few
 * prefixes (no allocation). Reads are never checked. A write through a view inside
 * `store.root.transaction…` is the real handle's write in that transaction.
 */
import type { Database } from 'lmdb';
import { DATABASE_NAMES, type Store } from './lmdb.js';
import { keyOwnerPart, keyPartIn, SHARED_DATABASES, type SharedDatabase, type StorageClaim } from './ownership.js';

/** The lmdb-js methods of a named database that write one key (or run a write conditionally on it); the key is the first argument. */
const KEYED_WRITES: ReadonlySet<string | symbol> = new Set(['put', 'putSync', 'remove', 'removeSync', 'del', 'ifNoExists', 'ifVersion', 'directWrite']);

/** The lmdb-js methods of a named database that write to it: the keyed ones and those of the whole database. */
const WRITE_METHODS: ReadonlySet<string | symbol> = new Set([...KEYED_WRITES, 'clear', 'clearSync', 'clearAsync', 'drop', 'dropSync', 'deleteDB']);

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

/**
 * A write to a shared database (`index`, `meta`) under a key prefix the module does not own, or of
 * the whole database (`prefix` null). `owner` is the prefix's owner, undefined when none claimed it.
 */
export class ForeignKeyWriteError extends ForeignWriteError {
  constructor(
    db: string,
    module: string,
    readonly prefix: string | null,
    owner: string | undefined,
    method: string,
  ) {
    super(db, module, owner, method);
    this.message =
      prefix === null
        ? `LMDB database '${db}' is shared by key prefix: ${module} may not write it whole (${method})`
        : owner === undefined
          ? `key prefix '${prefix}' of LMDB database '${db}' is claimed by no module: ${module} may not write it (${method}); claim it in the owning plugin's storage.prefixes`
          : `key prefix '${prefix}' of LMDB database '${db}' is owned by ${owner}: ${module} may not write it (${method}); call ${owner}'s functions instead`;
    this.name = 'ForeignKeyWriteError';
  }
}

/** Who owns what, for the errors' owner names (StorageOwnership answers both). */
export interface StorageOwners {
  /** The owner of a named database, or undefined. */
  ownerOf(db: string): string | undefined;
  /** The owner of a key of a shared database (by its first '/'-separated part), or undefined. */
  ownerOfKey(db: SharedDatabase, key: string): string | undefined;
}

type Method = (...args: unknown[]) => unknown;

/** The longest prefix an error repeats: a key without '/' is its own prefix, and an error names no long key. */
const SHOWN_PREFIX = 64;

/** `db` with each write method replaced by `writeFor(name, the real method)`; every other method runs on `db` itself. */
function guarded(db: Database<unknown, string>, writeFor: (method: string, real: Method) => Method): Database<unknown, string> {
  const bound = new Map<string | symbol, unknown>();
  return new Proxy(db, {
    get(target, prop) {
      const cached = bound.get(prop);
      if (cached !== undefined) return cached;
      let value: unknown = Reflect.get(target, prop, target);
      if (WRITE_METHODS.has(prop)) {
        value = writeFor(String(prop), value as Method);
      } else {
        if (typeof value !== 'function') return value;
        // A method runs on the real handle: lmdb-js keeps per-handle state it reads and writes on `this`.
        value = (value as Method).bind(target);
      }
      bound.set(prop, value);
      return value;
    },
    set(target, prop, value) {
      return Reflect.set(target, prop, value, target);
    },
  });
}

/** `db` with every write method refusing `module`'s call. */
function readOnly(db: Database<unknown, string>, name: string, module: string, owner: string | undefined): Database<unknown, string> {
  return guarded(db, (method) => () => {
    throw new ForeignWriteError(name, module, owner, method);
  });
}

/** Shared database `name` with keyed writes passed to `db` for a key under one of `own` prefixes only. */
function prefixScoped(db: Database<unknown, string>, name: SharedDatabase, module: string, own: readonly string[], owners: StorageOwners): Database<unknown, string> {
  const refuse = (key: unknown, method: string): ForeignKeyWriteError => {
    if (typeof key !== 'string') return new ForeignKeyWriteError(name, module, `<${typeof key} key>`, undefined, method);
    const prefix = keyOwnerPart(key);
    return new ForeignKeyWriteError(name, module, prefix.length > SHOWN_PREFIX ? `${prefix.slice(0, SHOWN_PREFIX)}…` : prefix, owners.ownerOfKey(name, key), method);
  };
  return guarded(db, (method, real) => {
    if (!KEYED_WRITES.has(method)) {
      return () => {
        throw new ForeignKeyWriteError(name, module, null, undefined, method);
      };
    }
    // Fixed arity (lmdb-js's longest keyed write takes four) so a write allocates no argument array.
    return (key: unknown, a?: unknown, b?: unknown, c?: unknown) => {
      if (typeof key !== 'string' || !keyPartIn(own, key)) throw refuse(key, method);
      return real.call(db, key, a, b, c);
    };
  });
}

/**
 * `store` as `module` may use it, by its `claim`: its own databases writable, in `index` and `meta`
 * only the keys under its own prefixes, every other database read-only. `owners` names the owner of
 * a database or prefix in the errors.
 */
export function writeScope(store: Store, module: string, claim: StorageClaim, owners: StorageOwners): Store {
  const own = new Set<string>([...claim.databases, ...SHARED_DATABASES]);
  const view: Record<string, unknown> = { ...store };
  const handles = store as unknown as Record<string, Database<unknown, string>>;
  for (const name of SHARED_DATABASES) view[name] = prefixScoped(handles[name]!, name, module, [...(claim.prefixes[name] ?? [])], owners);
  for (const name of DATABASE_NAMES) if (!own.has(name)) view[name] = readOnly(handles[name]!, name, module, owners.ownerOf(name));
  return view as Store;
}
