// control-operation through the real HTTP stack: 404 before the first template, every action and its
// permission, operation_id assertion, state rules and run effects, roster rules 1-4.
import { describe, expect, it } from 'vitest';
import { ACTION_PERMISSION, OPERATION_ACTIONS } from '../../src/missions/catalog/operation-control.js';
import { LIVE_PERMISSIONS } from '../../src/auth/permissions.js';
import { req } from '../idempotency/harness.js';
import { RecordingEffects, catalogPerTest } from './catalog-support.js';

const setup = catalogPerTest();

describe('the fleet operation', () => {
  it('does not exist before the first template (404), then exactly one per fleet, created stopped', async () => {
    const c = await setup();
    expect(await c.op({ action: 'start' })).toMatchObject({ status: 404, json: { code: 'not_found', error: expect.stringContaining('no operation yet') } });
    const a = await c.template();
    const b = await c.template();
    expect(a.json.operationId).toBe(b.json.operationId);
    const started = await c.op({ action: 'start' });
    expect(started.status).toBe(200);
    expect(started.json).toMatchObject({ success: true, action: 'start', changed: true, runtimeSync: 'applied', operation: { operation_id: a.json.operationId, state: 'running', epoch: 0 } });
    expect(started.json.operation.name).toBe('Yard operation');
  });

  it('checks each action\'s permission', async () => {
    const c = await setup();
    const t = (await c.template({ roster: [] })).json.missionId;
    const extra: Record<string, Record<string, unknown>> = {
      enable_mission: { mission_id: t },
      disable_mission: { mission_id: t },
      assign_robot: { mission_id: t, robot_id: c.s.robots.active[0] },
      unassign_robot: { mission_id: t, robot_id: c.s.robots.active[0] },
    };
    for (const action of OPERATION_ACTIONS) {
      const needed = ACTION_PERMISSION[action];
      for (const p of LIVE_PERMISSIONS) {
        if (p === needed) continue;
        const r = await c.op({ action, ...extra[action] }, c.s.only[p]);
        expect(r.status, `${action} with ${p}`).toBe(403);
      }
      // abort_missions, reset and restart need a paused operation: pause first so the call succeeds.
      if (['abort_missions', 'reset', 'restart'].includes(action)) {
        await c.op({ action: 'start' });
        await c.op({ action: 'pause' });
      }
      const ok = await c.op({ action, ...extra[action] }, c.s.only[needed]);
      expect(ok.status, `${action} with ${needed}: ${JSON.stringify(ok.json)}`).toBe(200);
    }
    expect(ACTION_PERMISSION).toMatchObject({ start: 'operations:control', pause: 'operations:control', enable_mission: 'missions:write', assign_robot: 'missions:write', reset_decomposers: 'features:write' });
  });

  it('operation_id asserts the id: another one is 409, the right one passes', async () => {
    const c = await setup();
    const opId = (await c.template()).json.operationId;
    expect(await c.op({ action: 'start', operation_id: '00000000-0000-4000-8000-000000000000' })).toMatchObject({ status: 409, json: { code: 'conflict' } });
    expect((await c.op({ action: 'start', operation_id: opId })).status).toBe(200);
    expect((await c.op({ action: 'start', operation_id: 'nope' })).status).toBe(400);
  });

  it('pause stops assignment and pauses runs; start resumes both; abort_missions needs paused', async () => {
    const c = await setup();
    const t = (await c.template()).json.missionId;
    const fx = new RecordingEffects();
    c.runtime().setRunEffects(fx);
    await c.op({ action: 'start' });
    expect(c.runtime().isDispatchable(c.s.fleetId, t)).toBe(true);
    expect(await c.op({ action: 'abort_missions' })).toMatchObject({ status: 409, json: { code: 'conflict', error: expect.stringContaining('paused') } });
    const paused = await c.op({ action: 'pause' });
    expect(paused.json).toMatchObject({ operation: { state: 'paused' }, runs: { effect: 'pause', attached: true, applied: true } });
    expect(c.runtime().isDispatchable(c.s.fleetId, t)).toBe(false);
    expect(c.runtime().blockedReason(c.s.fleetId, t)).toBe('operation_paused');
    const aborted = await c.op({ action: 'abort_missions' });
    expect(aborted.json).toMatchObject({ operation: { state: 'paused' }, runs: { effect: 'abort', applied: true } });
    const resumed = await c.op({ action: 'start' });
    expect(resumed.json).toMatchObject({ operation: { state: 'running' }, runs: { effect: 'resume', applied: true } });
    expect(c.runtime().isDispatchable(c.s.fleetId, t)).toBe(true);
    expect(fx.calls).toEqual([`pause:${c.s.fleetId}`, `abort:${c.s.fleetId}`, `resume:${c.s.fleetId}`]);
    // Idempotent transitions: start on running and pause twice change nothing more.
    expect((await c.op({ action: 'start' })).json).toMatchObject({ changed: false });
    expect(fx.calls).toHaveLength(3);
  });

  it('without a run tracker the state still changes (and says so); a failing tracker gives 207', async () => {
    const c = await setup();
    await c.template();
    await c.op({ action: 'start' });
    const paused = await c.op({ action: 'pause' });
    expect(paused).toMatchObject({ status: 200, json: { operation: { state: 'paused' }, runs: { attached: false, applied: false } } });
    expect(c.logs.some((l) => l.includes('no run tracker is attached'))).toBe(true);
    const fx = new RecordingEffects();
    fx.fail = 'robot link down';
    c.runtime().setRunEffects(fx);
    const started = await c.op({ action: 'start' });
    expect(started.status).toBe(207);
    expect(started.json).toMatchObject({ success: false, code: 'partial_failure', operation: { state: 'running' }, runs: { applied: false, detail: 'robot link down' } });
  });

  it('reset and restart need a non-running operation; they abort runs, clear holders and bump the epoch', async () => {
    const c = await setup();
    const featureId = await c.feature();
    await c.template({ featureId });
    const fx = new RecordingEffects();
    c.runtime().setRunEffects(fx);
    await c.op({ action: 'start' });
    expect((await c.op({ action: 'reset' })).status).toBe(409);
    expect((await c.op({ action: 'restart' })).status).toBe(409);
    await c.op({ action: 'pause' });
    const reset = await c.op({ action: 'reset' });
    expect(reset.json).toMatchObject({ operation: { state: 'stopped', epoch: 1 }, features: [featureId], runs: { effect: 'abort' } });
    const restart = await c.op({ action: 'restart' });
    expect(restart.json).toMatchObject({ operation: { state: 'running', epoch: 2 } });
    expect((await req(c.s, 'GET', `${c.base}/features/${featureId}`)).json.decompositionEpoch).toBe(2);
    const step = await c.op({ action: 'reset_step' });
    expect(step.json).toMatchObject({ operation: { state: 'running' }, features: [featureId] });
    const dec = await c.op({ action: 'reset_decomposers' });
    expect(dec.json.features).toEqual([featureId]);
    expect((await req(c.s, 'GET', `${c.base}/features/${featureId}`)).json.decompositionEpoch).toBe(4);
  });
});

