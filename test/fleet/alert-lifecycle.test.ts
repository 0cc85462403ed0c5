/** The alert lifecycle without sockets: open, repeat, acknowledge, resolve, restart, lists, bounds. */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/catalog.js';
import { AlertService, alertsOf, type AlertCondition, type AlertRecord } from '../../src/fleet/safety/alerts/index.js';
import { alertWorld, type AlertWorld } from './alerts-support.js';

let w: AlertWorld;
beforeEach(() => {
  w = alertWorld();
});
afterEach(async () => {
  await w.close();
});

const PERSON = { actorType: 'user' as const, apiKeyId: randomUUID(), userId: randomUUID(), email: 'ops@acme.test' };

function estop(robotId: string): AlertCondition {
  return { kind: 'estop', fleetId: w.fleetId, conditionKey: robotId, subject: { type: 'robot', id: robotId }, robotId, severity: 'critical', message: 'Emergency stop is pressed.', details: {} };
}

async function errorOf(p: Promise<unknown>): Promise<ApiError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof ApiError) return e;
    throw e;
  }
  throw new Error('expected an ApiError');
}

describe('alert lifecycle', () => {
  it('opens once per condition and counts repeats; acknowledge records who and when; clearing resolves', async () => {
    let t = 1_000_000;
    const alerts = new AlertService({ store: w.store, events: w.events, now: () => t });
    const seen: string[] = [];
    alerts.observe((a, change) => seen.push(`${a.kind}:${change}:${a.state}`));
    const r0 = w.robotIds[0]!;
    const first = alerts.raise(estop(r0))!;
    expect(first).toMatchObject({ state: 'open', occurrences: 1, openedAtMs: t, orgId: w.orgId, correlationId: r0 });
    t += 5_000;
    const again = alerts.raise(estop(r0))!;
    expect(again.alertId).toBe(first.alertId);
    expect(again.occurrences).toBe(2);
    expect(again.lastRaisedAtMs).toBe(t);
    // Another robot is another subject.
    expect(alerts.raise(estop(w.robotIds[1]!))!.alertId).not.toBe(first.alertId);

    t += 1_000;
    const acked = await alerts.acknowledge(w.fleetId, first.alertId, PERSON, 'walking over');
    expect(acked).toMatchObject({ state: 'acknowledged', acknowledgedAtMs: t, acknowledgedBy: PERSON, acknowledgeNote: 'walking over' });
    // Stored before the acknowledgement answered.
    expect(w.store.alerts.get(first.alertId)?.state).toBe('acknowledged');
    // A second acknowledgement keeps the first.
    t += 1_000;
    expect((await alerts.acknowledge(w.fleetId, first.alertId, { ...PERSON, email: 'other@acme.test' }, null)).acknowledgedBy?.email).toBe('ops@acme.test');
    // A repeat keeps it acknowledged.
    expect(alerts.raise(estop(r0))!.state).toBe('acknowledged');

    t += 1_000;
    const resolved = alerts.clear(w.fleetId, 'estop', r0)!;
    expect(resolved).toMatchObject({ state: 'resolved', resolvedAtMs: t, resolution: 'condition_cleared' });
    expect(alerts.get(w.fleetId, first.alertId)?.state).toBe('resolved');
    expect((await errorOf(alerts.acknowledge(w.fleetId, first.alertId, PERSON, null))).id).toBe('alert_resolved');
    expect((await errorOf(alerts.acknowledge(w.fleetId, randomUUID(), PERSON, null))).id).toBe('alert_not_found');
    // Another fleet's id does not find it.
    expect(alerts.get(randomUUID(), first.alertId)).toBeUndefined();
    expect((await errorOf(alerts.acknowledge(randomUUID(), first.alertId, PERSON, null))).id).toBe('alert_not_found');

    // The condition coming back after it resolved opens a new alert.
    t += 1_000;
    const reopened = alerts.raise(estop(r0))!;
    expect(reopened.alertId).not.toBe(first.alertId);
    expect(reopened.occurrences).toBe(1);
    await alerts.flushed();
    expect(seen.filter((s) => s.startsWith('estop:opened'))).toHaveLength(3);
    expect(seen).toContain('estop:acknowledged:acknowledged');
    expect(seen).toContain('estop:resolved:resolved');

    // Each change is on the robot's timeline.
    const kinds = w.events.readTimeline(w.fleetId, r0).map((e) => `${e.kind}:${e.subject.type}`);
    expect(kinds).toEqual(['alert.opened:alert', 'alert.acknowledged:alert', 'alert.resolved:alert', 'alert.opened:alert']);
  });

  it('survives a restart: the unresolved alert is found again and a repeat counts on it', async () => {
    const a1 = new AlertService({ store: w.store, events: w.events });
    const opened = a1.raise(estop(w.robotIds[0]!))!;
    await a1.acknowledge(w.fleetId, opened.alertId, PERSON, null);
    await a1.flushed();
    const a2 = new AlertService({ store: w.store, events: w.events });
    expect(a2.unresolvedOf().map((a) => a.alertId)).toEqual([opened.alertId]);
    const again = a2.raise(estop(w.robotIds[0]!))!;
    expect(again.alertId).toBe(opened.alertId);
    expect(again.state).toBe('acknowledged');
    a2.clear(w.fleetId, 'estop', w.robotIds[0]!);
    await a2.flushed();
    expect(new AlertService({ store: w.store, events: w.events }).unresolvedOf()).toEqual([]);
    expect(w.store.alerts.get(opened.alertId)?.state).toBe('resolved');
  });

  it('lists newest first, filtered by state, kind and robot', async () => {
    let t = 1_000;
    const alerts = new AlertService({ store: w.store, events: w.events, now: () => t });
    const [r0, r1] = w.robotIds as [string, string];
    alerts.raise(estop(r0));
    t += 10;
    alerts.raise({ ...estop(r1), kind: 'battery_low', severity: 'warning' });
    t += 10;
    const third = alerts.raise(estop(r1))!;
    t += 10;
    alerts.clear(w.fleetId, 'estop', r0);
    await alerts.flushed();
    const all = (f = {}): AlertRecord[] => alertsOf(w.store, w.fleetId, f).page(null, 10).items;
    expect(all().map((a) => a.kind)).toEqual(['estop', 'battery_low', 'estop']);
    expect(all()[0]!.alertId).toBe(third.alertId);
    expect(all({ state: 'open' }).map((a) => `${a.kind}/${a.robotId === r1 ? 'r1' : 'r0'}`)).toEqual(['estop/r1', 'battery_low/r1']);
    expect(all({ state: 'resolved' }).map((a) => a.robotId)).toEqual([r0]);
    expect(all({ kind: 'battery_low' })).toHaveLength(1);
    expect(all({ robotId: r0 })).toHaveLength(1);
    expect(all({ robotId: r1, kind: 'estop' })).toHaveLength(1);
    // Keyset pages: each alert once.
    const p1 = alertsOf(w.store, w.fleetId, {}).page(null, 2);
    const p2 = alertsOf(w.store, w.fleetId, {}).page(p1.last, 2);
    expect(p1.more).toBe(true);
    expect([...p1.items, ...p2.items].map((a) => a.alertId)).toEqual(all().map((a) => a.alertId));
    expect(alertsOf(w.store, randomUUID(), {}).page(null, 10).items).toEqual([]);
  });

  it('bounds the unresolved alerts per fleet', () => {
    const alerts = new AlertService({ store: w.store, events: w.events, maxUnresolvedPerFleet: 1 });
    expect(alerts.raise(estop(w.robotIds[0]!))).not.toBeNull();
    expect(alerts.raise(estop(w.robotIds[1]!))).toBeNull();
    // A repeat of the one it holds still counts.
    expect(alerts.raise(estop(w.robotIds[0]!))!.occurrences).toBe(2);
    alerts.clear(w.fleetId, 'estop', w.robotIds[0]!);
    expect(alerts.raise(estop(w.robotIds[1]!))).not.toBeNull();
  });

  it('an unknown fleet opens nothing', () => {
    const alerts = new AlertService({ store: w.store, events: w.events });
    expect(alerts.raise({ ...estop(w.robotIds[0]!), fleetId: randomUUID() })).toBeNull();
  });
});

