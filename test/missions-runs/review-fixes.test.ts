// Review findings on the mission runtime, through the HTTP stack and the real gRPC robot link:
// feature locks and holders in dispatch, the sent phase's deadline, runs lost while starting,
// per-run failures of operation control (207), permission before lookup, and submit-job's rollback.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { RobotAgent } from '../../src/agent/agent.js';
import type { CommandHandler } from '../../src/agent/command-processor.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { MAX_ACTIVE_SCHEDULES_PER_FLEET } from '../../src/missions/scheduling/schedules.js';
import { Harness, seed, until } from './harness.js';

const harnesses: Harness[] = [];
const agents: RobotAgent[] = [];
afterEach(async () => {
  for (const a of agents.splice(0)) await a.stop();
  for (const h of harnesses.splice(0)) await h.close();
});

async function start(n = 1, opts: Parameters<typeof Harness.start>[1] = {}): Promise<Harness> {
  const h = await Harness.start(seed(n), { passIntervalMs: 100, ...opts });
  harnesses.push(h);
  if (opts.sim !== false) await h.robotsOnline();
  return h;
}

/** A hand-driven agent for the harness's first robot (no simulated robot runs it). */
function agentFor(h: Harness, onCommand: CommandHandler): RobotAgent {
  const r = h.seed.robots[0]!;
  const a = new RobotAgent({ address: h.link.address, robotId: r.robotId, robotToken: r.robotToken, activeMissions: () => [], onCommand });
  agents.push(a);
  a.start();
  return a;
}

const base = (h: Harness): string => `/v1/orgs/${h.seed.orgId}/fleets/${h.seed.fleetId}`;

describe('feature locks and holders', () => {
  it('no run is dispatched on a locked feature (blocking reason feature_locked); unlock deploys; the robot holds the feature while it runs', async () => {
    const h = await start(1);
    const robotId = h.seed.robots[0]!.robotId;
    const featureId = await h.featureId();
    const missionId = await h.template({ featureId, steps: [{ kind: 'wait', config: { seconds: 1.5 } }] });
    const lock = await h.tool('control-feature', { action: 'lock', feature_id: featureId, lock_reason: 'people on the lawn' }, { idem: null });
    expect(lock.status).toBe(200);
    const res = await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [] });
    const id = res.json.scheduleId as string;
    await until(async () => (await h.schedule(id)).status === 'pending', 5000, 'pending');
    // Two more dispatch passes (they re-check waiting fires every 500 ms) leave it waiting.
    const passes = vi.spyOn(h.missions.dispatcher as unknown as { pass(): void }, 'pass');
    await until(() => passes.mock.calls.length >= 2, 10_000, 'two dispatch passes');
    expect((await h.schedule(id)).status).toBe('pending');
    expect(h.missions.tracker.activeRunOf(robotId)).toBeUndefined();
    const st = await h.tool('get-runtime-status', { schedule_id: id }, { idem: null });
    expect(st.json.blocking_reasons).toContain('feature_locked');

    expect((await h.tool('control-feature', { action: 'unlock', feature_id: featureId }, { idem: null })).status).toBe(200);
    await until(async () => (await h.schedule(id)).status === 'deployed', 5000, 'deployed after unlock');
    await until(async () => ((await h.call('GET', `${base(h)}/features/${featureId}`)).json.holders as string[]).includes(robotId), 5000, 'held while running');
    const runId = (await h.schedule(id)).last_run_id as string;
    await until(() => h.missions.tracker.get(runId)?.state === 'completed', 10_000, 'completed');
    await until(async () => ((await h.call('GET', `${base(h)}/features/${featureId}`)).json.holders as string[]).length === 0, 5000, 'released at the end');
    const kinds = await h.eventKinds(featureId);
    expect(kinds).toEqual(expect.arrayContaining(['feature.locked', 'feature.unlocked', 'feature.held', 'feature.released']));
  });
});

