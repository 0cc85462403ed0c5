// Keyset paging on a real temp LMDB: bounds, order, positions confined to their range, and pages that
// stay exact (nothing skipped, nothing repeated) while keys are inserted and removed between pages.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { keyPrefix, lastSegment, parseSortableNumber, prefixRange, sortableNumber } from '../../src/store/keys.js';
import { keysetOver, type Keyset } from '../../src/store/keyset.js';
import { openStore, type Store } from '../../src/store/lmdb.js';

const open: { store: Store; dir: string }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.store.close();
    rmSync(o.dir, { recursive: true, force: true });
  }
});

function temp(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-keyset-'));
  const store = openStore(dir);
  open.push({ store, dir });
  return store;
}

/** Every item of a keyset, page by page; `between` runs after each page (concurrent writes). */
function drain<R>(ks: Keyset<R>, limit: number, between: (page: number) => void = () => {}): R[] {
  const out: R[] = [];
  let after: string | null = null;
  for (let n = 0; n < 10_000; n++) {
    const p = ks.page(after, limit);
    out.push(...p.items);
    expect(p.items.length).toBeLessThanOrEqual(limit);
    if (!p.more) return out;
    expect(p.items.length).toBe(limit);
    after = p.last;
    between(n);
  }
  throw new Error('did not end');
}

describe('key helpers', () => {
  it('encodes numbers so byte order is numeric order, and decodes them back', () => {
    const values = [0, 1, 15, 16, 255, 1_700_000_000_000, Number.MAX_SAFE_INTEGER];
    const enc = values.map((v) => sortableNumber(v));
    expect([...enc].sort()).toEqual(enc);
    expect(enc.every((e) => e.length === 16)).toBe(true);
    expect(enc.map((e) => parseSortableNumber(e))).toEqual(values);
    expect(sortableNumber(-5)).toBe('0000000000000000');
    expect(sortableNumber(0x1234, 12)).toBe('000000001234');
    expect(parseSortableNumber('xyz')).toBeNaN();
    expect(keyPrefix('runsByFleet', 'f1')).toBe('runsByFleet/f1/');
    expect(prefixRange('a/')).toEqual({ start: 'a/', end: 'a/\uffff' });
    expect(lastSegment('a/b/c')).toBe('c');
  });
});

describe('keysetOver', () => {
  function seed(store: Store, prefix: string, n: number): string[] {
    const ids: string[] = [];
    store.root.transactionSync(() => {
      for (let i = 0; i < n; i++) {
        const id = `${sortableNumber(i * 10)}/r${i}`;
        store.index.putSync(`${prefix}${id}`, true);
        ids.push(id);
      }
    });
    return ids;
  }

  it('reads a range ascending and descending within its bounds, never past its prefix', () => {
    const store = temp();
    const ids = seed(store, 'x/a/', 25);
    seed(store, 'x/b/', 5);
    store.index.putSync('x/a', true);
    const up = keysetOver(store.index, { prefix: 'x/a/' }, (k) => lastSegment(k));
    expect(drain(up, 7)).toEqual(ids.map(lastSegment));
    const down = keysetOver(store.index, { prefix: 'x/a/', reverse: true }, (k) => lastSegment(k));
    expect(drain(down, 4)).toEqual(ids.map(lastSegment).reverse());
    // from inclusive, to exclusive (times 50 .. 149 -> items 5 .. 14).
    const window = keysetOver(store.index, { prefix: 'x/a/', from: sortableNumber(50), to: sortableNumber(150), reverse: true }, (k) => lastSegment(k));
    expect(drain(window, 3)).toEqual(Array.from({ length: 10 }, (_, i) => `r${14 - i}`));
    expect(window.page(null, 100)).toMatchObject({ more: false });
  });

  it('says there is a next page only when a loadable item follows (no empty last page)', () => {
    const store = temp();
    seed(store, 'p/', 6);
    // Items r4 and r5 do not load (e.g. their record was removed): a page ending at r3 is the last.
    const ks = keysetOver(store.index, { prefix: 'p/' }, (k) => (['r4', 'r5'].includes(lastSegment(k)) ? undefined : lastSegment(k)));
    const p1 = ks.page(null, 4);
    expect(p1).toMatchObject({ items: ['r0', 'r1', 'r2', 'r3'], more: false });
    const p2 = ks.page(null, 2);
    expect(p2).toMatchObject({ items: ['r0', 'r1'], more: true });
    expect(ks.page(p2.last, 2)).toMatchObject({ items: ['r2', 'r3'], more: false });
  });

  it('confines a position to its range: a crafted one cannot read another prefix', () => {
    const store = temp();
    seed(store, 'f/mine/', 3);
    seed(store, 'f/other/', 3);
    const ks = keysetOver(store.index, { prefix: 'f/mine/' }, (k) => k);
    for (const crafted of ['../other/', '\u0000', '\uffff', 'zzz', '']) {
      for (const k of ks.page(crafted, 10).items) expect(k.startsWith('f/mine/')).toBe(true);
    }
    const down = keysetOver(store.index, { prefix: 'f/mine/', reverse: true }, (k) => k);
    for (const crafted of ['\uffff\uffff', 'zzz']) expect(down.page(crafted, 10).items.every((k) => k.startsWith('f/mine/'))).toBe(true);
  });

  it.each([false, true])('stays exact under concurrent inserts and deletes (reverse: %s)', (reverse) => {
    const store = temp();
    const prefix = 'runs/f1/';
    const ids = seed(store, prefix, 400);
    // Deterministic pseudo-random writes between pages: removals anywhere (also the page's last
    // key, i.e. the cursor position itself) and inserts anywhere (ahead of and behind the cursor).
    let rnd = 42;
    const next = (): number => (rnd = (rnd * 1_103_515_245 + 12_345) % 2 ** 31);
    const removed = new Set<string>();
    const inserted = new Set<string>();
    let lastSeen: string | null = null;
    const seen: string[] = [];
    const ks = keysetOver(store.index, { prefix, reverse }, (k) => {
      return k.slice(prefix.length);
    });
    let after: string | null = null;
    for (let page = 0; page < 1000; page++) {
      const p = ks.page(after, 13);
      seen.push(...p.items);
      if (!p.more) break;
      after = p.last;
      lastSeen = p.last;
      store.root.transactionSync(() => {
        for (let i = 0; i < 3; i++) {
          const victim = ids[next() % ids.length]!;
          if (!removed.has(victim)) {
            removed.add(victim);
            store.index.removeSync(`${prefix}${victim}`);
          }
        }
        if (lastSeen !== null && page % 4 === 0) {
          removed.add(lastSeen);
          store.index.removeSync(`${prefix}${lastSeen}`);
        }
        for (let i = 0; i < 3; i++) {
          const id = `${sortableNumber(next() % 4000)}/new${page}-${i}`;
          inserted.add(id);
          store.index.putSync(`${prefix}${id}`, true);
        }
      });
    }
    // No repeats, order kept.
    expect(new Set(seen).size).toBe(seen.length);
    const sorted = [...seen].sort();
    expect(seen).toEqual(reverse ? sorted.reverse() : sorted);
    // Every original key never removed was seen.
    for (const id of ids) if (!removed.has(id)) expect(seen, id).toContain(id);
    // Nothing was seen that never existed.
    for (const id of seen) expect(ids.includes(id) || inserted.has(id)).toBe(true);
  });
});
