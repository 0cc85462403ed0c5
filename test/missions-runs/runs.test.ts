// Mission runs end to end: Agent API over HTTP -> durable scheduler -> robot selection -> MissionStart
// over the real gRPC robot link -> simulated robots executing steps -> MissionStatus reports -> runs,
// schedule status and the correlated timeline.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Harness, seed, until } from './harness.js';

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

async function start(n = 2, opts: Parameters<typeof Harness.start>[1] = {}): Promise<Harness> {
  const h = await Harness.start(seed(n), { passIntervalMs: 100, ...opts });
  harnesses.push(h);
  await h.robotsOnline();
  return h;
}

describe('deploy-mission to a simulated robot', () => {
  it('runs the template to completion and tells the story on the timeline', async () => {
    const h = await start(2);
    const missionId = await h.template();
    const res = await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [] });
    expect(res.status).toBe(202);
    expect(res.json).toMatchObject({ missionId, status: 'scheduled', scheduleId: expect.any(String), correlationId: expect.any(String) });
    const scheduleId = res.json.scheduleId as string;

    await until(async () => (await h.schedule(scheduleId)).status === 'deployed', 10_000, 'deployed');
    const row = await h.schedule(scheduleId);
    expect(row).toMatchObject({ template_mission_id: missionId, last_failure_reason: null, deployment_deadline_ms: 300_000 });

    // While it runs, the robot form of get-runtime-status shows the live run.
    const runId = row.last_run_id as string;
    const run0 = h.missions.tracker.get(runId);
    expect(run0).toBeDefined();
    const robotId = run0!.robotId;
    const live = await h.tool('get-runtime-status', { robot_id: robotId }, { idem: null });
    expect(live.status).toBe(200);
    if (live.json.assignment !== null) expect(live.json).toMatchObject({ kind: 'robot', online: true, available: false, assignment: { run_id: runId, mission_id: missionId, schedule_id: scheduleId } });

    await until(async () => {
      const runs = await h.call('GET', `/v1/mission-runs?fleet_id=${h.seed.fleetId}&days=1&schedule_id=${scheduleId}`);
      return runs.json.items[0]?.state === 'completed';
    }, 10_000, 'run completed');
    const runs = await h.call('GET', `/v1/mission-runs?fleet_id=${h.seed.fleetId}&days=1`);
    expect(runs.json.items).toHaveLength(1);
    expect(runs.json.next_cursor).toBeNull();
    expect(runs.json.items[0]).toMatchObject({ runId, scheduleId, missionId, robotId, state: 'completed', missionProgressPct: 100, endedAtMs: expect.any(Number) });
    const byRobot = await h.call('GET', `/v1/mission-runs?fleet_id=${h.seed.fleetId}&days=1&robot_id=${robotId}&limit=9999`);
    expect(byRobot.json.items.map((r: { runId: string }) => r.runId)).toEqual([runId]);

    const kinds = await h.eventKinds(res.json.correlationId);
    for (const k of ['schedule.accepted', 'schedule.pending', 'schedule.robot_chosen', 'run.created', 'schedule.deployed', 'run.completed']) expect(kinds).toContain(k);
    expect(kinds.indexOf('schedule.accepted')).toBeLessThan(kinds.indexOf('schedule.pending'));
    expect(kinds.indexOf('schedule.pending')).toBeLessThan(kinds.indexOf('schedule.robot_chosen'));
    expect(kinds.indexOf('schedule.robot_chosen')).toBeLessThan(kinds.indexOf('run.completed'));
    // Cause before effect: the schedule chose the robot, then the run exists.
    expect(kinds.indexOf('schedule.robot_chosen')).toBeLessThan(kinds.indexOf('run.created'));
    // The robot is free again and the template is no longer referenced by an active run.
    expect(h.missions.tracker.activeRunOf(robotId)).toBeUndefined();
    expect([...h.store.index.getKeys({ start: `activeRunsByTemplate/${missionId}/`, end: `activeRunsByTemplate/${missionId}/\uffff` })]).toEqual([]);
    // The fire-now schedule has nothing left to fire, so it no longer holds the template.
    const del = await h.call('DELETE', `/v1/orgs/${h.seed.orgId}/fleets/${h.seed.fleetId}/mission-templates/${missionId}`);
    expect([200, 202]).toContain(del.status);
  });

  it('replays an idempotent request and enforces permissions and robot_ids rules', async () => {
    const h = await start(1);
    const missionId = await h.template({ capabilities: ['mow'] });
    const body = { mission_id: missionId, robot_ids: [] };
    const a = await h.tool('deploy-mission', body, { idem: 'k-1' });
    const b = await h.tool('deploy-mission', body, { idem: 'k-1' });
    expect(b.status).toBe(202);
    expect(b.json.scheduleId).toBe(a.json.scheduleId);
    expect((await h.tool('deploy-mission', body, { idem: null })).status).toBe(400);
    expect((await h.tool('deploy-mission', body, { key: h.seed.noMissionsKey })).json.code).toBe('forbidden');
    // One id: must be an active member advertising the template's capabilities.
    const robot = h.seed.robots[0]!.robotId;
    expect((await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [h.seed.otherFleetRobot] })).status).toBe(404);
    const needsLaser = await h.template({ capabilities: ['laser'] }, false);
    expect((await h.tool('deploy-mission', { mission_id: needsLaser, robot_ids: [robot] })).json).toMatchObject({ code: 'bad_request' });
    // Several ids: each must belong to the fleet.
    expect((await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [robot, h.seed.otherFleetRobot] })).status).toBe(404);
    expect((await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [robot], extra: 1 })).status).toBe(400);
    expect((await h.tool('deploy-mission', { mission_id: '00000000-0000-4000-8000-000000000000', robot_ids: [] })).status).toBe(404);
  });
});

