// The control-robot and nested command matrix through the real HTTP stack (uWS + router + command
// service + gRPC robot link) with simulated robots: every action x online/offline x permission,
// bulk 200/207/502, policy rejection (never sent), agent rejection, inactive robots.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ControlRobotResponse } from '../../src/api/schemas/control-robot.js';
import { simPolicy, type SimFleet } from '../../src/sim/index.js';
import { call, startStack, until, untilPoliciesCompiled, type Stack } from './http-harness.js';

// Bounds, not waits (every wait in here ends on a condition): a gateway and simulated robots on a
// loaded 2-core machine (.ci/load-check.sh) take several times longer than on an idle one.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

let s: Stack;
let fleet: SimFleet;
beforeEach(async () => {
  s = await startStack(3);
  // r0, r1 online (simulated); r2 stays offline.
  fleet = s.sim([s.robots[0]!, s.robots[1]!]);
  await until(() => s.link.link.isOnline(s.robots[0]!.robotId) && s.link.link.isOnline(s.robots[1]!.robotId), 'sim robots online');
  await untilPoliciesCompiled(s, [s.robots[0]!.robotId, s.robots[1]!.robotId]);
});
afterEach(async () => {
  await s.close();
});

const on = (): string => s.robots[0]!.robotId;
const on2 = (): string => s.robots[1]!.robotId;
const off = (): string => s.robots[2]!.robotId;
const model = (i: number) => fleet.robots[i]!.model;
const control = (body: Record<string, unknown>, key = s.keys.write) =>
  call(s, 'POST', '/v1/agent/control-robot', key, { org_id: s.orgId, fleet_id: s.fleetId, ...body });
const nested = (robotId: string, route: string, body: Record<string, unknown>, key = s.keys.write) =>
  call(s, 'POST', `/v1/orgs/${s.orgId}/fleets/${s.fleetId}/robots/${robotId}/${route}`, key, body);
const outcomes = (r: { json: Record<string, unknown> }) => (r.json as unknown as ControlRobotResponse).outcomes;

/** Extra body fields per action, and what the simulated robot shows once it applied the command. */
const ACTIONS: { action: string; extra: Record<string, unknown>; key?: 'control'; applied: (i: number) => boolean }[] = [
  { action: 'stop', extra: {}, applied: (i) => model(i).phase === 'stopped' },
  { action: 'mode', extra: { mode: 'docking' }, applied: (i) => model(i).commandedMode === 'docking' },
  { action: 'invoke_action', extra: { action_name: 'beep', arguments: { durationMs: 100 } }, applied: (i) => model(i).invokedActions.at(-1)?.name === 'beep' },
  { action: 'update_settings', extra: { settings: { max_speed_mps: 0.5, lights_enabled: true } }, applied: (i) => model(i).settings.max_speed_mps === 0.5 },
  { action: 'release', extra: {}, key: 'control', applied: (i) => model(i).commandedMode === 'autonomous' && model(i).goal === null },
  { action: 'force_reset', extra: {}, key: 'control', applied: (i) => model(i).stopReason === 'reset' },
  { action: 'start', extra: {}, applied: (i) => model(i).phase !== 'stopped' },
];

describe('control-robot: every action, online', () => {
  it.each(ACTIONS)('$action reaches an online robot, is acknowledged and applied', async ({ action, extra, key, applied }) => {
    if (action === 'start') model(0).stop('before start');
    if (action === 'release') model(0).setMode('manual');
    const res = await control({ action, robot_id: on(), wait_for_ack: true, ...extra }, key ? s.keys[key] : s.keys.write);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    const o = outcomes(res)[0];
    expect(o?.success).toBe(true);
    expect(o?.delivery?.state).toBe('agent_received');
    expect(applied(0)).toBe(true);
  });
});

