/**
 * Keyset paging over a key range: the one way a list is read page by page. A page resumes strictly
 * after the last key it returned (its position), never at an offset, so a key present from the first
 * page to the last is returned exactly once, whatever is inserted or removed meanwhile (keys are
 * unique and sorted; an insert behind the position is simply not seen, one ahead of it is).
 *
 * Positions are key suffixes relative to the range's prefix: a position, whatever a client sends,
 * can only address keys inside the range it was issued for.
 */
import type { Database } from 'lmdb';
import { KEY_END } from './keys.js';

/** One page: the items, the position of the last one, and whether another item follows. */
export interface KeysetPage<R> {
  items: R[];
  /** Position (key suffix) of the last item returned; null when the page is empty. */
  last: string | null;
  /** True when at least one more item follows the page. */
  more: boolean;
}

/** A list that can be read page by page from a position. Domain modules return these. */
export interface Keyset<R> {
  /** Up to `limit` items after position `after` (null: from the start). */
  page(after: string | null, limit: number): KeysetPage<R>;
}

/** A key range: keys `prefix + suffix` with `from <= suffix < to`, read ascending or descending. */
export interface KeyRange {
  prefix: string;
  /** Inclusive lower bound of the suffix (default: none). */
  from?: string;
  /** Exclusive upper bound of the suffix (default: none). */
  to?: string;
  /** Descending (newest first for time-ordered keys). */
  reverse?: boolean;
}

/**
 * A keyset over the keys of `db` in `range`. `load` turns a key and its value into an item, or
 * undefined to skip it (a record removed after its index key was read, or one a filter excludes).
 */
export function keysetOver<V, R>(db: Database<V, string>, range: KeyRange, load: (key: string, value: V) => R | undefined): Keyset<R> {
  const low = `${range.prefix}${range.from ?? ''}`;
  const high = `${range.prefix}${range.to ?? KEY_END}`;
  return {
    page(after, limit) {
      const at = after === null ? null : `${range.prefix}${after}`;
      const items: R[] = [];
      let last: string | null = null;
      // Ascending: from max(low, at), skipping `at` itself. Descending: from min(high, at) down,
      // skipping everything at or above that start (lmdb-js's reverse start is inclusive).
      const opts = range.reverse === true
        ? { start: at !== null && at < high ? at : high, end: low, reverse: true }
        : { start: at !== null && at > low ? at : low, end: high };
      for (const { key, value } of db.getRange(opts)) {
        if (key < low || key >= high) continue;
        if (at !== null && (range.reverse === true ? key >= at : key <= at)) continue;
        const item = load(key, value);
        if (item === undefined) continue;
        // One loadable item past the page says another page exists (no empty last page).
        if (items.length >= limit) return { items, last, more: true };
        items.push(item);
        last = key.slice(range.prefix.length);
      }
      return { items, last, more: false };
    },
  };
}

/**
 * A keyset over items already read and sorted in memory by `position` (ascending, unique), for a
 * list whose database has no index in list order (the organization's API keys). Same contract as
 * {@link keysetOver}: a page resumes strictly after the position of the previous page's last item.
 */
export function keysetOverSorted<R>(items: readonly R[], position: (r: R) => string): Keyset<R> {
  return {
    page(after, limit) {
      let i = 0;
      if (after !== null) {
        // First item strictly after `after` (binary search: positions ascend).
        let hi = items.length;
        while (i < hi) {
          const mid = (i + hi) >>> 1;
          if (position(items[mid]!) <= after) i = mid + 1;
          else hi = mid;
        }
      }
      const page = items.slice(i, i + limit);
      const last = page.length > 0 ? position(page[page.length - 1]!) : null;
      return { items: page, last, more: i + limit < items.length };
    },
  };
}
