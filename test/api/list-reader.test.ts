// The one list reader (src/api/list-reader.ts) on a real temp LMDB, without sockets: access checks,
// the opaque cursor bound to list + fleet + exact filters, numeric cursors refused, the limit, the view.
import { identityReads } from '../../src/store/identity-reads.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeCursor, encodeCursor } from '../../src/api/list-cursor.js';
import { defineList, type ListQuery } from '../../src/api/list-reader.js';
import type { AuthContext } from '../../src/auth/context.js';
import { ApiError } from '../../src/errors/catalog.js';
import { createFleet, createOrg } from '../../src/store/identity.js';
import { keyPrefix, lastSegment, sortableNumber } from '../../src/store/keys.js';
import { keysetOver } from '../../src/store/keyset.js';
import { openStore, type Store } from '../../src/store/lmdb.js';

interface ThingQuery extends ListQuery {
  color?: string;
  cursor?: string;
}

let dir: string;
let store: Store;
let orgId: string;
let fleetId: string;
let otherFleetId: string;
let foreignFleetId: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-list-reader-'));
  store = openStore(dir);
  orgId = createOrg(store, 'o').orgId;
  fleetId = createFleet(store, orgId, 'f').fleetId;
  otherFleetId = createFleet(store, orgId, 'g').fleetId;
  foreignFleetId = createFleet(store, createOrg(store, 'p').orgId, 'h').fleetId;
  store.root.transactionSync(() => {
    for (const f of [fleetId, otherFleetId]) {
      for (let i = 0; i < 30; i++) store.index.putSync(`${keyPrefix('things', f)}${sortableNumber(i)}/${i % 2 === 0 ? 'red' : 'blue'}-${i}`, true);
    }
  });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const auth = (over: Partial<AuthContext> = {}): AuthContext => ({ actorType: 'api_key', apiKeyId: 'k1', orgId, fleetId: null, permissions: ['fleet:read'], ...over });

const things = defineList<ThingQuery, string, { id: string; n: number }>({
  kind: 'things',
  limit: { default: 10, max: 25 },
  filters: (q) => ({ color: q.color }),
  source: (fleet, q) => keysetOver(store.index, { prefix: keyPrefix('things', fleet.fleetId), reverse: true }, (k) => {
    const id = lastSegment(k);
    return q.color === undefined || id.startsWith(`${q.color}-`) ? id : undefined;
  }),
  view: (id) => ({ id, n: Number(id.split('-')[1]) }),
});

function errorOf(f: () => unknown): ApiError {
  try {
    f();
  } catch (err) {
    if (err instanceof ApiError) return err;
    throw err;
  }
  throw new Error('no error');
}

describe('list reader', () => {
  it('pages with the default limit, caps at the maximum, maps each record to its view', () => {
    const p1 = things.read(identityReads(store), auth(), { fleet_id: fleetId });
    expect(p1.items).toHaveLength(10);
    expect(p1.items[0]).toEqual({ id: 'blue-29', n: 29 });
    expect(typeof p1.next_cursor).toBe('string');
    expect(things.read(identityReads(store), auth(), { fleet_id: fleetId, limit: 1000 }).items).toHaveLength(25);
    const all: number[] = [];
    let cursor: string | undefined;
    do {
      const p = things.read(identityReads(store), auth(), { fleet_id: fleetId, limit: 7, ...(cursor ? { cursor } : {}) });
      all.push(...p.items.map((i) => i.n));
      cursor = p.next_cursor ?? undefined;
    } while (cursor);
    expect(all).toEqual(Array.from({ length: 30 }, (_, i) => 29 - i));
    // A route-set page size (an unpaged form the interface fixes) is used as given.
    expect(things.read(identityReads(store), auth(), { fleet_id: fleetId }, { limit: 30 })).toMatchObject({ next_cursor: null });
  });

  it('binds a cursor to its filters: the same filters page on, other filters are a 400 naming cursor', () => {
    const red = things.read(identityReads(store), auth(), { fleet_id: fleetId, color: 'red', limit: 5 });
    expect(red.items.map((i) => i.id)).toEqual(['red-28', 'red-26', 'red-24', 'red-22', 'red-20']);
    const cursor = red.next_cursor!;
    // The limit is not a filter: it may change between pages.
    expect(things.read(identityReads(store), auth(), { fleet_id: fleetId, color: 'red', limit: 2, cursor }).items.map((i) => i.id)).toEqual(['red-18', 'red-16']);
    for (const q of [{ color: 'blue' }, {}]) {
      const e = errorOf(() => things.read(identityReads(store), auth(), { fleet_id: fleetId, ...q, cursor }));
      expect(e).toMatchObject({ status: 400, code: 'bad_request', id: 'cursor_invalid' });
      expect(e.message).toMatch(/^Invalid cursor: it was issued for a different query.*fleet_id, color/);
    }
  });

  it('binds a cursor to its fleet and its list', () => {
    const cursor = things.read(identityReads(store), auth(), { fleet_id: fleetId, limit: 5 }).next_cursor!;
    expect(errorOf(() => things.read(identityReads(store), auth(), { fleet_id: otherFleetId, cursor })).id).toBe('cursor_invalid');
    const other = defineList<ThingQuery, string, string>({ kind: 'other', limit: { default: 5, max: 5 }, filters: (q) => ({ color: q.color }), source: (f) => keysetOver(store.index, { prefix: keyPrefix('things', f.fleetId) }, lastSegment), view: (s) => s });
    expect(errorOf(() => other.read(identityReads(store), auth(), { fleet_id: fleetId, cursor })).id).toBe('cursor_invalid');
  });

  it('refuses numeric offset cursors and anything it did not issue, naming the parameter', () => {
    const numeric = errorOf(() => things.read(identityReads(store), auth(), { fleet_id: fleetId, cursor: '20' }));
    expect(numeric.message).toBe('Invalid cursor: numeric offset cursors are not accepted; pass the next_cursor of the previous page unchanged.');
    for (const bad of ['x', 'not a cursor', Buffer.from('{"v":2,"q":"a","p":"b"}').toString('base64url'), Buffer.from('[1]').toString('base64url')]) {
      const e = errorOf(() => things.read(identityReads(store), auth(), { fleet_id: fleetId, cursor: bad }));
      expect(e.message, bad).toMatch(/^Invalid cursor: not a cursor this gateway issued/);
    }
    const b = { kind: 'k', scope: 'f', scopeParam: 'fleet_id' as const, filters: {} };
    expect(errorOf(() => decodeCursor(b, '7', 'before')).message).toMatch(/^Invalid before: numeric/);
    expect(decodeCursor(b, encodeCursor(b, 'pos/1'))).toBe('pos/1');
  });

  it('checks the fleet and organization before reading', () => {
    expect(errorOf(() => things.read(identityReads(store), auth(), { fleet_id: foreignFleetId })).id).toBe('fleet_not_found');
    expect(errorOf(() => things.read(identityReads(store), auth({ fleetId: otherFleetId }), { fleet_id: fleetId })).id).toBe('forbidden_fleet');
    expect(errorOf(() => things.read(identityReads(store), auth(), { fleet_id: fleetId, org_id: 'another-org' })).id).toBe('forbidden_org');
    expect(things.read(identityReads(store), auth({ fleetId }), { fleet_id: fleetId, org_id: orgId }).items).toHaveLength(10);
  });
});
