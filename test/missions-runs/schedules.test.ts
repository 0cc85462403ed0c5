// Schedules through the HTTP API with an injected clock (simulated robots still run in real time):
// cron in a zone, edit/cancel/list/paging, priorities, schedule-command, submit-job, and restarts
// (misfire policy, open fires resumed, nothing fired twice).
import { afterEach, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/missions/clock.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { Harness, seed, sleep, until } from './harness.js';

const harnesses: Harness[] = [];
afterEach(async () => {
  for (const h of harnesses.splice(0)) await h.close();
});

const Z = (iso: string): number => Date.parse(iso);

async function start(n: number, clock: ManualClock): Promise<Harness> {
  const h = await Harness.start(seed(n), { clock, passIntervalMs: 100 });
  harnesses.push(h);
  await h.robotsOnline();
  return h;
}

/** Moves the fake clock forward in steps (real time passes too, for robots and LMDB) until `cond`. */
async function pumpUntil(clock: ManualClock, cond: () => boolean | Promise<boolean>, stepMs = 100, what = 'condition', realMs = 10_000): Promise<void> {
  const end = Date.now() + realMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`${what} not met`);
    clock.advance(stepMs);
    await sleep(10);
  }
}

describe('schedule-mission with a cron in a time zone', () => {
  it('stays scheduled until the zone\'s wall time, then deploys a run', async () => {
    const clock = new ManualClock(Z('2026-03-08T06:50:00Z')); // 01:50 EST, ten minutes before the gap
    const h = await start(1, clock);
    const missionId = await h.template();
    const res = await h.tool('schedule-mission', {
      mission_id: missionId,
      robot_ids: [],
      schedule: { timezone: 'America/New_York', startTimeMs: clock.now(), kind: { cron: { expr: '30 2 * * *' } } },
    });
    expect(res.status).toBe(201);
    const id = res.json.scheduleId as string;
    // 02:30 does not exist that day: it fires at 03:30 EDT = 07:30Z.
    expect((await h.schedule(id)).next_fire_at_ms).toBe(Z('2026-03-08T07:30:00Z'));
    clock.set(Z('2026-03-08T07:29:00Z'));
    // Time-based on purpose: a short look that a minute before the fire time nothing fired.
    await sleep(50);
    expect((await h.schedule(id)).status).toBe('scheduled');
    clock.set(Z('2026-03-08T07:30:00Z'));
    await pumpUntil(clock, async () => (await h.schedule(id)).status === 'deployed', 100, 'deployed');
    const row = await h.schedule(id);
    expect(row).toMatchObject({ fires_total: 1, next_fire_at_ms: Z('2026-03-09T06:30:00Z'), last_run_id: expect.any(String) });
    const bad = await h.tool('schedule-mission', { mission_id: missionId, robot_ids: [], schedule: { timezone: 'Mars/Base', startTimeMs: 0, kind: 'once' } });
    expect(bad).toMatchObject({ status: 400, json: { code: 'bad_request' } });
    const badCron = await h.tool('schedule-mission', { mission_id: missionId, robot_ids: [], schedule: { timezone: 'UTC', startTimeMs: 0, kind: { cron: { expr: '61 * * * *' } } } });
    expect(badCron.json.error).toMatch(/minute/);
  });
});