describe('control-robot: every action, offline', () => {
  it('stop is deferred for an offline robot and sent when it connects', async () => {
    const res = await control({ action: 'stop', robot_id: off() });
    expect(res.status).toBe(200);
    expect(outcomes(res)[0]?.delivery?.state).toBe('deferred');
    const late = s.sim([s.robots[2]!]);
    await until(() => late.robots[0]!.model.phase === 'stopped', 'deferred stop applied on connect');
    const id = outcomes(res)[0]?.delivery?.commandId ?? '';
    await until(async () => (await call(s, 'GET', `/v1/robot-commands/${id}`, s.keys.write)).json.state === 'agent_received', 'received');
  });

  it.each(ACTIONS.filter((a) => a.action !== 'stop'))('$action fails for an offline robot with unavailable and nothing is kept', async ({ action, extra, key }) => {
    const res = await control({ action, robot_id: off(), ...extra }, key ? s.keys[key] : s.keys.write);
    expect(res.status).toBe(502);
    expect(res.json.code).toBe('unavailable');
    const o = outcomes(res)[0];
    expect(o).toMatchObject({ robotId: off(), success: false, error: { code: 'unavailable' } });
    expect(o?.delivery).toBeUndefined();
    expect(s.svc.stats().pending).toBe(0);
  });
});

describe('control-robot: permissions and request rules', () => {
  it.each(['release', 'force_reset'])('%s needs operations:control besides robots:write', async (action) => {
    const denied = await control({ action, robot_id: on() });
    expect(denied.status).toBe(403);
    expect(denied.json.code).toBe('forbidden');
    expect(fleet.robots[0]!.agent.stats().commandsApplied).toBe(0);
    expect((await control({ action, robot_id: on() }, s.keys.control)).status).toBe(200);
  });

  it.each(ACTIONS)('$action needs robots:write', async ({ action, extra }) => {
    const res = await control({ action, robot_id: on(), ...extra }, s.keys.read);
    expect(res.status).toBe(403);
  });

  it('force_reset takes exactly one robot', async () => {
    const res = await control({ action: 'force_reset', robot_ids: [on(), on2()] }, s.keys.control);
    expect(res.status).toBe(400);
    expect(res.json.error).toBe('force_reset takes exactly one robot.');
    expect(model(0).stopReason).toBe('');
  });

  it('stop_all takes no robot list and stops every active robot of the fleet (offline ones deferred)', async () => {
    expect((await control({ action: 'stop_all', robot_id: on() })).status).toBe(400);
    expect((await control({ action: 'stop_all', robot_ids: [] })).status).toBe(400);
    const res = await control({ action: 'stop_all', wait_for_ack_ms: 2000 });
    expect(res.status).toBe(200);
    const byRobot = new Map(outcomes(res).map((o) => [o.robotId, o.delivery]));
    expect([...byRobot.keys()].sort()).toEqual([on(), on2(), off()].sort());
    expect(byRobot.get(off())?.state).toBe('deferred');
    // The wait for the online robots' acks is 2 s; a loaded machine may answer `dispatched` first.
    for (const robotId of [on(), on2()]) {
      const id = byRobot.get(robotId)?.commandId ?? '';
      await until(async () => (await call(s, 'GET', `/v1/robot-commands/${id}`, s.keys.write)).json.state === 'agent_received', `stop_all acknowledged by ${robotId}`, 30_000);
    }
    expect(model(0).phase).toBe('stopped');
    expect(model(1).phase).toBe('stopped');
  });

  it('requires the action field of mode / invoke_action / update_settings and refuses foreign ones', async () => {
    expect((await control({ action: 'mode', robot_id: on() })).json.error).toBe('Action mode needs mode.');
    expect((await control({ action: 'invoke_action', robot_id: on() })).json.error).toBe('Action invoke_action needs action_name.');
    expect((await control({ action: 'update_settings', robot_id: on() })).json.error).toBe('Action update_settings needs settings.');
    const wrong = await control({ action: 'stop', robot_id: on(), mode: 'manual' });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error).toBe('Action stop does not take mode.');
    expect(s.svc.stats().pending).toBe(0);
  });
});

