/**
 * Key helpers for the LMDB databases. The store owns no feature's keys: each module declares its own
 * key layout next to its record type (e.g. src/missions/runs/runs.ts) and builds it with these, so
 * byte order, range bounds and number encoding are written once.
 */
import type { Database } from 'lmdb';
import type { Store } from './lmdb.js';

/** Sorts after every character a key part uses (ids, hex digits, '/'): the open end of a prefix range. */
export const KEY_END = '\uffff';

/**
 * A non-negative integer (Unix ms, a sequence number) as fixed-width lowercase hex, so byte order is
 * numeric order. Negative values encode as 0; `width` 16 covers every safe integer, 12 covers ms
 * until the year 10889.
 */
export function sortableNumber(n: number, width = 16): string {
  const max = width >= 14 ? Number.MAX_SAFE_INTEGER : 16 ** width - 1;
  return Math.max(0, Math.min(Math.floor(n), max)).toString(16).padStart(width, '0');
}

/** The inverse of {@link sortableNumber}; NaN for anything that is not fixed-width lowercase hex. */
export function parseSortableNumber(s: string, width = 16): number {
  return s.length === width && /^[0-9a-f]+$/.test(s) ? parseInt(s, 16) : Number.NaN;
}

/** Joins key parts with '/' and ends with '/': the prefix of everything filed under them. */
export function keyPrefix(...parts: readonly string[]): string {
  return `${parts.join('/')}/`;
}

/** The bounds of every key starting with `prefix` (for getRange / getKeys / getKeysCount). */
export function prefixRange(prefix: string): { start: string; end: string } {
  return { start: prefix, end: `${prefix}${KEY_END}` };
}

/** The last '/'-separated part of a key: the record id at the end of an index key. */
export function lastSegment(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}

/** Keys of an index range `<prefix>/<a>/` in insertion-independent (sorted) order, as their last part. */
export function indexRange(store: Store, prefix: string): string[] {
  const start = `${prefix}/`;
  const out: string[] = [];
  for (const key of store.index.getKeys(prefixRange(start))) out.push(key.slice(start.length));
  return out;
}

/** The first id filed under `<prefix>/` in the index, or undefined (an "is it referenced" check). */
export function firstIndexed(store: Store, prefix: string): string | undefined {
  const start = `${prefix}/`;
  for (const key of store.index.getKeys({ ...prefixRange(start), limit: 1 })) return key.slice(start.length);
  return undefined;
}

/** How many keys start with `prefix` (counted by key: nothing is decoded). */
export function countPrefix(db: Database<unknown, string> | Database<true, string>, prefix: string): number {
  return db.getKeysCount(prefixRange(prefix));
}