describe('MissionStart never acknowledged', () => {
  it('a robot that goes offline after MissionStart was sent fails the attempt robot_unresponsive after deployment_deadline_ms and is free again', async () => {
    const h = await start(1, { sim: false });
    const robotId = h.seed.robots[0]!.robotId;
    let agent: RobotAgent | null = null;
    let got = false;
    agent = agentFor(h, (cmd) => {
      if (cmd.action.case !== 'missionStart') return { accept: false, reason: 'unsupported' };
      got = true;
      void agent?.stop(); // offline before acknowledging
      return new Promise(() => {});
    });
    await until(() => h.link.link.isOnline(robotId), 10_000, 'online');
    const missionId = await h.template();
    const res = await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [], deployment_deadline_ms: 1500 });
    const id = res.json.scheduleId as string;
    await until(() => got, 5000, 'MissionStart received');
    await until(() => !h.link.link.isOnline(robotId), 5000, 'offline');
    const run = h.missions.tracker.activeRunOf(robotId);
    expect(run?.state).toBe('starting');
    await until(async () => (await h.schedule(id)).status === 'failed', 8000, 'failed');
    expect(await h.schedule(id)).toMatchObject({ last_failure_reason: 'robot_unresponsive' });
    expect(h.missions.tracker.activeRunOf(robotId)).toBeUndefined();
    expect(h.missions.tracker.get(run!.runId)).toMatchObject({ state: 'failed', detail: 'robot_unresponsive' });
  });

  it('a starting run whose MissionStart was acknowledged, missing from the Hello after a reconnect, is lost', async () => {
    const h = await start(1, { sim: false });
    const robotId = h.seed.robots[0]!.robotId;
    const accept: CommandHandler = (cmd) => (cmd.action.case === 'missionStart' ? { accept: true } : { accept: false, reason: 'unsupported' });
    const first = agentFor(h, accept);
    await until(() => h.link.link.isOnline(robotId), 10_000, 'online');
    const missionId = await h.template();
    const res = await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [] });
    const id = res.json.scheduleId as string;
    await until(async () => (await h.schedule(id)).status === 'deployed', 5000, 'deployed (acknowledged)');
    const runId = (await h.schedule(id)).last_run_id as string;
    expect(h.missions.tracker.get(runId)?.state).toBe('starting'); // the robot never reported
    await first.stop();
    await until(() => !h.link.link.isOnline(robotId), 5000, 'offline');
    agentFor(h, accept); // restarted robot: lists no active mission
    await until(() => h.missions.tracker.get(runId)?.state === 'failed', 5000, 'lost');
    expect(h.missions.tracker.get(runId)).toMatchObject({ detail: 'lost_by_robot' });
    expect(h.missions.tracker.activeRunOf(robotId)).toBeUndefined();
  });
});

describe('cancel while MissionStart is out', () => {
  it('the fire still settles: the acknowledged run is deployed, the schedule stays cancelled (runtime status phase)', async () => {
    const h = await start(1, { sim: false });
    const robotId = h.seed.robots[0]!.robotId;
    let ack: (() => void) | null = null;
    agentFor(h, (cmd) => (cmd.action.case === 'missionStart' ? new Promise((resolve) => { ack = () => resolve({ accept: true }); }) : { accept: false, reason: 'unsupported' }));
    await until(() => h.link.link.isOnline(robotId), 10_000, 'online');
    const missionId = await h.template();
    const id = (await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [] })).json.scheduleId as string;
    await until(() => ack !== null, 5000, 'MissionStart received');
    expect((await h.tool('cancel-schedule', { schedule_id: id }, { idem: null })).status).toBe(200);
    (ack as unknown as () => void)();
    // The settled fire's outcome is recorded; the schedule stays cancelled: out of the schedule list,
    // phase `cancelled` in its runtime status, whose status is the fire's outcome.
    await until(() => h.store.schedules.get(id)?.status === 'deployed', 5000, 'deployed after cancel');
    expect((await h.call('GET', `/v1/mission-schedule?fleet_id=${h.seed.fleetId}&id=${id}`)).status).toBe(404);
    const live = await h.tool('get-runtime-status', { schedule_id: id }, { idem: null });
    expect(live.json).toMatchObject({ phase: 'cancelled', status: 'deployed', last_run: { run_id: h.missions.tracker.activeRunOf(robotId)?.runId } });
  });
});