describe('edit, cancel, list', () => {
  it('edit keeps the id and re-arms; cancel stops fires and frees the template; the list pages', async () => {
    const clock = new ManualClock(Z('2026-06-01T00:00:00Z'));
    const h = await start(1, clock);
    const missionId = await h.template();
    const mk = () => h.tool('schedule-mission', { mission_id: missionId, robot_ids: [], schedule: { timezone: 'UTC', startTimeMs: clock.now() + 3600_000, kind: 'once' } });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push((await mk()).json.scheduleId as string);
      clock.advance(1);
    }
    const edited = await h.tool('edit-schedule', { schedule_id: ids[0], schedule: { timezone: 'UTC', startTimeMs: clock.now() + 60_000, kind: { interval: { everySeconds: 120 } } }, retry_limit: 2 }, { idem: null });
    expect(edited.status).toBe(200);
    expect(edited.json.scheduleId).toBe(ids[0]);
    expect(await h.schedule(ids[0]!)).toMatchObject({ retry_limit: 2, next_fire_at_ms: clock.now() + 60_000, schedule: { kind: { interval: { everySeconds: 120 } } } });
    expect((await h.tool('edit-schedule', { schedule_id: '00000000-0000-4000-8000-000000000000' }, { idem: null })).status).toBe(404);

    const tplPath = `/v1/orgs/${h.seed.orgId}/fleets/${h.seed.fleetId}/mission-templates/${missionId}`;
    expect((await h.call('DELETE', tplPath)).status).toBe(409); // referenced by live schedules
    const cancel = await h.tool('cancel-schedule', { schedule_id: ids[1] }, { idem: null });
    expect(cancel.json).toEqual({ scheduleId: ids[1], status: 'cancelled', detail: expect.any(String) });
    expect((await h.tool('edit-schedule', { schedule_id: ids[1], retry_limit: 1 }, { idem: null })).status).toBe(409);
    expect([...h.store.index.getKeys({ start: `schedulesByTemplate/${missionId}/`, end: `schedulesByTemplate/${missionId}/\uffff` })]).toHaveLength(4);

    // Paging: newest first, two per page.
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = `/v1/mission-schedule?fleet_id=${h.seed.fleetId}&limit=2${cursor ? `&before=${cursor}` : ''}`;
      const page = await h.call('GET', q);
      expect(page.status).toBe(200);
      seen.push(...(page.json.items as { scheduleId: string }[]).map((r) => r.scheduleId));
      cursor = page.json.next_cursor as string | null;
    } while (cursor !== null);
    // The cancelled schedule has left the list (and its by-id read).
    expect(seen).toEqual([...ids].reverse().filter((id) => id !== ids[1]));
    const all = await h.call('GET', `/v1/mission-schedule?fleet_id=${h.seed.fleetId}`);
    expect(all.json).toHaveLength(4);
    expect((await h.call('GET', `/v1/mission-schedule?fleet_id=${h.seed.fleetId}&id=${ids[1]!}`)).status).toBe(404);
    expect((await h.call('GET', `/v1/mission-schedule?fleet_id=${h.seed.fleetId}&limit=2&before=bogus`)).status).toBe(400);

    // The cancelled schedule never fires; the others do at their time.
    clock.set(clock.now() + 3600_000);
    await pumpUntil(clock, async () => (await h.schedule(ids[4]!)).status !== 'scheduled', 100, 'fired');
    expect(h.store.schedules.get(ids[1]!)?.firesTotal).toBe(0);
  });

  it('set-mission-priorities is all or nothing, and the higher priority gets the only robot first', async () => {
    const clock = new ManualClock(Z('2026-06-01T00:00:00Z'));
    const h = await start(1, clock);
    const low = await h.template({ name: 'low', steps: [{ kind: 'wait', config: { seconds: 0.2 } }] });
    const high = await h.template({ name: 'high', steps: [{ kind: 'wait', config: { seconds: 0.2 } }] });
    const bad = await h.tool('set-mission-priorities', { priorities: [{ mission_id: high, priority: 10 }, { mission_id: '00000000-0000-4000-8000-000000000000', priority: 1 }] }, { idem: null });
    expect(bad.status).toBe(404);
    expect(h.store.templates.get(high)!.priority).toBe(0);
    const ok = await h.tool('set-mission-priorities', { priorities: [{ mission_id: high, priority: 10 }, { mission_id: low, priority: -1 }] }, { idem: null });
    expect(ok.json).toMatchObject({ success: true });
    // Both fall due at the same instant while the robot is offline... simpler: same instant, one robot.
    const at = clock.now() + 1000;
    const sched = (m: string) => h.tool('schedule-mission', { mission_id: m, robot_ids: [], schedule: { timezone: 'UTC', startTimeMs: at, kind: 'once' } });
    const a = (await sched(low)).json.scheduleId as string;
    const b = (await sched(high)).json.scheduleId as string;
    clock.set(at);
    await pumpUntil(clock, async () => (await h.schedule(a)).status === 'deployed' && (await h.schedule(b)).status === 'deployed', 100, 'both deployed');
    const runA = h.missions.tracker.get((await h.schedule(a)).last_run_id)!;
    const runB = h.missions.tracker.get((await h.schedule(b)).last_run_id)!;
    expect(runB.startedAtMs).toBeLessThan(runA.startedAtMs);
  });
});

