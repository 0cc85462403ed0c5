/**
 * The field rule records without sockets (src/fleet/safety/field-rules/rules.ts): every change bumps the
 * fleet's rule set version in its own transaction, parameters are checked per type, the keyset
 * list filters, other fleets' rules are invisible, the fleet bounds refuse with 409, and the wire
 * set carries only enabled rules with unclosed rings.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventLog } from '../../src/events/log.js';
import {
  createFieldRule, deleteFieldRule, editFieldRule, fieldRulesOf, getFieldRule, MAX_RULES_PER_FLEET, ruleSetVersion, setFieldRuleEnabled,
  type FieldRuleInput,
} from '../../src/fleet/safety/field-rules/rules.js';
import { currentRuleSet } from '../../src/fleet/safety/field-rules/rule-set.js';
import { FieldRuleType } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import type { FleetRecord } from '../../src/store/records.js';

let dir: string;
let store: Store;
let events: EventLog;
let fleet: FleetRecord;
let other: FleetRecord;

const geometry = { type: 'Polygon' as const, coordinates: [[[5, 52], [5.001, 52], [5.001, 52.001], [5, 52.001], [5, 52]]] };
const speed = (over: Partial<FieldRuleInput> = {}): FieldRuleInput => ({ name: 'slow', type: 'speed_limit', geometry, parameters: { maxSpeedMps: 1 }, ...over });

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-fr-'));
  store = openStore(dir);
  events = new EventLog(store);
  const org = createOrg(store, 'o');
  fleet = createFleet(store, org.orgId, 'f');
  other = createFleet(store, org.orgId, 'g');
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('field rule records', () => {
  it('bumps the fleet version on each change, not on a no-op toggle; other fleets are separate', async () => {
    const a = await createFieldRule(store, events, fleet, speed(), 1);
    expect(a.ruleSetVersion).toBe(1);
    const b = await editFieldRule(store, events, fleet.fleetId, a.directiveId, speed({ parameters: { maxSpeedMps: 2 } }), 2);
    expect(b.ruleSetVersion).toBe(2);
    expect((await setFieldRuleEnabled(store, events, fleet.fleetId, a.directiveId, true, 3)).ruleSetVersion).toBe(2);
    expect((await setFieldRuleEnabled(store, events, fleet.fleetId, a.directiveId, false, 4)).ruleSetVersion).toBe(3);
    expect(ruleSetVersion(store, fleet.fleetId)).toBe(3);
    expect(ruleSetVersion(store, other.fleetId)).toBe(0);
    expect(getFieldRule(store, other.fleetId, a.directiveId)).toBeUndefined();
    await expect(editFieldRule(store, events, other.fleetId, a.directiveId, speed(), 5)).rejects.toMatchObject({ id: 'field_rule_not_found' });
    await deleteFieldRule(store, events, fleet.fleetId, a.directiveId, 6);
    expect(ruleSetVersion(store, fleet.fleetId)).toBe(4);
    expect(getFieldRule(store, fleet.fleetId, a.directiveId)).toBeUndefined();
  });

  it('checks the parameters each type takes, naming the field', async () => {
    await expect(createFieldRule(store, events, fleet, speed({ parameters: {} }), 1)).rejects.toThrow(/field_rule\.parameters\.max_speed_mps is required/);
    await expect(createFieldRule(store, events, fleet, speed({ type: 'keep_out' }), 1)).rejects.toThrow(/field_rule\.parameters\.max_speed_mps is not taken by type keep_out/);
    await expect(createFieldRule(store, events, fleet, speed({ type: 'stop_and_wait', parameters: { waitS: 2, maxSpeedMps: 1 } }), 1)).rejects.toThrow(/max_speed_mps is not taken/);
    const open = { type: 'Polygon' as const, coordinates: [[[5, 52], [5.001, 52], [5.001, 52.001], [5, 52.001]]] };
    await expect(createFieldRule(store, events, fleet, speed({ geometry: open }), 1)).rejects.toThrow(/field_rule\.geometry: ring 0 is not closed/);
    expect(ruleSetVersion(store, fleet.fleetId)).toBe(0);
  });

  it('lists by keyset with enabled / type filters', async () => {
    await createFieldRule(store, events, fleet, speed(), 1);
    await createFieldRule(store, events, fleet, speed({ type: 'keep_out', parameters: {}, enabled: false }), 1);
    await createFieldRule(store, events, fleet, speed({ type: 'stop_and_wait', parameters: { waitS: 5 } }), 1);
    await createFieldRule(store, events, other, speed(), 1);
    expect(fieldRulesOf(store, fleet.fleetId).page(null, 10).items).toHaveLength(3);
    expect(fieldRulesOf(store, fleet.fleetId, { enabled: false }).page(null, 10).items.map((r) => r.type)).toEqual(['keep_out']);
    expect(fieldRulesOf(store, fleet.fleetId, { type: 'stop_and_wait' }).page(null, 10).items.map((r) => r.parameters)).toEqual([{ waitS: 5 }]);
    const first = fieldRulesOf(store, fleet.fleetId).page(null, 2);
    expect(first.more).toBe(true);
    const rest = fieldRulesOf(store, fleet.fleetId).page(first.last, 2);
    expect(rest.items).toHaveLength(1);
    expect(rest.more).toBe(false);
  });

  it('refuses a rule past the fleet bound with 409', async () => {
    for (let i = 0; i < MAX_RULES_PER_FLEET; i++) await createFieldRule(store, events, fleet, speed({ name: `r${i}` }), 1);
    await expect(createFieldRule(store, events, fleet, speed(), 1)).rejects.toMatchObject({ id: 'field_rule_limit', status: 409 });
    expect(ruleSetVersion(store, fleet.fleetId)).toBe(MAX_RULES_PER_FLEET);
  });

  it('the wire set holds the enabled rules only, rings unclosed, with the current version', async () => {
    await createFieldRule(store, events, fleet, speed(), 1);
    await createFieldRule(store, events, fleet, speed({ type: 'keep_out', parameters: {}, enabled: false }), 1);
    const set = currentRuleSet(store, fleet.fleetId);
    expect(set.version).toBe(2n);
    expect(set.rules).toHaveLength(1);
    expect(set.rules[0]!.type).toBe(FieldRuleType.SPEED_LIMIT);
    expect(set.rules[0]!.maxSpeedMps).toBe(1);
    expect(set.rules[0]!.polygons[0]!.rings[0]!.ring).toHaveLength(4);
    expect(set.rules[0]!.polygons[0]!.rings[0]!.ring[1]).toMatchObject({ latitude: 52, longitude: 5.001 });
  });
});
