/**
 * MCAP exports are bounded gateway-wide (src/api/routes/telemetry-history.ts): past `maxExports` running
 * at once, an export is answered 503 with Retry-After before any header of a file goes out, and an
 * export's place is given back when it ends. The export store reads take turns (read-slots.ts): a
 * waiter whose export was abandoned leaves the queue without reading, and the queue is bounded.
 * Real uWS server and router; the telemetry store is a stand-in whose reads the test answers.
 */
import { identityReads } from '../../src/store/identity-reads.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { telemetryHistoryRoutes } from '../../src/api/routes/telemetry-history.js';
import type { BoundQuery, Rows } from '../../src/telemetry/store/bound-query.js';
import { inReadSlot, MAX_WAITING, ReadSlotsFull, readSlotStats } from '../../src/fleet/history/telemetry/read-slots.js';
import { startFixture, type Fixture } from './fixture.js';
import { until } from '../support/until.js';

describe('MCAP export places', () => {
  let fx: Fixture;
  const held: ((rows: Rows) => void)[] = [];
  let answering = false;
  // Reads wait until the test answers them (the exports stay running meanwhile), then, once
  // `answering`, are answered at once: the count says empty, and so does every page read.
  const select = (q: BoundQuery): Promise<Rows> => {
    const rows = q.sql.includes('count()') ? [['0']] : [];
    return answering ? Promise.resolve(rows) : new Promise((resolve) => held.push(() => resolve(rows)));
  };

  beforeAll(async () => {
    fx = await startFixture({ extraRoutes: (store) => telemetryHistoryRoutes({ identity: identityReads(store), select, maxExports: 2 }) });
  });
  afterAll(async () => {
    await fx?.close();
  });

  const get = async (path: string): Promise<{ status: number; headers: Headers; text: string }> => {
    const res = await fetch(`${fx.server.url}${path}`, { headers: { authorization: `Bearer ${fx.keys.full}` } });
    return { status: res.status, headers: res.headers, text: Buffer.from(await res.arrayBuffer()).toString('latin1') };
  };

  it('answers 503 with Retry-After past the limit, and gives the place back when an export ends', async () => {
    const now = Date.now();
    const path = `/v1/robots/${fx.ids.robotA1}/telemetry/export.mcap?from_ms=${now - 60_000}&to_ms=${now}`;
    const a = get(path);
    const b = get(path);
    await until(() => held.length === 2, 10_000, 'two exports asking the store');
    const third = await get(path);
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('5');
    expect(third.text).toContain('MCAP export');
    // The exports end: their places are free again.
    answering = true;
    for (const r of held.splice(0)) r([]);
    expect((await a).status).toBe(200);
    expect((await b).status).toBe(200);
    expect((await get(path)).status).toBe(200);
    expect((await get(path)).status).toBe(200);
  });
});

describe('export read turns', () => {
  it('lets an aborted waiter leave the queue, and refuses reads past the bound', async () => {
    let release: () => void = () => undefined;
    const first = inReadSlot(() => new Promise<void>((r) => (release = r)));
    const ac = new AbortController();
    let ran = false;
    const abandoned = inReadSlot(() => {
      ran = true;
      return Promise.resolve();
    }, ac.signal);
    expect(readSlotStats().waiting).toBe(1);
    ac.abort(new Error('client gone'));
    await expect(abandoned).rejects.toThrow('client gone');
    expect(readSlotStats().waiting).toBe(0);
    const waiters = Array.from({ length: MAX_WAITING }, () => inReadSlot(() => Promise.resolve(1)));
    await expect(inReadSlot(() => Promise.resolve(1))).rejects.toBeInstanceOf(ReadSlotsFull);
    release();
    await first;
    expect((await Promise.all(waiters)).length).toBe(MAX_WAITING);
    expect(ran).toBe(false);
    expect(readSlotStats()).toEqual({ running: 0, waiting: 0 });
  });
});