describe('schedule-command and submit-job', () => {
  it('a scheduled stop reaches the robot at its time', async () => {
    const clock = new ManualClock(Z('2026-06-01T00:00:00Z'));
    const h = await start(1, clock);
    const robotId = h.seed.robots[0]!.robotId;
    const res = await h.tool('schedule-command', { command: { action: 'stop', robot_ids: [robotId], reason: 'lunch' }, schedule: { timezone: 'UTC', startTimeMs: clock.now() + 5000, kind: 'once' } });
    expect(res.status).toBe(201);
    expect((await h.tool('schedule-command', { command: { action: 'stop', robot_ids: [h.seed.otherFleetRobot] } })).status).toBe(404);
    expect((await h.tool('schedule-command', { command: { action: 'mode', robot_ids: [robotId] } })).status).toBe(400);
    expect(h.sim!.robots[0]!.model.mode).not.toBe('paused');
    clock.advance(5000);
    await pumpUntil(clock, async () => (await h.schedule(res.json.scheduleId)).status === 'deployed', 100, 'deployed');
    await until(() => h.sim!.robots[0]!.model.mode === 'paused', 5000, 'robot paused');
    expect(h.sim!.robots[0]!.model.stopReason).toBe('lunch');
  });

  it('submit-job creates an enabled template and fires it now', async () => {
    const clock = new ManualClock(Date.now());
    const h = await start(1, clock);
    await h.template(); // creates the operation
    const featureId = await h.featureId();
    const res = await h.tool('submit-job', { name: 'job', feature_id: featureId, capabilities: ['mow'], robot_ids: [], deployment_deadline_ms: 60_000, steps: [{ kind: 'wait', config: { seconds: 0.2 } }] });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ status: 'scheduled', runtimeSync: 'applied', detail: expect.stringContaining('/v1/events') });
    expect(h.store.templates.get(res.json.missionId)).toMatchObject({ enabled: true, capabilities: ['mow'], name: 'job' });
    await pumpUntil(clock, async () => (await h.schedule(res.json.scheduleId)).status === 'deployed', 100, 'deployed');
    expect((await h.tool('submit-job', { name: 'x', feature_id: featureId, capabilities: [], robot_ids: [] })).status).toBe(400); // deadline required
  });
});

describe('restarts', () => {
  it('a fire committed before a restart is resumed, not fired again; missed fires coalesce', async () => {
    const clock = new ManualClock(Z('2026-06-01T00:00:00Z'));
    const h = await start(1, clock);
    const missionId = await h.template({ steps: [{ kind: 'wait', config: { seconds: 0.2 } }] });
    await h.operation('pause'); // the fire will fall due but cannot be dispatched
    const res = await h.tool('schedule-mission', { mission_id: missionId, robot_ids: [], deployment_deadline_ms: 600_000, schedule: { timezone: 'UTC', startTimeMs: clock.now() + 1000, kind: { interval: { everySeconds: 60 } } } });
    const id = res.json.scheduleId as string;
    clock.advance(1000);
    await pumpUntil(clock, async () => (await h.schedule(id)).status === 'pending', 100, 'pending');
    expect((await h.schedule(id)).fires_total).toBe(1);

    // Restart: the open fire comes back as it was (same fire, nothing new committed).
    await h.restart();
    await h.robotsOnline();
    expect(await h.schedule(id)).toMatchObject({ status: 'pending', fires_total: 1 });
    await h.operation('start');
    await pumpUntil(clock, async () => (await h.schedule(id)).status === 'deployed', 50, 'deployed after restart');
    expect([...h.store.fires.getKeys({ start: `${id}/`, end: `${id}/\uffff` })]).toHaveLength(1);
    await until(async () => (await h.call('GET', `/v1/mission-runs?fleet_id=${h.seed.fleetId}&days=1`)).json.items[0]?.state === 'completed', 10_000, 'completed');

    // Down for 5 minutes: 00:01:00 .. 00:05:00 were missed; only the latest runs.
    await h.down();
    clock.set(Z('2026-06-01T00:05:30Z'));
    await h.up();
    await h.robotsOnline();
    await pumpUntil(clock, async () => (await h.schedule(id)).last_run_id !== null && (await h.schedule(id)).status === 'deployed' && (await h.schedule(id)).fires_total === 6, 20, 'coalesced fire');
    expect(await h.schedule(id)).toMatchObject({ skipped_fires: 4, next_fire_at_ms: Z('2026-06-01T00:06:01Z') });
    const runs = await h.call('GET', `/v1/mission-runs?fleet_id=${h.seed.fleetId}&days=1&schedule_id=${id}`);
    expect(runs.json.items).toHaveLength(2);
    const kinds = await h.eventKinds(res.json.correlationId);
    expect(kinds).toContain('schedule.fire_skipped');
  });
});