describe('operation control on runs in flight', () => {
  it('start cannot resume a run of an offline robot: 207 partial_failure naming the run', async () => {
    const h = await start(1);
    const robotId = h.seed.robots[0]!.robotId;
    const missionId = await h.template({ steps: [{ kind: 'wait', config: { seconds: 30 } }] });
    await h.tool('deploy-mission', { mission_id: missionId, robot_ids: [robotId] });
    await until(() => h.missions.tracker.activeRunOf(robotId)?.state === 'running', 10_000, 'running');
    await h.operation('pause');
    await until(() => h.missions.tracker.activeRunOf(robotId)?.state === 'paused', 10_000, 'paused');
    const runId = h.missions.tracker.activeRunOf(robotId)!.runId;
    await h.sim!.robots[0]!.agent.stop();
    await until(() => !h.link.link.isOnline(robotId), 5000, 'offline');
    const res = await h.tool('control-operation', { action: 'start' }, { idem: null });
    expect(res.status).toBe(207);
    expect(res.json).toMatchObject({
      success: false,
      code: 'partial_failure',
      operation: { state: 'running' },
      runs: { effect: 'resume', applied: false, count: 1, failures: [{ runId, robotId, error: expect.any(String) }] },
    });
  });
});

describe('schedule tools', () => {
  it('cancel-schedule checks the permission before the lookup (no 404 vs 403 probe)', async () => {
    const h = await start(1, { sim: false });
    const missionId = await h.template();
    const real = (await h.tool('schedule-mission', { mission_id: missionId, robot_ids: [], schedule: { timezone: 'UTC', startTimeMs: Date.now() + 3600_000, kind: 'once' } })).json.scheduleId as string;
    const readOnly = createApiKey(h.store, { orgId: h.seed.orgId, fleetId: null, permissions: ['fleet:read', 'robots:read'], expiresAtMs: null }).apiKey;
    const missing = await h.tool('cancel-schedule', { schedule_id: '00000000-0000-4000-8000-000000000000' }, { idem: null, key: readOnly });
    const existing = await h.tool('cancel-schedule', { schedule_id: real }, { idem: null, key: readOnly });
    expect(missing.status).toBe(403);
    expect(existing.status).toBe(403);
    expect(missing.json.code).toBe(existing.json.code);
    expect((await h.schedule(real)).status).not.toBe('cancelled');
  });

  it('submit-job whose schedule cannot be created leaves no template behind; the retry creates exactly one', async () => {
    const h = await start(1, { sim: false });
    const featureId = await h.featureId();
    // The fleet is at its schedule limit (index keys only: that is what the limit counts).
    const fake = Array.from({ length: MAX_ACTIVE_SCHEDULES_PER_FLEET }, (_, i) => `activeSchedules/${h.seed.fleetId}/fake-${String(i).padStart(6, '0')}`);
    await h.store.root.transaction(() => {
      for (const k of fake) h.store.index.putSync(k, true);
    });
    const templates = async (): Promise<unknown[]> => (await h.call('GET', `${base(h)}/mission-templates`)).json.items as unknown[];
    const before = (await templates()).length;
    const body = { name: 'job', feature_id: featureId, capabilities: [], robot_ids: [], deployment_deadline_ms: 60_000, retry_limit: 0, retry_interval_secs: 30 };
    const failed = await h.tool('submit-job', body, { idem: 'job-1' });
    expect(failed.status).toBeGreaterThanOrEqual(400);
    expect(await templates()).toHaveLength(before);
    await h.store.root.transaction(() => {
      for (const k of fake) h.store.index.removeSync(k);
    });
    const ok = await h.tool('submit-job', body, { idem: 'job-1' });
    expect(ok.status).toBe(201);
    expect(await templates()).toHaveLength(before + 1);
  });

  it('the fleet rollup counts live schedules by status and cancelled ones', async () => {
    const h = await start(1, { sim: false });
    const missionId = await h.template();
    const later = { timezone: 'UTC', startTimeMs: Date.now() + 3600_000, kind: 'once' };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await h.tool('schedule-mission', { mission_id: missionId, robot_ids: [], schedule: later })).json.scheduleId as string);
    expect((await h.tool('cancel-schedule', { schedule_id: ids[0] }, { idem: null })).status).toBe(200);
    const rollup = await h.tool('get-runtime-status', {}, { idem: null });
    expect(rollup.json.schedules).toEqual({ scheduled: 2, pending: 0, deployed: 0, failed: 0, cancelled: 1 });
  });
});
