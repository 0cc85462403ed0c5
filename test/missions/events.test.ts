// GET /v1/events and the event log: every catalog transition appends an ordered, durable event.
import { describe, expect, it } from 'vitest';
import { req } from '../idempotency/harness.js';
import { catalogPerTest } from './catalog-support.js';

const setup = catalogPerTest();

describe('event timeline', () => {
  it('lists a template\'s and the operation\'s transitions in order, paged, fleet:read only', async () => {
    const c = await setup();
    const created = await c.template({ roster: [c.s.robots.active[0]] });
    const id = created.json.missionId;
    const opId = created.json.operationId;
    await req(c.s, 'PUT', `${c.base}/mission-templates/${id}`, { body: { name: 'Renamed' } });
    await c.op({ action: 'disable_mission', mission_id: id });
    await c.op({ action: 'assign_robot', mission_id: id, robot_id: c.s.robots.active[1] });
    await c.op({ action: 'start' });
    await c.op({ action: 'pause' });

    const url = `/v1/events?fleet_id=${c.s.fleetId}&correlation_id=${id}`;
    const tl = await req(c.s, 'GET', url);
    expect(tl.status).toBe(200);
    expect(tl.json.items.map((e: any) => e.kind)).toEqual(['template.created', 'template.updated', 'template.disabled', 'template.robot_assigned']);
    expect(tl.json.items[0]).toMatchObject({ eventId: expect.any(String), subject: { type: 'template', id }, data: { name: 'Mow', version: 1 } });
    const seqs = tl.json.items.map((e: any) => e.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(tl.json.next_cursor).toBeNull();

    const ops = await req(c.s, 'GET', `/v1/events?fleet_id=${c.s.fleetId}&correlation_id=${opId}`);
    expect(ops.json.items.map((e: any) => e.kind)).toEqual(['operation.created', 'operation.started', 'operation.paused']);
    expect(ops.json.items[2].data).toMatchObject({ from: 'running', state: 'paused' });

    const p1 = await req(c.s, 'GET', `${url}&limit=3`);
    expect(p1.json.items).toHaveLength(3);
    const p2 = await req(c.s, 'GET', `${url}&limit=3&cursor=${p1.json.next_cursor}`);
    expect(p2.json).toMatchObject({ items: [{ kind: 'template.robot_assigned' }], next_cursor: null });

    expect((await req(c.s, 'GET', url, { key: c.s.only['missions:read'] })).status).toBe(403);
    expect((await req(c.s, 'GET', url, { key: c.s.only['fleet:read'] })).status).toBe(200);
    expect((await req(c.s, 'GET', `/v1/events?fleet_id=${c.s.fleetId}`)).status).toBe(400);
    // Another fleet's timeline with the same correlation id is empty.
    expect((await req(c.s, 'GET', `/v1/events?fleet_id=${c.s.otherFleetId}&correlation_id=${id}`)).json.items).toEqual([]);
  });

  it('keeps seq monotonic across a restart and reads an appended event at once', async () => {
    const c = await setup();
    const corr = '11111111-1111-4111-8111-111111111111';
    const ev = (n: number) => ({ fleetId: c.s.fleetId, correlationId: corr, atMs: n, kind: 'test.tick', subject: { type: 'schedule' as const, id: 'x' }, data: { n } });
    const a = c.s.events.append(ev(1));
    expect(c.s.events.readTimeline(c.s.fleetId, corr).map((e) => e.seq)).toEqual([a.seq]);
    const b = c.s.events.append(ev(2));
    expect(b.seq).toBeGreaterThan(a.seq);
    await c.s.restart();
    const d = c.s.events.append(ev(3));
    expect(d.seq).toBeGreaterThan(b.seq);
    const after = await req(c.s, 'GET', `/v1/events?fleet_id=${c.s.fleetId}&correlation_id=${corr}`);
    expect(after.json.items.map((e: any) => e.data.n)).toEqual([1, 2, 3]);
  });
});