describe('alert retention', () => {
  it('removes alerts resolved longer ago than the retention, with their index keys; keeps unresolved ones', async () => {
    const { sweepResolvedAlerts } = await import('../../src/fleet/safety/alerts/retention.js');
    let t = 1_000;
    const alerts = new AlertService({ store: w.store, events: w.events, now: () => t });
    const [r0, r1] = w.robotIds as [string, string];
    const old = alerts.raise(estop(r0))!;
    const kept = alerts.raise(estop(r1))!;
    t = 2_000;
    alerts.clear(w.fleetId, 'estop', r0);
    await alerts.flushed();
    expect(await sweepResolvedAlerts(w.store, 2_500, { retentionMs: 1_000 })).toBe(0);
    expect(await sweepResolvedAlerts(w.store, 10_000, { retentionMs: 1_000 })).toBe(1);
    expect(w.store.alerts.get(old.alertId)).toBeUndefined();
    expect(w.store.alerts.get(kept.alertId)?.state).toBe('open');
    expect(alertsOf(w.store, w.fleetId, {}).page(null, 10).items.map((a) => a.alertId)).toEqual([kept.alertId]);
    expect(alertsOf(w.store, w.fleetId, { robotId: r0 }).page(null, 10).items).toEqual([]);
  });
});

describe('alert lists and uncommitted changes', () => {
  it('a list read right after a resolve shows the alert resolved (the service\'s live record)', async () => {
    const alerts = new AlertService({ store: w.store, events: w.events });
    const a = alerts.raise(estop(w.robotIds[0]!))!;
    await alerts.flushed();
    alerts.clear(w.fleetId, 'estop', w.robotIds[0]!);
    const live = (id: string): AlertRecord | undefined => alerts.live(id);
    expect(alertsOf(w.store, w.fleetId, { state: 'open' }, live).page(null, 10).items).toEqual([]);
    expect(alertsOf(w.store, w.fleetId, {}, live).page(null, 10).items.map((x) => `${x.alertId}/${x.state}`)).toEqual([`${a.alertId}/resolved`]);
    await alerts.flushed();
  });
});