describe('control-robot: bulk outcomes', () => {
  it('answers 200 when all succeed, 207 when mixed, 502 when all fail, one outcome per robot in order', async () => {
    const all = await control({ action: 'mode', mode: 'manual', robot_ids: [on(), on2()], wait_for_ack: true });
    expect(all.status).toBe(200);
    expect(all.json).toMatchObject({ success: true, action: 'mode', count: 2 });
    const mixed = await control({ action: 'mode', mode: 'autonomous', robot_id: off(), robot_ids: [on()], wait_for_ack: true });
    expect(mixed.status).toBe(207);
    expect(mixed.json).toMatchObject({ success: false, count: 2, code: 'partial_failure' });
    expect(outcomes(mixed).map((o) => [o.robotId, o.success])).toEqual([[off(), false], [on(), true]]);
    const none = await control({ action: 'mode', mode: 'autonomous', robot_ids: [off(), s.otherRobot.robotId] });
    expect(none.status).toBe(502);
    expect(outcomes(none).map((o) => o.error?.code)).toEqual(['unavailable', 'not_found']);
  });

  it('starts every dispatch before collecting any acknowledgement', async () => {
    const slow = [s.robots[2]!, s.inactive];
    // Each robot's handler holds its ack until the other robot's handler has been called too: with
    // serial ack waits the second command would only be sent after the first ack, so the first
    // handler gives up (after 10 s) and records that it never saw the other command.
    let entered = 0;
    const overlapped: boolean[] = [];
    const agents = slow.map((c) => s.agent(c, {
      onCommand: async () => {
        entered++;
        overlapped.push(await until(() => entered === slow.length, 'the other robot\'s command', 10_000).then(() => true, () => false));
        return { accept: true };
      },
    }));
    for (const a of agents) a.start();
    await until(() => agents.every((a) => a.connected), 'slow agents connected');
    const res = await control({ action: 'stop', robot_ids: slow.map((c) => c.robotId), wait_for_ack_ms: 20_000 });
    expect(outcomes(res).map((o) => o.delivery?.state)).toEqual(['agent_received', 'agent_received']);
    expect(overlapped).toEqual([true, true]);
  }, 40_000);
});