describe('failure paths', () => {
  it('a robot that rejects MissionStart fails the fire (after the configured retries)', async () => {
    const h = await start(1, { missionBehaviour: () => ({ rejectReason: 'battery_low' }) });
    const missionId = await h.template();
    const res = await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [], retry_limit: 1, retry_interval_secs: 0 });
    const id = res.json.scheduleId as string;
    await until(async () => (await h.schedule(id)).status === 'failed', 10_000, 'failed');
    expect(await h.schedule(id)).toMatchObject({ status: 'failed', last_failure_reason: 'robot_rejected', last_failure_detail: 'battery_low' });
    const kinds = await h.eventKinds(res.json.correlationId);
    expect(kinds.filter((k) => k === 'schedule.robot_chosen')).toHaveLength(2); // first attempt + one retry
    expect(kinds).toContain('schedule.retry_scheduled');
    const runs = await h.call('GET', `/v1/mission-runs?fleet_id=${h.seed.fleetId}&days=1&schedule_id=${id}`);
    expect(runs.json.items.map((r: { state: string }) => r.state)).toEqual(['failed', 'failed']);
  });

  it('a robot that fails mid-run ends the run as failed with its detail', async () => {
    const h = await start(1, { missionBehaviour: () => ({ failAtStep: 1, failDetail: 'blade_jammed' }) });
    const missionId = await h.template();
    const res = await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [] });
    await until(async () => {
      const runs = await h.call('GET', `/v1/mission-runs?fleet_id=${h.seed.fleetId}&days=1`);
      return runs.json.items[0]?.state === 'failed';
    }, 10_000, 'run failed');
    const runs = await h.call('GET', `/v1/mission-runs?fleet_id=${h.seed.fleetId}&days=1`);
    expect(runs.json.items[0]).toMatchObject({ state: 'failed', detail: 'blade_jammed', currentStepIndex: 1 });
    // The deployment itself succeeded.
    expect((await h.schedule(res.json.scheduleId)).status).toBe('deployed');
  });

  it('no eligible robot before the deadline: failed with why, and runtime status explains while it waits', async () => {
    const h = await start(1);
    const missionId = await h.template({ capabilities: ['laser'] });
    const res = await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [], deployment_deadline_ms: 1500 });
    const id = res.json.scheduleId as string;
    await until(async () => (await h.schedule(id)).status === 'pending', 5000, 'pending');
    const st = await h.tool('get-runtime-status', { schedule_id: id }, { idem: null });
    expect(st.json).toMatchObject({ kind: 'schedule', phase: 'selecting', status: 'pending' });
    expect(st.json.candidate_robots[0]).toMatchObject({ eligible: false, reasons: ['missing_capability:laser'] });
    expect(st.json.blocking_reasons).toEqual(['missing_capability:laser (1 robot)']);
    await until(async () => (await h.schedule(id)).status === 'failed', 5000, 'failed');
    expect(await h.schedule(id)).toMatchObject({ last_failure_reason: 'deadline_passed', last_failure_detail: 'missing_capability:laser (1 robot)' });
  });

  it('nothing is dispatched while the operation is paused; start lets the waiting fire through', async () => {
    const h = await start(1);
    const missionId = await h.template();
    await h.operation('pause');
    const res = await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [] });
    const id = res.json.scheduleId as string;
    await until(async () => (await h.schedule(id)).status === 'pending', 5000, 'pending');
    // Two more dispatch passes (they re-check waiting fires every 500 ms) leave it waiting.
    const passes = vi.spyOn(h.missions.dispatcher as unknown as { pass(): void }, 'pass');
    await until(() => passes.mock.calls.length >= 2, 10_000, 'two dispatch passes');
    const st = await h.tool('get-runtime-status', { schedule_id: id }, { idem: null });
    expect(st.json.blocking_reasons).toContain('operation_paused');
    expect((await h.schedule(id)).status).toBe('pending');
    await h.operation('start');
    await until(async () => (await h.schedule(id)).status === 'deployed', 5000, 'deployed after start');
  });
});

