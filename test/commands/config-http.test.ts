// Request/response operations (config, onboard-settings) through the real HTTP stack: a write
// succeeds only after the robot reports its result; opt-in; time-outs stay observable.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { create } from '@bufbuild/protobuf';
import { CommandPolicySchema } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import type { Command } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import type { SimFleet } from '../../src/sim/index.js';
import { call, startStack, until, untilPoliciesCompiled, type Stack } from './http-harness.js';

let s: Stack;
let fleet: SimFleet;
beforeEach(async () => {
  s = await startStack(3);
  // r0 opted in; r1 did not opt into remote configuration; r2 offline.
  fleet = s.sim([s.robots[0]!, s.robots[1]!], { noRemoteConfig: (i) => i === 1 });
  await until(() => fleet.stats().connected === 2, 'sim robots online');
  await untilPoliciesCompiled(s, [s.robots[0]!.robotId, s.robots[1]!.robotId]);
});
afterEach(async () => {
  await s.close();
});

const path = (robotId: string, what: string): string => `/v1/orgs/${s.orgId}/fleets/${s.fleetId}/robots/${robotId}/${what}`;

describe.each(['config', 'onboard-settings'])('%s', (what) => {
  const state = (i: number) => (what === 'config' ? fleet.robots[i]!.commands.state.config : fleet.robots[i]!.commands.state.onboard);
  const key = what === 'config' ? 'site_name' : 'language';

  it('reads the values the robot reports (robots:read suffices)', async () => {
    const res = await call(s, 'GET', path(s.robots[0]!.robotId, what), s.keys.read);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ robotId: s.robots[0]!.robotId, values: state(0) });
    expect(typeof res.json.commandId).toBe('string');
  });

  it('writes only after the robot reported success, and answers with the robot\'s new values', async () => {
    expect((await call(s, 'POST', path(s.robots[0]!.robotId, what), s.keys.read, { values: { [key]: 'x' } })).status).toBe(403);
    const res = await call(s, 'POST', path(s.robots[0]!.robotId, what), s.keys.write, { values: { [key]: 'north-yard' } });
    expect(res.status).toBe(200);
    expect((res.json.values as Record<string, unknown>)[key]).toBe('north-yard');
    expect(state(0)[key]).toBe('north-yard');
    const cmd = await call(s, 'GET', `/v1/robot-commands/${String(res.json.commandId)}`, s.keys.read);
    expect(cmd.json).toMatchObject({ action: what === 'config' ? 'config' : 'onboard_settings', state: 'agent_received', result: { success: true } });
    // A read-only key sees the digest, not the values that were sent; a key that may send sees them.
    expect(cmd.json.args).toBeNull();
    expect(cmd.json.argsDigest).toMatch(/^[0-9a-f]{64}$/);
    const asWriter = await call(s, 'GET', `/v1/robot-commands/${String(res.json.commandId)}`, s.keys.write);
    expect(JSON.stringify(asWriter.json.args)).toContain('north-yard');
  });

  it('fails a write the robot refuses with 422 and the robot\'s reason', async () => {
    const res = await call(s, 'POST', path(s.robots[0]!.robotId, what), s.keys.write, { values: { no_such_key: 1 } });
    expect(res.status).toBe(422);
    expect(res.json).toMatchObject({ code: 'policy_rejected', details: { error: 'invalid_value' } });
  });

  it('gives a clear error when the robot has not opted in, and sends nothing', async () => {
    const before = fleet.robots[1]!.agent.stats().commandsApplied;
    const res = await call(s, 'GET', path(s.robots[1]!.robotId, what), s.keys.read);
    expect(res.status).toBe(422);
    expect(res.json.error).toMatch(/has not opted into (remote configuration|remote onboard settings)/);
    expect(fleet.robots[1]!.agent.stats().commandsApplied).toBe(before);
  });

  it('answers 503 for an offline robot', async () => {
    const res = await call(s, 'GET', path(s.robots[2]!.robotId, what), s.keys.read);
    expect(res.status).toBe(503);
    expect(res.json.code).toBe('unavailable');
  });
});

describe('a robot that does not answer in time', () => {
  it('gives 503 unavailable with the commandId, and the late result stays observable', async () => {
    const held: Command[] = [];
    const a = s.agent(s.robots[2]!, {
      policy: create(CommandPolicySchema, { remoteConfig: true }),
      onCommand: (cmd) => (held.push(cmd), { accept: true }),
    });
    a.start();
    await until(() => a.connected, 'silent agent');
    await untilPoliciesCompiled(s, [s.robots[2]!.robotId]);
    const res = await call(s, 'GET', `${path(s.robots[2]!.robotId, 'config')}?timeout_ms=300`, s.keys.read);
    expect(res.status).toBe(503);
    expect(res.json.code).toBe('unavailable');
    const commandId = String((res.json.details as Record<string, unknown>).commandId);
    expect(commandId).toBe(held[0]?.commandId);
    const pending = await call(s, 'GET', `/v1/robot-commands/${commandId}`, s.keys.read);
    expect(pending.json).toMatchObject({ state: 'agent_received', result: null });
    a.sendCommandResult({ commandId, success: true, payloadJson: JSON.stringify({ late: true }) });
    await until(async () => (await call(s, 'GET', `/v1/robot-commands/${commandId}`, s.keys.read)).json.result !== null, 'late result');
    const done = await call(s, 'GET', `/v1/robot-commands/${commandId}`, s.keys.read);
    expect(done.json.result).toMatchObject({ success: true, values: { late: true } });
  });

  it('ignores a result reported by another robot for a command it does not own', async () => {
    const a = s.agent(s.robots[2]!, { policy: create(CommandPolicySchema, { remoteConfig: true }) });
    a.start();
    await until(() => a.connected, 'agent');
    await untilPoliciesCompiled(s, [s.robots[2]!.robotId]);
    const res = await call(s, 'GET', `${path(s.robots[2]!.robotId, 'config')}?timeout_ms=200`, s.keys.read);
    const commandId = String((res.json.details as Record<string, unknown>).commandId);
    const foreign = s.svc.stats().foreignAcks;
    fleet.robots[0]!.agent.sendCommandResult({ commandId, success: true, payloadJson: '{"forged":true}' });
    // The service counts the forged report when it refuses it: then it has been handled.
    await until(() => s.svc.stats().foreignAcks > foreign, 'the forged result handled');
    expect((await call(s, 'GET', `/v1/robot-commands/${commandId}`, s.keys.read)).json.result).toBeNull();
  });
});
