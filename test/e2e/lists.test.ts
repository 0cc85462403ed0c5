// Lists through the real `fleetgw serve` process (issue 9 parts 3 and 6): every run of the window is
// reachable (more than 500 a day), keyset pages stay exact while another process inserts and removes
// runs, cursors are bound to their query (reuse with other filters: 400 naming `cursor`; numeric
// offsets: 400), and `GET /v1/events?correlation_id=<scheduleId>` reads that schedule's timeline.
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunRecord } from '../../src/missions/runs/records.js';
import { putNewRun, removeRunSync } from '../../src/missions/runs/runs.js';
import { createFleet } from '../../src/store/identity.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';

const HOUR = 3_600_000;
const SEEDED = 1200;

describe('lists over HTTP', () => {
  const d = makeDataDir('fleetgw-lists-');
  let gw: RunningGateway;
  let robotA: string;
  let robotB: string;
  const seeded: RunRecord[] = [];
  const get = (path: string) => api(gw.ready.http, d.apiKey, path);

  function run(robotId: string, startedAtMs: number): RunRecord {
    return {
      runId: randomUUID(), orgId: d.orgId, fleetId: d.fleetId, missionId: randomUUID(), scheduleId: null, robotId,
      state: 'completed', progressPct: 100, stepIndex: 2, remainingDistanceM: 0, etaS: 0, detail: null, cancelRequested: null,
      correlationId: randomUUID(), startedAtMs, endedAtMs: startedAtMs + 60_000, lastReportAtMs: startedAtMs + 60_000,
      fireKey: null, startCommandId: null, name: 'Mow',
    };
  }

  /** Pages through a list; `between` runs after each page. */
  async function drain(path: string, between: () => void = () => {}): Promise<{ items: any[]; pages: number }> {
    const items: any[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res = await get(`${path}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(Object.keys(res.body).sort()).toEqual(['items', 'next_cursor']);
      items.push(...res.body.items);
      cursor = res.body.next_cursor;
      pages++;
      if (cursor) between();
    } while (cursor);
    return { items, pages };
  }

  beforeAll(async () => {
    robotA = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'mower-a']).robotId!;
    robotB = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'mower-b']).robotId!;
    // More than 500 runs in the last day (the interface caps a page at 500), plus older ones.
    const now = Date.now();
    const store = openStore(d.dataDir);
    store.root.transactionSync(() => {
      for (let i = 0; i < SEEDED; i++) {
        const r = run(i % 3 === 0 ? robotB : robotA, now - 23 * HOUR + Math.floor((i * 23 * HOUR) / SEEDED));
        seeded.push(r);
        putNewRun(store, r);
      }
      for (let i = 0; i < 40; i++) putNewRun(store, run(robotA, now - 72 * HOUR + i * 1000));
    });
    await store.close();
    gw = await startGatewayProcess(d.dataDir);
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('reaches every run of the window, newest first, 500 at most per page', async () => {
    const base = `/v1/mission-runs?fleet_id=${d.fleetId}&days=1&limit=500`;
    const first = await get(base);
    expect(first.body.items).toHaveLength(500);
    const { items, pages } = await drain(base);
    expect(pages).toBe(3);
    expect(items.map((r) => r.runId).sort()).toEqual(seeded.map((r) => r.runId).sort());
    const starts = items.map((r) => r.startedAtMs as number);
    expect(starts).toEqual([...starts].sort((a, b) => b - a));
    // A limit above the cap is served 500, not refused (spec: capped at 500).
    expect((await get(`/v1/mission-runs?fleet_id=${d.fleetId}&days=1&limit=5000`)).body.items).toHaveLength(500);
    // The wider window reaches the older runs too; a robot filter reads that robot's runs only.
    expect((await drain(`/v1/mission-runs?fleet_id=${d.fleetId}&days=4&limit=500`)).items).toHaveLength(SEEDED + 40);
    const b = await drain(`/v1/mission-runs?fleet_id=${d.fleetId}&days=1&robot_id=${robotB}&limit=150`);
    expect(b.items).toHaveLength(SEEDED / 3);
    expect(b.items.every((r) => r.robotId === robotB)).toBe(true);
  });

  it('refuses a cursor reused with other filters, a numeric cursor and a stranger, naming cursor', async () => {
    const page = await get(`/v1/mission-runs?fleet_id=${d.fleetId}&days=1&limit=10`);
    const cursor = encodeURIComponent(page.body.next_cursor as string);
    expect((await get(`/v1/mission-runs?fleet_id=${d.fleetId}&days=1&limit=10&cursor=${cursor}`)).status).toBe(200);
    for (const other of [`days=2`, `days=1&robot_id=${robotA}`]) {
      const res = await get(`/v1/mission-runs?fleet_id=${d.fleetId}&${other}&cursor=${cursor}`);
      expect(res.status, other).toBe(400);
      expect(res.body.code).toBe('bad_request');
      expect(res.body.error).toMatch(/^Invalid cursor: it was issued for a different query/);
    }
    for (const numeric of ['500', '0']) {
      const res = await get(`/v1/mission-runs?fleet_id=${d.fleetId}&days=1&cursor=${numeric}`);
      expect(res.status).toBe(400);
      expect(res.body.error).toMatch(/^Invalid cursor: numeric offset cursors are not accepted/);
    }
    // Another list's cursor (the audit log's) is not one of this list's.
    const audit = await get(`/v1/audit-log?fleet_id=${d.fleetId}&cursor=${cursor}`);
    expect(audit.status).toBe(400);
    expect(audit.body.error).toMatch(/^Invalid cursor/);
    const schedules = await get(`/v1/mission-schedule?fleet_id=${d.fleetId}&before=${cursor}`);
    expect(schedules.status).toBe(400);
    expect(schedules.body.error).toMatch(/^Invalid before: it was issued for a different query/);
  });

  it('keeps pages exact while another process inserts and removes runs', async () => {
    const store: Store = openStore(d.dataDir);
    try {
      const now = Date.now();
      const removed = new Set<string>();
      const present = new Set(seeded.map((r) => r.runId));
      let k = 0;
      const { items } = await drain(`/v1/mission-runs?fleet_id=${d.fleetId}&days=1&limit=37`, () => {
        store.root.transactionSync(() => {
          for (let i = 0; i < 4; i++) {
            // Removals spread over the whole window (read, not yet read, and near the cursor).
            const victim = seeded[(k * 97 + i * 301) % seeded.length]!;
            if (present.delete(victim.runId)) {
              removed.add(victim.runId);
              removeRunSync(store, victim);
            }
            // Inserts anywhere in the window: ahead of the cursor (seen) or behind it (not seen).
            putNewRun(store, run(robotA, now - ((k * 7919 + i * 104_729) % (23 * HOUR))));
          }
          k++;
        });
      });
      const ids = items.map((r) => r.runId as string);
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of present) expect(ids, id).toContain(id);
      const starts = items.map((r) => r.startedAtMs as number);
      expect(starts).toEqual([...starts].sort((a, b) => b - a));
      expect(removed.size).toBeGreaterThan(50);
    } finally {
      await store.close();
    }
  });

  it('reads a schedule\'s timeline by its schedule id; event cursors are opaque and bound to the correlation id', async () => {
    const res = await api(gw.ready.http, d.apiKey, '/v1/agent/schedule-command', {
      method: 'POST',
      headers: { 'idempotency-key': randomUUID() },
      body: JSON.stringify({
        org_id: d.orgId, fleet_id: d.fleetId,
        command: { action: 'stop', robot_ids: [robotA], reason: 'night' },
        schedule: { timezone: 'UTC', startTimeMs: Date.now() + 3_600_000, kind: { interval: { everySeconds: 3600 } } },
      }),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    const { scheduleId, correlationId } = res.body as { scheduleId: string; correlationId: string };
    expect((await api(gw.ready.http, d.apiKey, '/v1/agent/edit-schedule', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, schedule_id: scheduleId, retry_limit: 2 }) })).status).toBe(200);

    const byCorrelation = await get(`/v1/events?fleet_id=${d.fleetId}&correlation_id=${correlationId}`);
    const bySchedule = await get(`/v1/events?fleet_id=${d.fleetId}&correlation_id=${scheduleId}`);
    expect(bySchedule.status).toBe(200);
    expect(bySchedule.body.items.map((e: any) => e.kind)).toEqual(['schedule.accepted', 'schedule.edited']);
    expect(bySchedule.body.items.every((e: any) => e.subject.id === scheduleId)).toBe(true);
    expect(bySchedule.body).toEqual(byCorrelation.body);

    const p1 = await get(`/v1/events?fleet_id=${d.fleetId}&correlation_id=${scheduleId}&limit=1`);
    const cursor = p1.body.next_cursor as string;
    expect(cursor).not.toMatch(/^\d+$/);
    const p2 = await get(`/v1/events?fleet_id=${d.fleetId}&correlation_id=${scheduleId}&limit=1&cursor=${cursor}`);
    expect(p2.body).toMatchObject({ items: [{ kind: 'schedule.edited' }], next_cursor: null });
    const reused = await get(`/v1/events?fleet_id=${d.fleetId}&correlation_id=${correlationId}&cursor=${cursor}`);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toMatch(/^Invalid cursor: it was issued for a different query/);
    const numeric = await get(`/v1/events?fleet_id=${d.fleetId}&correlation_id=${scheduleId}&cursor=${p1.body.items[0].seq}`);
    expect(numeric.status).toBe(400);
    expect(numeric.body.error).toMatch(/numeric offset cursors are not accepted/);
    // Another fleet's schedule id is not a way into its timeline.
    const other = adminJson(['create-fleet', '--data-dir', d.dataDir, '--org', d.orgId, '--name', 'Other']).fleetId!;
    const foreign = await get(`/v1/events?fleet_id=${other}&correlation_id=${scheduleId}`);
    expect(foreign.status).toBe(200);
    expect(foreign.body.items).toEqual([]);
  });

  it('the fleets of an organization are {items, next_cursor} pages with cursors bound to the organization; a fleet-bound key sees its fleet', async () => {
    // Written straight into the store (LMDB is multi-process), not through `fleetgw admin`: a spawnSync
    // blocks this process's event loop, and the client's pooled connection may be closed meanwhile.
    const store = openStore(d.dataDir);
    const extra = [0, 1, 2].map((i) => createFleet(store, d.orgId, `Paged ${i}`).fleetId);
    const bound = createApiKey(store, { orgId: d.orgId, fleetId: extra[1]!, permissions: ['fleet:read'], expiresAtMs: null }).apiKey;
    await store.close();
    const all = await get(`/v1/orgs/${d.orgId}/fleets`);
    expect(all.status).toBe(200);
    expect(Object.keys(all.body).sort()).toEqual(['items', 'next_cursor']);
    const ids = (all.body.items as { fleetId: string }[]).map((f) => f.fleetId);
    expect(ids).toEqual([...ids].sort());
    expect(ids).toEqual(expect.arrayContaining([d.fleetId, ...extra]));
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await get(`/v1/orgs/${d.orgId}/fleets?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status, JSON.stringify(page.body)).toBe(200);
      paged.push(...(page.body.items as { fleetId: string }[]).map((f) => f.fleetId));
      cursor = page.body.next_cursor as string | null;
    } while (cursor !== null);
    expect(paged).toEqual(ids);
    // Cursors are opaque and bound: numeric offsets and another list's cursor are refused.
    expect((await get(`/v1/orgs/${d.orgId}/fleets?cursor=2`)).status).toBe(400);
    const runsCursor = (await get(`/v1/mission-runs?fleet_id=${d.fleetId}&days=1&limit=1`)).body.next_cursor as string;
    const foreign = await get(`/v1/orgs/${d.orgId}/fleets?cursor=${encodeURIComponent(runsCursor)}`);
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toMatch(/^Invalid cursor: it was issued for a different query; a cursor is bound to its list, organization and exact filters \(org_id\)/);
    const mine = await api(gw.ready.http, bound, `/v1/orgs/${d.orgId}/fleets`);
    expect(mine.body).toEqual({ items: [{ fleetId: extra[1], name: 'Paged 1' }], next_cursor: null });
  }, 90_000);
});