describe('control-mission', () => {
  it('pauses, resumes and cancels a run; resume of a cancelled run is 409', async () => {
    const h = await start(1);
    const missionId = await h.template({ steps: [{ kind: 'wait', config: { seconds: 30 } }] });
    const robotId = h.seed.robots[0]!.robotId;
    await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [robotId] });
    await until(() => h.missions.tracker.activeRunOf(robotId)?.state === 'running', 10_000, 'running');
    const ctl = (action: string, extra: Record<string, unknown> = {}) => h.tool('control-mission', { robot_id: robotId, mission_id: missionId, action, ...extra }, { idem: null });

    const p = await ctl('pause', { wait_for_ack: true });
    expect(p.json).toMatchObject({ success: true, robotId, missionId, delivery: { state: 'agent_received' } });
    await until(() => h.missions.tracker.activeRunOf(robotId)?.state === 'paused', 5000, 'paused');
    expect(h.sim!.robots[0]!.model.mode).toBe('paused');
    expect((await ctl('resume', { wait_for_ack: true })).json.delivery.state).toBe('agent_received');
    await until(() => h.missions.tracker.activeRunOf(robotId)?.state === 'running', 5000, 'running again');
    const runId = h.missions.tracker.activeRunOf(robotId)!.runId;
    expect((await ctl('cancel', { run_id: runId, wait_for_ack: true })).status).toBe(200);
    await until(() => h.missions.tracker.get(runId)?.state === 'cancelled', 5000, 'cancelled');
    expect(h.missions.tracker.get(runId)).toMatchObject({ cancelRequested: 'cancel', endedAtMs: expect.any(Number) });
    const again = await ctl('resume');
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('conflict');
    expect((await ctl('pause', { run_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
  });

  it('offline robot: pause is deferred and sent on reconnect, resume is 503', async () => {
    const h = await start(1);
    const missionId = await h.template({ steps: [{ kind: 'wait', config: { seconds: 30 } }] });
    const robotId = h.seed.robots[0]!.robotId;
    await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [robotId] });
    await until(() => h.missions.tracker.activeRunOf(robotId)?.state === 'running', 10_000, 'running');
    // Take the robot offline (its agent stops; the runner keeps the run, as a real robot would).
    const sim = h.sim!;
    const robot = sim.robots[0]!;
    await robot.agent.stop();
    await until(() => !h.link.link.isOnline(robotId), 5000, 'offline');
    const ctl = (action: string) => h.tool('control-mission', { robot_id: robotId, mission_id: missionId, action }, { idem: null });
    const resume = await ctl('resume');
    expect(resume.status).toBe(503);
    expect(resume.json.code).toBe('unavailable');
    const pause = await ctl('pause');
    expect(pause.status).toBe(200);
    expect(pause.json.delivery.state).toBe('deferred');
    // Reconnect with a fresh agent for the same robot: the deferred pause is delivered and applied.
    const { RobotAgent } = await import('../../src/agent/agent.js');
    const agent2 = new RobotAgent({
      address: h.link.address,
      robotId,
      robotToken: h.seed.robots[0]!.robotToken,
      activeMissions: () => robot.missions.activeMissions(),
      onCommand: (cmd) => (cmd.action.case === 'missionControl' ? robot.missions.control(cmd.action.value) : { accept: false, reason: 'unsupported' }),
    });
    (robot.commands as { agent: unknown }).agent = agent2;
    agent2.start();
    try {
      await until(() => h.missions.tracker.activeRunOf(robotId)?.state === 'paused', 10_000, 'paused after reconnect');
    } finally {
      await agent2.stop();
    }
  });
});