describe('roster rules', () => {
  it('rule 1: assign needs an active fleet robot (404) with every capability (400); no run starts', async () => {
    const c = await setup();
    const t = (await c.template({ roster: [c.s.robots.active[0]] })).json.missionId;
    const [, r2, r3] = c.s.robots.active;
    expect(await c.op({ action: 'assign_robot', mission_id: t, robot_id: c.s.robots.foreign })).toMatchObject({ status: 404, json: { code: 'not_found' } });
    expect(await c.op({ action: 'assign_robot', mission_id: t, robot_id: c.s.robots.inactive })).toMatchObject({ status: 404 });
    expect(await c.op({ action: 'assign_robot', mission_id: t, robot_id: r3 })).toMatchObject({ status: 400, json: { code: 'bad_request', error: expect.stringContaining('mow') } });
    const ok = await c.op({ action: 'assign_robot', mission_id: t, robot_id: r2 });
    expect(ok.json.template.roster).toEqual([c.s.robots.active[0], r2]);
    expect(ok.json.runs).toBeUndefined();
    expect(await c.op({ action: 'assign_robot', mission_id: t })).toMatchObject({ status: 400, json: { error: expect.stringContaining('robot_id') } });
  });

  it('rule 2: an open roster stays open; a listed robot is unchanged', async () => {
    const c = await setup();
    const open = (await c.template()).json.missionId;
    const r = await c.op({ action: 'assign_robot', mission_id: open, robot_id: c.s.robots.active[0] });
    expect(r.json).toMatchObject({ changed: false, template: { roster: [] } });
    const closed = (await c.template({ roster: [c.s.robots.active[0]] })).json.missionId;
    const again = await c.op({ action: 'assign_robot', mission_id: closed, robot_id: c.s.robots.active[0] });
    expect(again.json).toMatchObject({ changed: false, template: { roster: [c.s.robots.active[0]], version: 1 } });
  });

  it('rule 3: unassign; the last listed robot cannot go; an open roster becomes the other active robots', async () => {
    const c = await setup();
    const [r1, r2, r3] = c.s.robots.active;
    const closed = (await c.template({ roster: [r1, r2] })).json.missionId;
    expect((await c.op({ action: 'unassign_robot', mission_id: closed, robot_id: r1 })).json.template.roster).toEqual([r2]);
    expect(await c.op({ action: 'unassign_robot', mission_id: closed, robot_id: r2 })).toMatchObject({ status: 400, json: { code: 'bad_request', error: expect.stringContaining('last robot') } });
    const open = (await c.template({ capabilities: [] })).json.missionId;
    const opened = await c.op({ action: 'unassign_robot', mission_id: open, robot_id: r2 });
    expect([...opened.json.template.roster].sort()).toEqual([r1, r3].sort());
    expect(await c.op({ action: 'unassign_robot', mission_id: open, robot_id: c.s.robots.foreign })).toMatchObject({ status: 404 });
  });

  it('rule 4: control-operation is 404 until a template exists, also for roster actions', async () => {
    const c = await setup();
    expect((await c.op({ action: 'assign_robot', mission_id: '00000000-0000-4000-8000-000000000000', robot_id: c.s.robots.active[0] })).status).toBe(404);
    expect((await c.op({ action: 'enable_mission', mission_id: '00000000-0000-4000-8000-000000000000' })).json.error).toMatch(/no operation yet/);
  });

  it('enable_mission / disable_mission toggle the template', async () => {
    const c = await setup();
    const t = (await c.template()).json.missionId;
    const off = await c.op({ action: 'disable_mission', mission_id: t });
    expect(off.json).toMatchObject({ changed: true, runtimeSync: 'applied', template: { enabled: false } });
    expect((await req(c.s, 'GET', `${c.base}/mission-templates/${t}`)).json.enabled).toBe(false);
    expect((await c.op({ action: 'enable_mission', mission_id: t })).json.template.enabled).toBe(true);
    expect((await c.op({ action: 'enable_mission' })).status).toBe(400);
  });
});
