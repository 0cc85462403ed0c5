/** Each alert source without sockets: telemetry snapshots, the robot link, schedule events, command exhaustion, faults. */
import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FleetAlerts, type AlertRecord } from '../../src/fleet/safety/alerts/index.js';
import type { LinkConflictReport, RobotLink, RobotLinkListener } from '../../src/protocol/robot-link.js';
import { alertWorld, snapshotBytes, type AlertWorld } from './alerts-support.js';
import { until } from '../support/until.js';

let w: AlertWorld;
beforeEach(() => {
  w = alertWorld();
});
afterEach(async () => {
  await w.close();
});

/** A robot link the test drives: who is online, and its listeners. */
class FakeLink implements Pick<RobotLink, 'listen' | 'isOnline' | 'linkConflict'> {
  readonly listeners = new Set<RobotLinkListener>();
  readonly online = new Set<string>();
  conflicts = new Set<string>();
  listen(l: RobotLinkListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  isOnline(robotId: string): boolean {
    return this.online.has(robotId);
  }
  linkConflict(robotId: string): { sinceMs: number; refusedConnections: number; lastRefusedAtMs: number } | null {
    return this.conflicts.has(robotId) ? { sinceMs: 1, refusedConnections: 1, lastRefusedAtMs: 1 } : null;
  }
  up(robotId: string, fleetId: string): void {
    this.online.add(robotId);
    for (const l of this.listeners) l.onOnline?.(robotId, { fleetId, capabilities: [], agentVersion: 't' });
  }
  down(robotId: string): void {
    this.online.delete(robotId);
    for (const l of this.listeners) l.onOffline?.(robotId, 'test');
  }
}

const unresolved = (fa: FleetAlerts, kind?: AlertRecord['kind']): AlertRecord[] => fa.service.unresolvedOf(kind);

describe('alert sources', () => {
  it('e-stop and battery from snapshots: raise on change, clear with hysteresis, no repeat per snapshot', () => {
    const fa = new FleetAlerts({ store: w.store, events: w.events, settings: { batteryLowPct: 20, batteryClearPct: 30 } });
    const r0 = w.robotIds[0]!;
    const snap = (v: { estop?: boolean; batteryPct?: number }): void => fa.telemetry.onSnapshot(r0, snapshotBytes(r0, w.fleetId, v));
    snap({ estop: false, batteryPct: 80 });
    expect(unresolved(fa)).toEqual([]);
    snap({ estop: true, batteryPct: 80 });
    snap({ estop: true, batteryPct: 80 });
    expect(unresolved(fa, 'estop')).toHaveLength(1);
    expect(unresolved(fa, 'estop')[0]!.occurrences).toBe(1);
    snap({ estop: false, batteryPct: 19 });
    expect(unresolved(fa, 'estop')).toEqual([]);
    const low = unresolved(fa, 'battery_low');
    expect(low).toHaveLength(1);
    expect(low[0]!.details).toMatchObject({ batteryPct: 19, thresholdPct: 20, clearPct: 30 });
    // Between the two thresholds: still low, not re-raised.
    snap({ batteryPct: 25 });
    snap({ batteryPct: 18 });
    expect(unresolved(fa, 'battery_low')).toHaveLength(1);
    expect(unresolved(fa, 'battery_low')[0]!.occurrences).toBe(1);
    snap({ batteryPct: 30 });
    expect(unresolved(fa, 'battery_low')).toEqual([]);
    // A snapshot that cannot be read is ignored.
    fa.telemetry.onSnapshot(r0, new Uint8Array([1, 2, 3]));
    // One with a corrupt fleet id (its length in six bytes, which both row readers refuse) changes
    // nothing: the next readable one raises.
    const good = snapshotBytes(r0, w.fleetId, { estop: true, batteryPct: 80 });
    const at = 2 + good[1]!;
    expect(good[at]).toBe(w.fleetId.length);
    const overlong = Uint8Array.from([...good.subarray(0, at), w.fleetId.length | 0x80, 0x80, 0x80, 0x80, 0x80, 0x00, ...good.subarray(at + 1)]);
    fa.telemetry.onSnapshot(r0, overlong);
    expect(unresolved(fa, 'estop')).toEqual([]);
    snap({ estop: true, batteryPct: 80 });
    expect(unresolved(fa, 'estop')).toHaveLength(1);
  });

  it('after a restart, e-stop and battery alerts the stored snapshot shows cleared are resolved', async () => {
    const [r0, r1] = w.robotIds as [string, string];
    const fa1 = new FleetAlerts({ store: w.store, events: w.events });
    fa1.telemetry.onSnapshot(r0, snapshotBytes(r0, w.fleetId, { estop: true, batteryPct: 5 }));
    fa1.telemetry.onSnapshot(r1, snapshotBytes(r1, w.fleetId, { estop: true, batteryPct: 5 }));
    await fa1.close();
    expect(unresolved(fa1)).toHaveLength(4);
    // Meanwhile: r0 released its e-stop and charged; r1 did not report again.
    await w.store.snapshots.put(r0, snapshotBytes(r0, w.fleetId, { estop: false, batteryPct: 90 }));
    await w.store.snapshots.put(r1, snapshotBytes(r1, w.fleetId, { estop: true, batteryPct: 5 }));
    const fa2 = new FleetAlerts({ store: w.store, events: w.events });
    fa2.start(new FakeLink());
    expect(unresolved(fa2).map((a) => `${a.kind}/${a.robotId === r0 ? 'r0' : 'r1'}`).sort()).toEqual(['battery_low/r1', 'estop/r1']);
    await fa2.close();
    const resolved = [...w.store.alerts.getRange()].map((e) => e.value).filter((a) => a.state === 'resolved');
    expect(resolved.map((a) => a.resolution)).toEqual(['cleared_while_down', 'cleared_while_down']);
    // Its state carries over: r1's e-stop released now resolves, pressed again does not re-open.
    fa2.telemetry.onSnapshot(r1, snapshotBytes(r1, w.fleetId, { estop: true, batteryPct: 5 }));
    expect(unresolved(fa2, 'estop')[0]!.occurrences).toBe(1);
  });

  it('robot_offline after the threshold, resolved when the robot connects or is made inactive', async () => {
    let t = 1_000_000;
    const link = new FakeLink();
    const [r0, r1] = w.robotIds as [string, string];
    link.online.add(r0);
    const fa = new FleetAlerts({ store: w.store, events: w.events, now: () => t, settings: { offlineAfterMs: 60_000 }, offline: { sweepMs: 3_600_000 } });
    fa.start(link);
    // r1 was not connected at start: offline from now.
    t += 59_000;
    fa.sweepOffline();
    expect(unresolved(fa)).toEqual([]);
    t += 1_000;
    fa.sweepOffline();
    expect(unresolved(fa, 'robot_offline').map((a) => a.robotId)).toEqual([r1]);
    expect(unresolved(fa, 'robot_offline')[0]!.details).toMatchObject({ offlineSinceMs: 1_000_000, thresholdMs: 60_000 });
    fa.sweepOffline();
    expect(unresolved(fa, 'robot_offline')[0]!.occurrences).toBe(1);
    // r0 drops: its clock starts then.
    link.down(r0);
    t += 30_000;
    fa.sweepOffline();
    expect(unresolved(fa, 'robot_offline')).toHaveLength(1);
    t += 30_000;
    fa.sweepOffline();
    expect(unresolved(fa, 'robot_offline')).toHaveLength(2);
    link.up(r0, w.fleetId);
    expect(unresolved(fa, 'robot_offline').map((a) => a.robotId)).toEqual([r1]);
    // r1 made inactive: resolved as such, and not raised again.
    await w.store.robots.put(r1, { ...w.store.robots.get(r1)!, active: false });
    t += 120_000;
    fa.sweepOffline();
    expect(unresolved(fa)).toEqual([]);
    const r1Alert = [...w.store.alerts.getRange()].map((e) => e.value).find((a) => a.robotId === r1);
    await fa.close();
    expect(w.store.alerts.get(r1Alert!.alertId)?.resolution).toBe('robot_inactive');
  });

  it('link conflicts: raised and cleared by the link; after a restart resolved once the clear time passes without one', async () => {
    const link = new FakeLink();
    const r0 = w.robotIds[0]!;
    const fa = new FleetAlerts({ store: w.store, events: w.events, settings: { linkConflictClearMs: 50 } });
    fa.start(link);
    const report: LinkConflictReport = {
      fleetId: w.fleetId, sinceMs: Date.now(), suspectSinceMs: Date.now() - 100, rule: 'displaced_returned',
      holder: { instanceId: 'a', peer: '10.0.0.1:1' }, refused: { instanceId: 'b', peer: '10.0.0.2:1' }, clearAfterMs: 50,
    };
    for (const l of link.listeners) l.onLinkConflict?.(r0, report);
    expect(unresolved(fa, 'link_conflict')[0]).toMatchObject({ severity: 'critical', robotId: r0, details: { rule: 'displaced_returned' } });
    for (const l of link.listeners) l.onLinkConflictCleared?.(r0, { fleetId: w.fleetId, sinceMs: 1, clearedAtMs: Date.now(), refusedConnections: 3 });
    expect(unresolved(fa, 'link_conflict')).toEqual([]);
    for (const l of link.listeners) l.onLinkConflict?.(r0, report);
    await fa.close();
    // Restart: the new link has no conflict for it, so it resolves after the clear time.
    const fa2 = new FleetAlerts({ store: w.store, events: w.events, settings: { linkConflictClearMs: 50 } });
    fa2.start(new FakeLink());
    expect(unresolved(fa2, 'link_conflict')).toHaveLength(1);
    await until(() => unresolved(fa2, 'link_conflict').length === 0, 5_000, 'the conflict alert to resolve');
    await fa2.close();
  });

  it('schedule_failed from schedule events; resolved on deploy, cancel, resume, or an edit out of failed', async () => {
    const fa = new FleetAlerts({ store: w.store, events: w.events });
    fa.start(new FakeLink());
    const event = (scheduleId: string, kind: string, data: Record<string, unknown> = {}): void =>
      void w.events.append({ fleetId: w.fleetId, correlationId: scheduleId, atMs: Date.now(), kind, subject: { type: 'schedule', id: scheduleId }, data });
    const [s1, s2, s3] = [randomUUID(), randomUUID(), randomUUID()];
    event(s1, 'schedule.failed', { reason: 'deadline_exceeded', detail: 'no robot' });
    event(s1, 'schedule.failed', { reason: 'deadline_exceeded', detail: 'no robot' });
    event(s2, 'schedule.paused', { reason: 'creator_key_invalid', detail: 'key revoked' });
    event(s3, 'schedule.failed', { reason: 'missed' });
    await until(() => unresolved(fa, 'schedule_failed').length === 3, 2_000, 'three schedule alerts');
    const a1 = unresolved(fa, 'schedule_failed').find((a) => a.subject.id === s1)!;
    expect(a1).toMatchObject({ robotId: null, correlationId: s1, details: { reason: 'deadline_exceeded', detail: 'no robot' } });
    await until(() => fa.service.find(w.fleetId, 'schedule_failed', s1)?.occurrences === 2, 2_000, 'the repeat counted');
    event(s1, 'schedule.deployed');
    event(s2, 'schedule.resumed');
    // An edit of a schedule that does not exist (or no longer fails) clears; pending does not.
    event(s3, 'schedule.pending');
    // A failure of another schedule, appended after it: once its alert shows, the pending was handled.
    const s4 = randomUUID();
    event(s4, 'schedule.failed', { reason: 'missed' });
    await until(() => fa.service.find(w.fleetId, 'schedule_failed', s4) !== undefined, 2_000, 'the later event handled');
    expect(fa.service.find(w.fleetId, 'schedule_failed', s3)).toBeDefined();
    event(s4, 'schedule.deployed');
    event(s3, 'schedule.edited');
    await until(() => unresolved(fa, 'schedule_failed').length === 0, 2_000, 'every schedule alert resolved');
    await fa.close();
  });

  it('command_retry_exhausted from the command service; a late ack resolves it; start-up resolves acknowledged ones', async () => {
    const states = new Map<string, 'dispatched' | 'agent_received'>();
    const fa = new FleetAlerts({ store: w.store, events: w.events });
    fa.start(new FakeLink(), (id) => (states.has(id) ? { state: states.get(id)! } : undefined));
    const cmd = (commandId: string) => ({ commandId, robotId: w.robotIds[0]!, fleetId: w.fleetId, orgId: w.orgId, action: 'go_to' as const, attempts: 5, createdAtMs: 1, lastSentAtMs: 2 });
    const [c1, c2, c3] = [randomUUID(), randomUUID(), randomUUID()];
    for (const c of [c1, c2, c3]) {
      states.set(c, 'dispatched');
      fa.commands.retryBudgetExhausted(cmd(c));
    }
    expect(unresolved(fa, 'command_retry_exhausted')[0]).toMatchObject({ subject: { type: 'command' }, robotId: w.robotIds[0], details: { action: 'go_to', attempts: 5 } });
    fa.commands.acknowledgedAfterExhaustion(cmd(c1));
    expect(unresolved(fa, 'command_retry_exhausted')).toHaveLength(2);
    await fa.close();
    states.set(c2, 'agent_received');
    const fa2 = new FleetAlerts({ store: w.store, events: w.events });
    fa2.start(new FakeLink(), (id) => (states.has(id) ? { state: states.get(id)! } : undefined));
    expect(unresolved(fa2, 'command_retry_exhausted').map((a) => a.subject.id)).toEqual([c3]);
    await fa2.close();
  });

  it('faults at error severity or worse (the faults module\'s observer shape)', () => {
    const fa = new FleetAlerts({ store: w.store, events: w.events });
    const r0 = w.robotIds[0]!;
    const fault = (code: string, severity: string) => ({
      orgId: w.orgId, fleetId: w.fleetId, robotId: r0, code, severity, component: 'drive_left', message: 'overcurrent', raisedAtMs: 5,
    });
    fa.faults.onFaultRaised(fault('E12', 'warning'));
    expect(unresolved(fa)).toEqual([]);
    fa.faults.onFaultRaised(fault('E12', 'error'));
    fa.faults.onFaultRaised(fault('E12', 'error'));
    fa.faults.onFaultRaised(fault('E13', 'critical'));
    const open = unresolved(fa, 'fault');
    expect(open.map((a) => `${a.conditionKey}:${a.severity}:${a.occurrences}`).sort()).toEqual([`${r0}/E12:error:2`, `${r0}/E13:critical:1`]);
    expect(open[0]).toMatchObject({ subject: { type: 'robot', id: r0 }, details: { component: 'drive_left' } });
    fa.faults.onFaultCleared({ ...fault('E12', 'error'), clearedAtMs: 9 });
    expect(unresolved(fa, 'fault').map((a) => a.conditionKey)).toEqual([`${r0}/E13`]);
    // Downgraded below error: the condition no longer holds.
    fa.faults.onFaultRaised(fault('E13', 'warn'));
    expect(unresolved(fa, 'fault')).toEqual([]);
    // Start-up sync: raises what is active, resolves what is not.
    fa.faults.onFaultRaised(fault('E14', 'fatal'));
    fa.faults.syncActiveFaults([fault('E15', 'error'), fault('E16', 'info')]);
    expect(unresolved(fa, 'fault').map((a) => a.conditionKey)).toEqual([`${r0}/E15`]);
  });
});
