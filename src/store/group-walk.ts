/**
 * A bounded walk over a key space grouped by prefix and time-ordered inside each group (fires by
 * schedule, runs by fleet, events by timeline): the retention sweeps of the modules that own such
 * databases collect their old keys with it, within one shared budget of reads and removals.
 */
import type { Database } from 'lmdb';
import { KEY_END } from './keys.js';

const HIGH = KEY_END;

/** What the walk does with a record: collect it for removal, keep it, or end its group's walk. */
export type Verdict = 'remove' | 'keep' | 'stop';

/** One key space to walk. */
export interface Walk<V> {
  db: Database<V, string>;
  /** Key space walked: keys starting with `root`. */
  root: string;
  /** Group prefix of a key (ends with '/'), or null for a malformed key. */
  groupOf(key: string): string | null;
  /** Exclusive upper bound of the candidates inside a group. */
  endOf(group: string): string;
  judge(key: string, value: V): Verdict;
}

/** Keys read and records removed still allowed in this sweep, shared by every walk of it. */
export interface Budget {
  scan: number;
  remove: number;
}

/** Walks groups from `cursor`, collecting removable keys within the budget; returns the next cursor ('' = start over). */
export function walkGroups<V>(w: Walk<V>, cursor: string, budget: Budget, out: string[]): string {
  let at = cursor === '' ? w.root : cursor;
  while (budget.scan > 0 && budget.remove > 0) {
    let first: string | undefined;
    for (const k of w.db.getKeys({ start: at, end: `${w.root}${HIGH}`, limit: 1 })) first = k;
    budget.scan--;
    if (first === undefined) return ''; // end of the key space: next run starts over
    const group = w.groupOf(first);
    if (group === null) {
      at = `${first}\u0000`;
      continue;
    }
    let resume: string | null = null;
    for (const { key, value } of w.db.getRange({ start: first, end: w.endOf(group) })) {
      if (budget.scan <= 0 || budget.remove <= 0) {
        resume = key;
        break;
      }
      budget.scan--;
      const v = w.judge(key, value);
      if (v === 'stop') break;
      if (v === 'remove') {
        out.push(key);
        budget.remove--;
      }
    }
    if (resume !== null) return resume;
    at = `${group}${HIGH}`;
  }
  return at;
}
