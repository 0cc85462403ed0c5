// Delivery guarantees and the audit trail through the real HTTP stack (uWS + router + command service
// + gRPC robot link + LMDB) with real agents: deferred commands across a gateway restart, retry
// budget exhaustion observable after timed_out, the audit log (filters, paging, cursors, retention)
// and reading a command back by id.
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ControlRobotResponse } from '../../src/api/schemas/control-robot.js';
import { canonicalJson } from '../../src/commands/digest.js';
import type { Command } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { call, startStack, until, type Stack } from './http-harness.js';

// Bounds, not waits (every wait in here ends on a condition): a gateway restart and robots on a loaded
// 2-core machine take several times longer than on an idle one (over 30 s beside four CPU hogs).
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

let s: Stack | null = null;
afterEach(async () => {
  await s?.close();
  s = null;
});

const control = (st: Stack, body: Record<string, unknown>) =>
  call(st, 'POST', '/v1/agent/control-robot', st.keys.write, { org_id: st.orgId, fleet_id: st.fleetId, ...body });
const firstCommandId = (r: { json: Record<string, unknown> }): string => (r.json as unknown as ControlRobotResponse).outcomes[0]?.delivery?.commandId ?? '';

describe('delivery', () => {
  it('keeps deferred stops across a gateway restart and sends them on reconnect, in order', async () => {
    s = await startStack(1);
    const st = s;
    const robotId = st.robots[0]!.robotId;
    const ids: string[] = [];
    for (const reason of ['one', 'two', 'three']) {
      const r = await control(st, { action: 'stop', robot_id: robotId, reason });
      expect((r.json as unknown as ControlRobotResponse).outcomes[0]?.delivery?.state).toBe('deferred');
      ids.push(firstCommandId(r));
    }
    await st.restart();
    const got: Command[] = [];
    const a = st.agent(st.robots[0]!, { onCommand: (c) => (got.push(c), { accept: true }) });
    a.start();
    await until(() => got.length === 3, 'backlog delivered');
    expect(got.map((c) => (c.action.case === 'stop' ? c.action.value.reason : ''))).toEqual(['one', 'two', 'three']);
    expect(got.map((c) => c.commandId)).toEqual(ids);
    for (const id of ids) {
      await until(async () => (await call(st, 'GET', `/v1/robot-commands/${id}`, st.keys.read)).json.state === 'agent_received', 'acked');
    }
    const rec = await call(st, 'GET', `/v1/robot-commands/${ids[0]}`, st.keys.read);
    expect((rec.json.history as { state: string }[]).map((h) => h.state)).toEqual(['deferred', 'dispatched', 'agent_received']);
  });

  it('reports timed_out, keeps resending in the background, and shows retryBudgetExhausted afterwards', async () => {
    s = await startStack(1, { retry: { ackTimeoutMs: 60, maxIntervalMs: 60, maxAttempts: 3, tickMs: 10 } });
    const st = s;
    let calls = 0;
    // The handler never finishes: no ack ever comes; resends are recognised as duplicates.
    const a = st.agent(st.robots[0]!, { onCommand: () => (calls++, new Promise(() => {})) });
    a.start();
    await until(() => a.connected, 'agent');
    // A start: non-urgent commands have a retry budget (a stop is resent until acknowledged).
    const r = await control(st, { action: 'start', robot_id: st.robots[0]!.robotId, wait_for_ack_ms: 30 });
    const o = (r.json as unknown as ControlRobotResponse).outcomes[0];
    expect(r.status).toBe(200);
    expect(o?.delivery).toMatchObject({ state: 'timed_out', retryBudgetExhausted: false });
    const id = o?.delivery?.commandId ?? '';
    await until(async () => (await call(st, 'GET', `/v1/robot-commands/${id}`, st.keys.read)).json.retryBudgetExhausted === true, 'budget spent');
    const rec = await call(st, 'GET', `/v1/robot-commands/${id}`, st.keys.read);
    expect(rec.json).toMatchObject({ state: 'dispatched', attempts: 3, delivery: { state: 'dispatched', retryBudgetExhausted: true } });
    expect(calls).toBe(1);
    expect(a.stats().duplicateCommands).toBe(2);
  });
});