describe('who a schedule acts as (issue 8 item 12)', () => {
  it('a mission schedule whose key expires pauses at its next fire without a run; a re-bind resumes it', async () => {
    const clock = new ManualClock(Date.now());
    const h = await start(1, clock);
    const missionId = await h.template();
    const creator = createApiKey(h.store, { orgId: h.seed.orgId, fleetId: h.seed.fleetId, permissions: ['missions:write', 'missions:read'], expiresAtMs: clock.now() + 1_800_000 });
    const res = await h.tool('schedule-mission', {
      mission_id: missionId,
      robot_ids: [],
      schedule: { timezone: 'UTC', startTimeMs: clock.now() + 1000, kind: { interval: { everySeconds: 3600 } } },
    }, { key: creator.apiKey });
    expect(res.status).toBe(201);
    const id = res.json.scheduleId as string;
    await pumpUntil(clock, async () => (await h.schedule(id)).status === 'deployed', 100, 'first fire deployed');
    const runs = async (): Promise<number> => (await h.call('GET', `/v1/mission-runs?fleet_id=${h.seed.fleetId}&days=1&schedule_id=${id}`)).json.items.length as number;
    expect(await runs()).toBe(1);

    // The key expires (by the gateway's clock) before the next occurrence.
    clock.advance(3_600_000);
    await pumpUntil(clock, async () => (await h.schedule(id)).paused_reason === 'creator_key_invalid', 100, 'paused');
    const row = await h.schedule(id);
    expect(row).toMatchObject({ status: 'failed', last_failure_reason: 'creator_key_invalid', next_fire_at_ms: null, acts_as_api_key_id: creator.record.apiKeyId });
    expect(row.last_failure_detail).toContain('expired');
    expect(await h.eventKinds(res.json.correlationId)).toContain('schedule.paused');
    const status = await h.tool('get-runtime-status', { schedule_id: id }, { idem: null });
    expect(status.json).toMatchObject({ phase: 'paused', blocking_reasons: ['creator_key_invalid'] });
    // An ordinary edit keeps it paused; nothing fires however far time moves.
    expect((await h.tool('edit-schedule', { schedule_id: id, retry_limit: 1 }, { idem: null })).json.detail).toContain('still paused');
    for (let i = 0; i < 3; i++) {
      clock.advance(3_600_000);
      // Time-based on purpose: a short look after each hour that the paused schedule fired nothing.
      await sleep(50);
    }
    expect(await runs()).toBe(1);
    expect((await h.schedule(id)).next_fire_at_ms).toBeNull();

    // A key without missions:write may not re-bind; one with it does, and the schedule fires as it.
    expect((await h.tool('edit-schedule', { schedule_id: id, rebind_to_caller: true }, { key: h.seed.noMissionsKey, idem: null })).status).toBe(403);
    const rebound = await h.tool('edit-schedule', { schedule_id: id, rebind_to_caller: true }, { idem: null });
    expect(rebound.status).toBe(200);
    expect(await h.eventKinds(res.json.correlationId)).toContain('schedule.resumed');
    await pumpUntil(clock, async () => (await runs()) === 2, 60_000, 'a run after the re-bind');
    expect(await h.schedule(id)).toMatchObject({ paused_reason: null, acts_as_api_key_id: expect.not.stringMatching(creator.record.apiKeyId) });
  });
});
