/**
 * FieldRuleDelivery without sockets: a test link records what is written and lets the test play the
 * robots' answers. Outcomes per online robot (applied, rejected, timed_out, disconnected), an answer
 * to an older set not settling a newer one, the set sent at link opening, and the waiter bound.
 */
import { create } from '@bufbuild/protobuf';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventLog } from '../../src/events/log.js';
import { FieldRuleDelivery } from '../../src/fleet/safety/field-rules/delivery.js';
import { createFieldRule } from '../../src/fleet/safety/field-rules/rules.js';
import { FieldRuleSetAckSchema, type FieldRuleSet } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import type { RobotLinkListener } from '../../src/protocol/robot-link.js';
import { NoopRobotLink } from '../support/noop-link.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import type { FleetRecord } from '../../src/store/records.js';

/** A robot link whose robots are the test's: `online` decides who is connected. */
class TestLink extends NoopRobotLink {
  readonly listeners = new Set<RobotLinkListener>();
  readonly online = new Set<string>();
  readonly sent: { robotId: string; version: bigint }[] = [];
  override listen(l: RobotLinkListener) {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
  override isOnline(id: string) {
    return this.online.has(id);
  }
  override sendFieldRules(robotId: string, set: FieldRuleSet) {
    if (!this.online.has(robotId)) return false;
    this.sent.push({ robotId, version: set.version });
    return true;
  }
  ack(robotId: string, version: number, applied = true, error = '') {
    for (const l of this.listeners) l.onFieldRuleAck?.(robotId, create(FieldRuleSetAckSchema, { version: BigInt(version), applied, error }));
  }
  offline(robotId: string) {
    this.online.delete(robotId);
    for (const l of this.listeners) l.onOffline?.(robotId, 'gone');
  }
}

let dir: string;
let store: Store;
let fleet: FleetRecord;
let robots: string[];
let link: TestLink;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-frd-'));
  store = openStore(dir);
  const org = createOrg(store, 'o');
  fleet = createFleet(store, org.orgId, 'f');
  robots = [0, 1, 2, 3].map((i) => addRobot(store, { fleetId: fleet.fleetId, name: `r${i}`, capabilities: [], active: true }).record.robotId);
  link = new TestLink();
  const geometry = { type: 'Polygon' as const, coordinates: [[[5, 52], [5.001, 52], [5.001, 52.001], [5, 52]]] };
  await createFieldRule(store, new EventLog(store), fleet, { name: 'k', type: 'keep_out', geometry, parameters: {} }, 1);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('field rule delivery', () => {
  it('reports each online robot: applied, rejected, timed out, disconnected; offline robots are not listed', async () => {
    const d = new FieldRuleDelivery({ store, link, ackTimeoutMs: 300 });
    // Robot 3 stays offline.
    for (const r of robots.slice(0, 3)) link.online.add(r);
    const pending = d.publish(fleet.fleetId);
    expect(link.sent.map((s) => s.robotId).sort()).toEqual(robots.slice(0, 3).sort());
    link.ack(robots[0]!, 1);
    link.ack(robots[1]!, 1, false, 'polygon too large');
    const out = await pending;
    expect(out.ruleSetVersion).toBe(1);
    const by = Object.fromEntries(out.robots.map((r) => [r.robotId, r]));
    expect(by[robots[0]!]).toEqual({ robotId: robots[0], outcome: 'applied', error: null });
    expect(by[robots[1]!]).toEqual({ robotId: robots[1], outcome: 'rejected', error: 'polygon too large' });
    expect(by[robots[2]!]!.outcome).toBe('timed_out');
    expect(by[robots[3]!]).toBeUndefined();

    const again = d.publish(fleet.fleetId);
    link.offline(robots[2]!);
    const second = await again;
    expect(second.robots.find((r) => r.robotId === robots[2])!.outcome).toBe('disconnected');
    // robot 0 already acknowledged version 1: applied at once.
    expect(second.robots.find((r) => r.robotId === robots[0])!.outcome).toBe('applied');
    d.close();
  });

  it('an answer to an older version does not settle a wait for a newer one; a newer one does', async () => {
    const d = new FieldRuleDelivery({ store, link, ackTimeoutMs: 2000 });
    link.online.add(robots[0]!);
    store.meta.putSync(`fieldRuleSetVersion/${fleet.fleetId}`, 5);
    const pending = d.publish(fleet.fleetId);
    link.ack(robots[0]!, 4);
    let settled = false;
    void pending.then(() => (settled = true));
    // The test double's ack is handled synchronously: a turn of the event loop lets any settling run.
    await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    link.ack(robots[0]!, 6);
    expect((await pending).robots[0]!.outcome).toBe('applied');
    expect(d.stateOf(robots[0]!)).toEqual({ version: 6, applied: true, error: '' });
    d.close();
  });

  it('sends the current set when a link opens, and answers beyond the waiter bound are not awaited', async () => {
    const d = new FieldRuleDelivery({ store, link, ackTimeoutMs: 5000, maxWaiters: 1 });
    link.online.add(robots[0]!);
    for (const l of link.listeners) l.onLinkOpening?.(robots[0]!, fleet.fleetId);
    expect(link.sent).toEqual([{ robotId: robots[0], version: 1n }]);
    link.online.add(robots[1]!);
    const started = Date.now();
    const pending = d.publish(fleet.fleetId);
    // Only one of the two robots is awaited; the other is reported timed out at once.
    link.ack(robots[0]!, 1);
    link.ack(robots[1]!, 1);
    const out = await pending;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(out.robots.map((r) => r.outcome).sort()).toEqual(['applied', 'timed_out']);
    d.close();
  });
});