describe('command policy', () => {
  it('rejects a command outside the robot policy with policy_rejected, and never sends it', async () => {
    const before = fleet.robots[0]!.agent.stats();
    const cases: [string, Record<string, unknown>, string][] = [
      ['mode', { mode: 'dance' }, 'mode dance is not among the allowed modes'],
      ['invoke-service', { action_name: 'self_destruct' }, 'action self_destruct is not advertised'],
      ['invoke-service', { action_name: 'beep', arguments: { durationMs: 99999 } }, 'arguments of beep do not match its schema'],
      ['invoke-service', { action_name: 'beep', arguments: {} }, 'arguments of beep do not match its schema'],
      ['invoke-service', { action_name: 'dump_diagnostics', arguments: { x: 1 } }, 'arguments of dump_diagnostics'],
      ['settings', { settings: { max_speed_mps: 9 } }, 'setting max_speed_mps must be at most 3'],
      ['settings', { settings: { lights_enabled: 'yes' } }, 'setting lights_enabled must be a boolean'],
      ['settings', { settings: { obstacle_sensitivity: 'extreme' } }, 'must be one of low, medium, high'],
      ['settings', { settings: { turbo: true } }, 'setting turbo is not advertised'],
      ['go-to', { latitude: 52.5, longitude: 5 }, 'outside the robot\'s go-to area'],
    ];
    for (const [route, body, reason] of cases) {
      const res = await nested(on(), route, { ...body, wait_for_ack: true });
      expect(res.status, `${route} ${JSON.stringify(body)}`).toBe(422);
      expect(res.json.code).toBe('policy_rejected');
      expect(res.json.error).toContain(reason);
    }
    const bulk = await control({ action: 'mode', mode: 'dance', robot_ids: [on(), on2()] });
    expect(bulk.status).toBe(502);
    expect(outcomes(bulk).map((o) => o.error?.code)).toEqual(['policy_rejected', 'policy_rejected']);
    expect(s.svc.stats().pending).toBe(0);
    const audit = await call(s, 'GET', `/v1/audit-log?fleet_id=${s.fleetId}`, s.keys.write);
    expect(audit.json.items).toEqual([]);
    // A command inside the policy, sent after them on the same stream: once the robot acknowledged
    // it, any of the refused ones that had been sent would have arrived before it.
    expect((await nested(on(), 'mode', { mode: 'manual', wait_for_ack: true })).status).toBe(200);
    const after = fleet.robots[0]!.agent.stats();
    expect(after.commandsApplied).toBe(before.commandsApplied + 1);
    expect(after.commandsRejected).toBe(before.commandsRejected);
  });

  it('accepts commands inside the policy on the nested routes, and the robot applies them', async () => {
    const mode = await nested(on(), 'mode', { mode: 'manual', wait_for_ack: true });
    expect(mode.status).toBe(200);
    expect(mode.json).toMatchObject({ success: true, robotId: on(), action: 'mode', delivery: { state: 'agent_received' } });
    expect((await nested(on(), 'invoke-service', { action_name: 'set_lights', arguments: { on: true, color: 'amber' }, wait_for_ack: true })).status).toBe(200);
    expect(model(0).invokedActions.at(-1)).toEqual({ name: 'set_lights', arguments: { on: true, color: 'amber' } });
    expect((await nested(on(), 'invoke-service', { action_name: 'dump_diagnostics', wait_for_ack: true })).status).toBe(200);
    expect((await nested(on(), 'settings', { settings: { obstacle_sensitivity: 'high' }, wait_for_ack: true })).status).toBe(200);
    expect(model(0).settings.obstacle_sensitivity).toBe('high');
    const target = { latitude: 52.0002, longitude: 5.0003 };
    const go = await nested(on(), 'go-to', { ...target, heading_deg: 90, max_speed_mps: 1, wait_for_ack: true });
    expect(go.status).toBe(200);
    expect(model(0).commandedMode).toBe('manual');
    expect(model(0).goal?.maxSpeedMps).toBe(1);
  });

  it('compiles one policy for robots advertising the same one, also across reconnects', async () => {
    // Once (more often only when a loaded machine cut a compile short: that one is not kept); a
    // further robot advertising the same policy compiles nothing.
    const compiled = s.svc.stats().policiesCompiled;
    expect(compiled).toBeGreaterThanOrEqual(1);
    const late = s.sim([s.robots[2]!]);
    await until(() => late.stats().connected === 1, 'third robot');
    await untilPoliciesCompiled(s, [s.robots[2]!.robotId]);
    expect(s.svc.stats().policiesCompiled).toBe(compiled);
  });

  it('a robot without a policy accepts stop, start, release and force_reset only', async () => {
    const a = s.agent(s.robots[2]!, {});
    a.start();
    await until(() => a.connected, 'bare agent');
    for (const action of ['stop', 'start', 'release', 'force_reset']) {
      const res = await control({ action, robot_id: off(), wait_for_ack: true }, s.keys.control);
      expect(res.status, action).toBe(200);
    }
    for (const [route, body] of [['mode', { mode: 'manual' }], ['invoke-service', { action_name: 'beep' }], ['settings', { settings: { a: 1 } }], ['go-to', { latitude: 52, longitude: 5 }]] as const) {
      const res = await nested(off(), route, body);
      expect(res.status, route).toBe(422);
      expect(res.json.error).toContain('advertised no command policy');
    }
  });

  it('an inactive robot accepts only stop', async () => {
    const a = s.agent(s.inactive, {});
    a.start();
    await until(() => a.connected, 'inactive agent');
    const mode = await nested(s.inactive.robotId, 'mode', { mode: 'manual' });
    expect(mode.status).toBe(409);
    expect(mode.json.code).toBe('conflict');
    const start = await control({ action: 'start', robot_id: s.inactive.robotId });
    expect(outcomes(start)[0]?.error?.code).toBe('conflict');
    const stop = await control({ action: 'stop', robot_id: s.inactive.robotId, wait_for_ack: true });
    expect(outcomes(stop)[0]?.delivery?.state).toBe('agent_received');
  });

  it('an agent rejection is a failure outcome (control-robot) and a 422 (nested)', async () => {
    const a = s.agent(s.robots[2]!, {
      policy: simPolicy(),
      onCommand: (cmd) => (cmd.action.case === 'stop' ? { accept: true } : { accept: false, reason: 'estop engaged' }),
    });
    a.start();
    await until(() => a.connected, 'rejecting agent');
    await untilPoliciesCompiled(s, [off()]);
    const bulk = await control({ action: 'mode', mode: 'manual', robot_ids: [off(), on()], wait_for_ack: true });
    expect(bulk.status).toBe(207);
    expect(outcomes(bulk)[0]).toMatchObject({ success: false, error: { code: 'policy_rejected' }, delivery: { state: 'agent_rejected' } });
    expect(outcomes(bulk)[0]?.error?.message).toContain('estop engaged');
    const single = await nested(off(), 'mode', { mode: 'manual', wait_for_ack: true });
    expect(single.status).toBe(422);
    expect(single.json).toMatchObject({ code: 'policy_rejected', details: { delivery: { state: 'agent_rejected' } } });
  });

  it('a robot of another fleet is not found on the nested routes', async () => {
    const res = await nested(s.otherRobot.robotId, 'mode', { mode: 'manual' });
    expect(res.status).toBe(404);
    const foreign = await nested(on(), 'mode', { mode: 'manual' }, s.keys.foreign);
    expect(foreign.status).toBe(403);
  });
});
