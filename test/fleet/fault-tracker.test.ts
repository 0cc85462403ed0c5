/**
 * The fault tracker without sockets: raise, deduplicate, update, clear; the records, their index
 * (lists with the active and robot filters), events and observers; state kept across a restart
 * (a new tracker on the same store); a robot moved to another fleet.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventLog } from '../../src/events/log.js';
import { faultsOf } from '../../src/fleet/safety/faults/faults.js';
import { sweepFaults } from '../../src/fleet/safety/faults/retention.js';
import type { FaultNotice } from '../../src/fleet/safety/faults/observer.js';
import { FaultTracker, MAX_FAULTS_PER_REPORT, type ReportedFault } from '../../src/fleet/safety/faults/tracker.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';

const hot = (message = 'winding 92 C', severity: ReportedFault['severity'] = 'error'): ReportedFault => ({
  code: 'drive_left_overtemp', severity, component: 'drive_left', message, robotRaisedAtMs: 1000,
});
const low: ReportedFault = { code: 'battery_low', severity: 'warning', component: 'battery', message: '18 %', robotRaisedAtMs: null };

describe('FaultTracker', () => {
  let dir: string;
  let store: Store;
  let events: EventLog;
  let t: number;
  let fleetId: string;
  let robotId: string;
  const seen: string[] = [];
  const observer = {
    raised: (f: FaultNotice) => seen.push(`raised ${f.code} ${f.severity}`),
    cleared: (f: FaultNotice) => seen.push(`cleared ${f.code} at ${f.clearedAtMs}`),
    updated: (f: FaultNotice, prev: string) => seen.push(`updated ${f.code} ${prev}->${f.severity}`),
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-faults-'));
    store = openStore(dir);
    events = new EventLog(store);
    t = 1_000_000;
    const org = createOrg(store, 'o');
    fleetId = createFleet(store, org.orgId, 'f').fleetId;
    robotId = addRobot(store, { fleetId, name: 'r', capabilities: [], active: true }).record.robotId;
    seen.length = 0;
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const tracker = (): FaultTracker => {
    const tr = new FaultTracker(store, events, { now: () => t });
    tr.observe(observer);
    return tr;
  };
  const list = (q: { active?: boolean; robotId?: string } = {}) => faultsOf(store, { fleetId, ...q }).page(null, 100).items;

  it('raises once, deduplicates repeats, updates on change and clears when no longer reported', async () => {
    const tr = tracker();
    tr.apply(robotId, [hot()]);
    t += 10_000;
    expect(tr.apply(robotId, [hot()])).toEqual([]);
    t += 10_000;
    tr.apply(robotId, [hot('winding 99 C', 'critical'), low]);
    t += 10_000;
    tr.apply(robotId, [low]);
    await store.root.committed;
    expect(seen).toEqual(['raised drive_left_overtemp error', 'updated drive_left_overtemp error->critical', 'raised battery_low warning', `cleared drive_left_overtemp at ${t}`]);
    const all = list();
    expect(all.map((f) => [f.code, f.state])).toEqual([['battery_low', 'active'], ['drive_left_overtemp', 'cleared']]);
    const cleared = all[1]!;
    expect(cleared).toMatchObject({ severity: 'critical', message: 'winding 99 C', raisedAtMs: 1_000_000, robotRaisedAtMs: 1000, updatedAtMs: 1_020_000, clearedAtMs: 1_030_000, clearedBy: 'robot_report' });
    expect(list({ active: true }).map((f) => f.code)).toEqual(['battery_low']);
    expect(list({ active: false }).map((f) => f.code)).toEqual(['drive_left_overtemp']);
    const timeline = events.readTimeline(fleetId, robotId).map((e) => e.kind);
    expect(timeline).toEqual(['fault.raised', 'fault.updated', 'fault.raised', 'fault.cleared']);
  });

  it('raises a new record when a cleared code comes back', async () => {
    const tr = tracker();
    tr.apply(robotId, [hot()]);
    t += 1000;
    tr.apply(robotId, []);
    t += 1000;
    tr.apply(robotId, [hot()]);
    await store.root.committed;
    const all = list({ robotId });
    expect(all.map((f) => f.state)).toEqual(['active', 'cleared']);
    expect(new Set(all.map((f) => f.faultId)).size).toBe(2);
  });

  it('keeps active faults across a restart: a new tracker clears what the robot no longer reports', async () => {
    tracker().apply(robotId, [hot(), low]);
    await store.root.committed;
    const again = tracker();
    expect(again.activeOf(robotId).map((f) => f.code).sort()).toEqual(['battery_low', 'drive_left_overtemp']);
    t += 5000;
    const changes = again.apply(robotId, [low]);
    expect(changes.map((c) => `${c.kind} ${c.after.code}`)).toEqual(['cleared drive_left_overtemp']);
    await store.root.committed;
    expect(list({ active: true }).map((f) => f.code)).toEqual(['battery_low']);
  });

  it('clears a moved robot\'s faults in its old fleet and raises them again in the new one', async () => {
    const tr = tracker();
    tr.apply(robotId, [low]);
    await store.root.committed;
    const other = createFleet(store, store.robots.get(robotId)!.orgId, 'g').fleetId;
    await store.robots.put(robotId, { ...store.robots.get(robotId)!, fleetId: other });
    t += 1000;
    tr.apply(robotId, [low]);
    await store.root.committed;
    expect(list().map((f) => [f.state, f.clearedBy])).toEqual([['cleared', 'robot_transferred']]);
    expect(faultsOf(store, { fleetId: other, active: true }).page(null, 10).items.map((f) => f.code)).toEqual(['battery_low']);
  });

  it('bounds the faults taken from one report and ignores unknown robots', () => {
    const tr = tracker();
    const many = Array.from({ length: MAX_FAULTS_PER_REPORT + 10 }, (_, i) => ({ ...low, code: `c${i}` }));
    expect(tr.apply(robotId, many)).toHaveLength(MAX_FAULTS_PER_REPORT);
    expect(tr.apply('00000000-0000-4000-8000-000000000000', [low])).toEqual([]);
  });

  it('retention removes faults cleared long ago with their index keys, never active ones', async () => {
    const tr = tracker();
    tr.apply(robotId, [hot(), low]);
    t += 1000;
    tr.apply(robotId, [low]);
    await store.root.committed;
    const day = 24 * 3600 * 1000;
    expect(await sweepFaults(store, t + 89 * day)).toBe(0);
    expect(await sweepFaults(store, t + 91 * day)).toBe(1);
    expect(list().map((f) => `${f.code} ${f.state}`)).toEqual(['battery_low active']);
    expect(await sweepFaults(store, t + 900 * day)).toBe(0);
    expect([...store.index.getKeys({ start: 'faultsBy', end: 'faultsBz' })]).toHaveLength(2);
  });
});
