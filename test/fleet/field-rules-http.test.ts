/**
 * Field rules through HTTP against the real gateway (in process) with robots on the real robot link:
 * create / edit / enable / disable / delete, each published to the fleet's online robots and
 * acknowledged (201/200), 207 `partial_failure` when an online robot does not apply it, the set
 * reaching a robot that connects later before the commands waiting in its outbox, strict input,
 * other organizations' and fleets' rules 404, permissions, the event timeline and a restart.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FieldRuleSet } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { createFleet, createOrg } from '../../src/store/identity.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { call, startStack, until, type Stack } from '../commands/http-harness.js';

let s: Stack;
let rw: string;
let ro: string;
let foreign: string;
let foreignPath: string;

const square = (lon: number, lat: number, d = 0.0002) => ({
  type: 'Polygon',
  coordinates: [[[lon, lat], [lon + d, lat], [lon + d, lat + d], [lon, lat + d], [lon, lat]]],
});
const speedRule = (over: Record<string, unknown> = {}) => ({
  name: 'Loading dock', type: 'speed_limit', geometry: square(5, 52), parameters: { max_speed_mps: 0.5 }, ...over,
});

beforeAll(async () => {
  s = await startStack(3);
  const key = (permissions: string[], orgId = s.orgId) => createApiKey(s.store, { orgId, fleetId: null, permissions, expiresAtMs: null }).apiKey;
  rw = key(['features:read', 'features:write', 'fleet:read']);
  ro = key(['features:read']);
  const other = createOrg(s.store, 'elsewhere');
  const otherFleet = createFleet(s.store, other.orgId, 'their yard');
  foreign = key(['features:read', 'features:write'], other.orgId);
  foreignPath = `/v1/orgs/${other.orgId}/fleets/${otherFleet.fleetId}/field-rules`;
});

afterAll(async () => {
  await s?.close();
});

const base = () => `/v1/orgs/${s.orgId}/fleets/${s.fleetId}/field-rules`;
const upsert = (body: Record<string, unknown>, key = rw) => call(s, 'POST', '/v1/agent/upsert-field-rule', key, { org_id: s.orgId, fleet_id: s.fleetId, ...body });
const control = (action: string, directiveId: string) =>
  call(s, 'POST', '/v1/agent/control-feature', rw, { org_id: s.orgId, fleet_id: s.fleetId, action, directive_id: directiveId });

describe('field rules over HTTP and the robot link', () => {
  let directiveId = '';

  it('creates (201, server-minted directive_id) and every online robot applies the set', async () => {
    const sim = s.sim([s.robots[0]!]);
    await until(() => s.link.link.isOnline(s.robots[0]!.robotId), 'sim robot online');
    const r = await upsert({ field_rule: speedRule() });
    expect(r.status).toBe(201);
    const rule = r.json.fieldRule as Record<string, any>;
    directiveId = rule.directiveId;
    expect(directiveId).toMatch(/^[0-9a-f-]{36}$/);
    expect(rule).toMatchObject({ name: 'Loading dock', type: 'speed_limit', enabled: true, parameters: { maxSpeedMps: 0.5 } });
    const delivery = r.json.delivery as { ruleSetVersion: number; robots: { robotId: string; outcome: string }[] };
    expect(delivery.robots).toEqual([{ robotId: s.robots[0]!.robotId, outcome: 'applied', error: null }]);
    expect(sim.robots[0]!.model.fieldRules!.version).toBe(BigInt(delivery.ruleSetVersion));
  });

  it('edits (200) with directive_id, reads it back and lists it with filters', async () => {
    const r = await upsert({ directive_id: directiveId, field_rule: speedRule({ name: 'Dock', parameters: { max_speed_mps: 0.3 } }) });
    expect(r.status).toBe(200);
    expect((r.json.fieldRule as any).parameters).toEqual({ maxSpeedMps: 0.3 });
    const got = await call(s, 'GET', `${base()}/${directiveId}`, ro);
    expect(got.status).toBe(200);
    expect(got.json).toMatchObject({ directiveId, name: 'Dock', enabled: true });
    const ko = await upsert({ field_rule: { name: 'Pit', type: 'keep_out', geometry: square(5.001, 52.001), parameters: {} } });
    expect(ko.status).toBe(201);
    const all = await call(s, 'GET', base(), ro);
    expect((all.json.items as unknown[]).length).toBe(2);
    const keepOut = await call(s, 'GET', `${base()}?type=keep_out`, ro);
    expect((keepOut.json.items as any[]).map((i) => i.name)).toEqual(['Pit']);
    const page = await call(s, 'GET', `${base()}?limit=1`, ro);
    expect(page.json.next_cursor).toEqual(expect.any(String));
    const next = await call(s, 'GET', `${base()}?limit=1&cursor=${encodeURIComponent(page.json.next_cursor as string)}`, ro);
    expect((next.json.items as unknown[]).length).toBe(1);
    expect(next.json.next_cursor).toBeNull();
    const reused = await call(s, 'GET', `${base()}?type=keep_out&cursor=${encodeURIComponent(page.json.next_cursor as string)}`, ro);
    expect(reused.status).toBe(400);
  });

  it('control-feature disables and enables a rule; disabled rules are not sent', async () => {
    const off = await control('disable_field_rule', directiveId);
    expect(off.status).toBe(200);
    expect((off.json.fieldRule as any).enabled).toBe(false);
    const listed = await call(s, 'GET', `${base()}?enabled=false`, ro);
    expect((listed.json.items as any[]).map((i) => i.directiveId)).toEqual([directiveId]);
    const on = await control('enable_field_rule', directiveId);
    expect(on.status).toBe(200);
    expect((on.json.fieldRule as any).enabled).toBe(true);
    const missing = await call(s, 'POST', '/v1/agent/control-feature', rw, { org_id: s.orgId, fleet_id: s.fleetId, action: 'enable_field_rule' });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toContain('directive_id');
  });

  it('207 partial_failure when an online robot does not apply the set, listing each online robot', async () => {
    const plain = s.agent(s.robots[1]!, {});
    plain.start();
    await until(() => plain.connected, 'plain agent connected');
    const r = await upsert({ directive_id: directiveId, field_rule: speedRule() });
    expect(r.status).toBe(207);
    expect(r.json.code).toBe('partial_failure');
    const robots = (r.json.details as any).robots as { robotId: string; outcome: string; error: string | null }[];
    expect(robots).toHaveLength(2);
    expect(robots.find((x) => x.robotId === s.robots[0]!.robotId)?.outcome).toBe('applied');
    expect(robots.find((x) => x.robotId === s.robots[1]!.robotId)).toMatchObject({ outcome: 'rejected', error: expect.stringContaining('does not apply field rules') });
    // Persisted all the same.
    expect((await call(s, 'GET', `${base()}/${directiveId}`, ro)).json.ruleSetVersion).toBe((r.json.fieldRule as any).ruleSetVersion);
    await plain.stop();
    await until(() => !s.link.link.isOnline(s.robots[1]!.robotId), 'plain agent offline');
  });

  it('a robot connecting later receives the current set before the commands waiting in its outbox', async () => {
    const late = s.robots[2]!;
    const stop = await call(s, 'POST', '/v1/agent/control-robot', s.keys.control, { org_id: s.orgId, fleet_id: s.fleetId, action: 'stop', robot_ids: [late.robotId] });
    expect(stop.status).toBe(200);
    const order: string[] = [];
    let received: FieldRuleSet | null = null;
    const a = s.agent(late, {
      onFieldRules: (set) => {
        order.push(`rules:${set.version}`);
        received = set;
        return { applied: true };
      },
      onCommand: (cmd) => {
        order.push(`command:${cmd.action.case ?? ''}`);
        return { accept: true };
      },
    });
    a.start();
    await until(() => order.some((o) => o.startsWith('command:')), 'deferred stop delivered');
    expect(order[0]).toMatch(/^rules:\d+$/);
    expect(order.indexOf('command:stop')).toBeGreaterThan(0);
    expect(received!.rules.map((r) => r.directiveId).sort()).toHaveLength(2);
    await a.stop();
  });

  it('a create retried with the same Idempotency-Key answers the first answer and creates one rule', async () => {
    const send = () => fetch(`${s.http.url}/v1/agent/upsert-field-rule`, {
      method: 'POST',
      headers: { authorization: `Bearer ${rw}`, 'content-type': 'application/json', 'idempotency-key': 'fr-create-1' },
      body: JSON.stringify({ org_id: s.orgId, fleet_id: s.fleetId, field_rule: speedRule({ name: 'Gate', enabled: false }) }),
    });
    const first = await send();
    const again = await send();
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const a = (await first.json()) as any;
    const b = (await again.json()) as any;
    expect(b.fieldRule.directiveId).toBe(a.fieldRule.directiveId);
    const gates = ((await call(s, 'GET', `${base()}?enabled=false`, ro)).json.items as any[]).filter((i) => i.name === 'Gate');
    expect(gates).toHaveLength(1);
    expect((await call(s, 'DELETE', `${base()}/${a.fieldRule.directiveId}`, rw)).status).toBe(200);
  });

  it('strict input: 400 naming the field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [speedRule({ parameters: {} }), 'field_rule.parameters.max_speed_mps'],
      [speedRule({ parameters: { max_speed_mps: 0.5, wait_s: 3 } }), 'field_rule.parameters.wait_s'],
      [speedRule({ type: 'no_entry' }), 'field_rule.type'],
      [speedRule({ colour: 'red' }), 'colour'],
      [speedRule({ parameters: { max_speed_mps: 0 } }), 'field_rule.parameters.max_speed_mps'],
      [{ name: 'W', type: 'stop_and_wait', geometry: square(5, 52), parameters: {} }, 'field_rule.parameters.wait_s'],
      [speedRule({ geometry: { type: 'Polygon', coordinates: [[[5, 52], [5.1, 52], [5.1, 52.1], [5, 52.1]]] } }), 'field_rule.geometry'],
    ];
    for (const [rule, field] of cases) {
      const r = await upsert({ field_rule: rule });
      expect(r.status, JSON.stringify(rule)).toBe(400);
      expect(r.json.code).toBe('bad_request');
      expect(r.json.error).toContain(field);
    }
    const badId = await call(s, 'GET', `${base()}/not-a-uuid`, ro);
    expect(badId.status).toBe(400);
    expect(badId.json.error).toContain('directive_id');
  });

  it('another organization\'s or fleet\'s rule is 404; permissions are features:read / features:write', async () => {
    expect((await call(s, 'GET', `${foreignPath}/${directiveId}`, foreign)).status).toBe(404);
    expect((await call(s, 'DELETE', `${foreignPath}/${directiveId}`, foreign)).status).toBe(404);
    const otherFleet = `/v1/orgs/${s.orgId}/fleets/${s.otherFleetId}/field-rules/${directiveId}`;
    expect((await call(s, 'GET', otherFleet, rw)).status).toBe(404);
    const unknown = await upsert({ directive_id: '00000000-0000-4000-8000-000000000000', field_rule: speedRule() });
    expect(unknown.status).toBe(404);
    expect((await upsert({ field_rule: speedRule() }, ro)).status).toBe(403);
    expect((await call(s, 'GET', base(), s.keys.write)).status).toBe(403);
  });

  it('every change is on the rule\'s event timeline, with its delivery outcome', async () => {
    const ev = await call(s, 'GET', `/v1/events?fleet_id=${s.fleetId}&correlation_id=${directiveId}`, rw);
    expect(ev.status).toBe(200);
    const kinds = (ev.json.items as { kind: string }[]).map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining([
      'field_rule.created', 'field_rule.delivered', 'field_rule.updated', 'field_rule.disabled', 'field_rule.enabled', 'field_rule.delivery_incomplete',
    ]));
    expect(kinds.indexOf('field_rule.created')).toBeLessThan(kinds.indexOf('field_rule.delivered'));
  });

  it('rules survive a restart and robots receive them again; delete publishes the set without the rule', async () => {
    await s.restart();
    const got = await call(s, 'GET', `${base()}/${directiveId}`, ro);
    expect(got.status).toBe(200);
    await until(() => s.link.link.isOnline(s.robots[0]!.robotId), 'sim robot back online');
    const del = await call(s, 'DELETE', `${base()}/${directiveId}`, rw);
    expect(del.status).toBe(200);
    expect((del.json.delivery as any).robots).toEqual([{ robotId: s.robots[0]!.robotId, outcome: 'applied', error: null }]);
    expect((await call(s, 'GET', `${base()}/${directiveId}`, ro)).status).toBe(404);
    expect((await call(s, 'DELETE', `${base()}/${directiveId}`, rw)).status).toBe(404);
  });
});