describe('audit log', () => {
  it('records who, key, robot, action, argument digest and every state change; filters, pages, binds cursors', async () => {
    s = await startStack(2);
    const st = s;
    const sim = st.sim([st.robots[0]!, st.robots[1]!]);
    await until(() => sim.stats().connected === 2, 'online');
    const [r0, r1] = [st.robots[0]!.robotId, st.robots[1]!.robotId];
    const nested = async (robotId: string, route: string, body: unknown) => {
      const res = await call(st, 'POST', `/v1/orgs/${st.orgId}/fleets/${st.fleetId}/robots/${robotId}/${route}`, st.keys.write, body);
      expect(res.status, JSON.stringify(res.json)).toBe(200);
      return res;
    };
    // Entries written before and after it get distinct timestamps for the time filters.
    const clockMovedOn = async (): Promise<void> => {
      const t = Date.now();
      await until(() => Date.now() > t, 'the clock to move on');
    };
    const t0 = Date.now();
    await nested(r0, 'mode', { mode: 'manual', wait_for_ack: true });
    await clockMovedOn();
    const t1 = Date.now();
    await nested(r0, 'settings', { settings: { max_speed_mps: 1.5 }, wait_for_ack: true });
    await clockMovedOn();
    await control(st, { action: 'stop', robot_id: r1, wait_for_ack: true });
    await clockMovedOn();
    await nested(r0, 'go-to', { latitude: 52.0001, longitude: 5.0001, wait_for_ack: true });

    const url = (q: string) => `/v1/audit-log?fleet_id=${st.fleetId}${q}`;
    // An answer after the robot's ack may leave before the LMDB commit (see the service's durability
    // note); the entry is readable once committed, a few ms later.
    await until(async () => ((await call(st, 'GET', url(''), st.keys.fleetRead)).json.items as unknown[]).length === 4, 'four entries');
    const all = await call(st, 'GET', url(''), st.keys.fleetRead);
    expect(all.status).toBe(200);
    const items = all.json.items as Record<string, unknown>[];
    expect(items.map((i) => i.action)).toEqual(['go_to', 'stop', 'update_settings', 'mode']);
    expect(all.json.next_cursor).toBeNull();
    const mode = items[3]!;
    expect(mode).toMatchObject({ robotId: r0, fleetId: st.fleetId, requestedBy: { actorType: 'api_key', apiKeyId: st.keys.writeId }, state: 'agent_received' });
    expect(mode.argsDigest).toBe(createHash('sha256').update(canonicalJson({ mode: 'manual' })).digest('hex'));
    expect((mode.history as { state: string; atMs: number }[]).map((h) => h.state)).toEqual(['dispatched', 'agent_received']);
    expect((mode.history as { atMs: number }[])[0]!.atMs).toBeGreaterThanOrEqual(t0);
    expect(mode).not.toHaveProperty('args');

    const robot = await call(st, 'GET', url(`&robot_id=${r0}`), st.keys.fleetRead);
    expect((robot.json.items as { action: string }[]).map((i) => i.action)).toEqual(['go_to', 'update_settings', 'mode']);
    const range = await call(st, 'GET', url(`&from_ms=${t1}`), st.keys.fleetRead);
    expect((range.json.items as { action: string }[]).map((i) => i.action)).toEqual(['go_to', 'stop', 'update_settings']);
    const before = await call(st, 'GET', url(`&to_ms=${t1}`), st.keys.fleetRead);
    expect((before.json.items as { action: string }[]).map((i) => i.action)).toEqual(['mode']);

    const p1 = await call(st, 'GET', url('&limit=3'), st.keys.fleetRead);
    expect((p1.json.items as unknown[]).length).toBe(3);
    const cursor = String(p1.json.next_cursor);
    const p2 = await call(st, 'GET', url(`&limit=3&cursor=${cursor}`), st.keys.fleetRead);
    expect((p2.json.items as { action: string }[]).map((i) => i.action)).toEqual(['mode']);
    expect(p2.json.next_cursor).toBeNull();
    const reused = await call(st, 'GET', url(`&limit=3&robot_id=${r0}&cursor=${cursor}`), st.keys.fleetRead);
    expect(reused.status).toBe(400);
    expect(reused.json.code).toBe('bad_request');
    expect((await call(st, 'GET', url('&cursor=garbage'), st.keys.fleetRead)).status).toBe(400);

    expect((await call(st, 'GET', url(''), st.keys.read)).status).toBe(403);
    expect((await call(st, 'GET', url(''), st.keys.foreign)).status).toBe(404);
    const other = await call(st, 'GET', `/v1/audit-log?fleet_id=${st.otherFleetId}`, st.keys.fleetRead);
    expect(other.json.items).toEqual([]);
  });

  it('reads one command back by id; another organization cannot see it', async () => {
    s = await startStack(1);
    const st = s;
    const r = await control(st, { action: 'stop', robot_id: st.robots[0]!.robotId });
    const id = firstCommandId(r);
    const mine = await call(st, 'GET', `/v1/robot-commands/${id}`, st.keys.write);
    expect(mine.json).toMatchObject({ commandId: id, action: 'stop', args: { reason: 'control-robot stop' }, delivery: { state: 'deferred', commandId: id } });
    const readOnly = await call(st, 'GET', `/v1/robot-commands/${id}`, st.keys.read);
    expect(readOnly.json).toMatchObject({ commandId: id, args: null, argsDigest: mine.json.argsDigest });
    expect((await call(st, 'GET', `/v1/robot-commands/${id}`, st.keys.foreign)).status).toBe(404);
    expect((await call(st, 'GET', `/v1/robot-commands/${id}`, st.keys.fleetRead)).status).toBe(403);
  });

  it('drops entries past the retention, keeping commands still owed to a robot', async () => {
    s = await startStack(2);
    const st = s;
    const sim = st.sim([st.robots[0]!]);
    await until(() => sim.stats().connected === 1, 'online');
    await control(st, { action: 'stop', robot_id: st.robots[0]!.robotId, wait_for_ack: true });
    const deferred = firstCommandId(await control(st, { action: 'stop', robot_id: st.robots[1]!.robotId }));
    await until(async () => ((await call(st, 'GET', `/v1/audit-log?fleet_id=${st.fleetId}`, st.keys.fleetRead)).json.items as unknown[]).length === 2, 'both entries');
    const removed = await st.svc.audit.sweep(Date.now() + 31 * 24 * 3600 * 1000, (id) => st.svc.get(id)?.state === 'deferred');
    expect(removed).toBe(1);
    const left = await call(st, 'GET', `/v1/audit-log?fleet_id=${st.fleetId}`, st.keys.fleetRead);
    expect((left.json.items as { commandId: string }[]).map((i) => i.commandId)).toEqual([deferred]);
  });
});