describe('operation control and status reads', () => {
  it('operation pause pauses runs in flight, abort_missions aborts them; the fleet rollup shows it', async () => {
    const h = await start(2);
    const missionId = await h.template({ steps: [{ kind: 'wait', config: { seconds: 30 } }] });
    const [r0, r1] = h.seed.robots.map((r) => r.robotId) as [string, string];
    await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [r0] });
    await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [r1] });
    await until(() => [r0, r1].every((id) => h.missions.tracker.activeRunOf(id)?.state === 'running'), 10_000, 'both running');
    // The dispatcher marks a schedule deployed on its pass after the MissionStart ack, which can come
    // after the robot's `running` report was applied (a race under load): wait for both, then read.
    await until(async () => (await h.tool('get-runtime-status', {}, { idem: null })).json.schedules?.deployed === 2, 10_000, 'both deployed');
    const rollup = await h.tool('get-runtime-status', {}, { idem: null });
    expect(rollup.json).toMatchObject({ kind: 'fleet', operation: { state: 'running' }, robots: { total: 2, online: 2, busy: 2, available: 0 }, schedules: { deployed: 2 } });
    expect(rollup.json.active_runs).toHaveLength(2);

    await h.operation('pause');
    await until(() => [r0, r1].every((id) => h.missions.tracker.activeRunOf(id)?.state === 'paused'), 10_000, 'runs paused');
    const runIds = [r0, r1].map((id) => h.missions.tracker.activeRunOf(id)!.runId);
    await h.operation('abort_missions');
    await until(() => runIds.every((id) => h.missions.tracker.get(id)?.state === 'aborted'), 10_000, 'runs aborted');
    for (const id of runIds) expect(h.missions.tracker.get(id)).toMatchObject({ cancelRequested: 'abort' });
    const after = await h.tool('get-runtime-status', { robot_id: r0 }, { idem: null });
    expect(after.json).toMatchObject({ kind: 'robot', available: true, assignment: null, mission_state: null, mission_progress_pct: null });
  });

  it('permissions: runtime status needs operations:read, schedule-command needs operations:control and robots:write', async () => {
    const h = await start(1);
    const robotId = h.seed.robots[0]!.robotId;
    const { createApiKey } = await import('../../src/auth/key-admin.js');
    const keyWith = (perms: string[]): string => createApiKey(h.store, { orgId: h.seed.orgId, fleetId: null, permissions: perms, expiresAtMs: null }).apiKey;
    expect((await h.tool('get-runtime-status', {}, { idem: null, key: keyWith(['robots:read']) })).status).toBe(403);
    expect((await h.tool('get-runtime-status', {}, { idem: null, key: keyWith(['robots:read', 'operations:read']) })).status).toBe(200);
    const cmd = { command: { action: 'stop', robot_ids: [robotId] } };
    expect((await h.tool('schedule-command', cmd, { key: keyWith(['operations:control']) })).status).toBe(403);
    expect((await h.tool('schedule-command', cmd, { key: keyWith(['robots:write']) })).status).toBe(403);
    const ok = await h.tool('schedule-command', { ...cmd, schedule: { timezone: 'UTC', startTimeMs: Date.now() + 3600_000, kind: 'once' } }, { key: keyWith(['operations:control', 'robots:write']) });
    expect(ok.status).toBe(201);
    // Cancelling a command schedule takes operations:control, not missions:write.
    expect((await h.tool('cancel-schedule', { schedule_id: ok.json.scheduleId }, { idem: null, key: keyWith(['missions:write']) })).status).toBe(403);
    expect((await h.tool('cancel-schedule', { schedule_id: ok.json.scheduleId }, { idem: null, key: keyWith(['operations:control']) })).status).toBe(200);
    // Another organization's fleet id is 404, a wrong org_id 403.
    expect((await h.call('POST', '/v1/agent/get-runtime-status', { org_id: '00000000-0000-4000-8000-000000000000', fleet_id: h.seed.fleetId })).status).toBe(403);
    expect((await h.call('GET', `/v1/mission-runs?fleet_id=${h.seed.fleetId}`)).status).toBe(400); // days is required
  });
});
