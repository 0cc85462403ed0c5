/**
 * Who owns which part of the LMDB environment. Each named database has exactly one owner, the only
 * module that builds its keys and writes it; the databases several modules share by key prefix
 * (`index`, `meta`) are divided by the key's first '/'-separated part, each prefix with one owner.
 * Data written before owners were declared keeps its layout: ownership is a claim over existing key
 * shapes, not a new layout, so no data dir needs migrating.
 */
import type { StoreDatabases } from './lmdb.js';

/** A named database of the environment. */
export type DatabaseName = keyof StoreDatabases;

/** The databases several owners share, divided by key prefix. */
export type SharedDatabase = 'index' | 'meta';

/** What one owner claims. */
export interface StorageClaim {
  /** Databases only this owner opens and writes (never `index` or `meta`). */
  readonly databases: readonly DatabaseName[];
  /** Its key prefixes (first '/'-separated part of a key) in each shared database. */
  readonly prefixes: { readonly [D in SharedDatabase]?: readonly string[] };
}

/** The databases several owners share, divided by key prefix. */
export const SHARED_DATABASES: readonly SharedDatabase[] = ['index', 'meta'];

const SHARED: ReadonlySet<string> = new Set<string>(SHARED_DATABASES);

/** The first '/'-separated part of a key: what an owner claims in a shared database. */
export function keyOwnerPart(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}

/**
 * Whether `keyOwnerPart(key)` is one of `prefixes`, decided without building that part: the write
 * scope asks it on every write to a shared database, so it allocates nothing.
 */
export function keyPartIn(prefixes: readonly string[], key: string): boolean {
  const slash = key.indexOf('/');
  const end = slash < 0 ? key.length : slash;
  for (let i = 0; i < prefixes.length; i++) {
    const p = prefixes[i]!;
    if (p.length === end && key.startsWith(p)) return true;
  }
  return false;
}

/**
 * The claims of every owner of one environment. A database or a prefix claimed twice is refused when
 * the second claim is made, naming both owners, so two modules can never both believe they own a key.
 */
export class StorageOwnership {
  private readonly databases = new Map<string, string>();
  private readonly prefixes = new Map<string, string>();

  /** Records `owner`'s claim; throws naming the database or prefix already claimed by another owner. */
  claim(owner: string, claim: StorageClaim): void {
    for (const db of claim.databases) {
      if (SHARED.has(db)) throw new Error(`${owner} claims the shared database '${db}' whole: claim key prefixes in it instead`);
      const held = this.databases.get(db);
      if (held !== undefined) throw new Error(`LMDB database '${db}' is claimed by both ${held} and ${owner}`);
    }
    for (const [db, list] of Object.entries(claim.prefixes)) {
      for (const prefix of list) {
        if (prefix === '' || prefix.includes('/')) throw new Error(`${owner} claims '${prefix}' in '${db}': a prefix is one non-empty key part without '/'`);
        const held = this.prefixes.get(`${db}:${prefix}`);
        if (held !== undefined) throw new Error(`key prefix '${prefix}' of LMDB database '${db}' is claimed by both ${held} and ${owner}`);
      }
    }
    for (const db of claim.databases) this.databases.set(db, owner);
    for (const [db, list] of Object.entries(claim.prefixes)) for (const prefix of list) this.prefixes.set(`${db}:${prefix}`, owner);
  }

  /** The owner of a named database, or undefined when none claimed it. */
  ownerOf(db: DatabaseName): string | undefined {
    return this.databases.get(db);
  }

  /** The owner of a key of a shared database (by its first part), or undefined. */
  ownerOfKey(db: SharedDatabase, key: string): string | undefined {
    return this.prefixes.get(`${db}:${keyOwnerPart(key)}`);
  }

  /** Every claim as `database -> owner` and `database:prefix -> owner`, for documentation and tests. */
  table(): { databases: ReadonlyMap<string, string>; prefixes: ReadonlyMap<string, string> } {
    return { databases: this.databases, prefixes: this.prefixes };
  }

  /** The databases of `all` that no owner claimed (shared ones excepted). */
  unclaimed(all: readonly string[]): string[] {
    return all.filter((db) => !SHARED.has(db) && !this.databases.has(db));
  }
}
