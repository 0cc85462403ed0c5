/**
 * Data integrity of mission requests and schedules, through the real `fleetgw serve` process (dist:
 * `npm run build` first) and robots on the real gRPC link (issue 8, items 9, 10 and 12):
 *
 * - 9: a time beyond the documented maximum is refused with 400 before anything is written; a
 *   failure after the commit answers from what was committed and never frees the key for a second
 *   schedule.
 * - 10: a crash right after the commit of submit-job, deploy-mission or a template create, and a
 *   retry with the same Idempotency-Key, leave exactly one template and one schedule per request.
 * - 12a: a schedule whose creator key is revoked pauses with a reason and an event at its next fire
 *   and sends the robot nothing more, until another key re-binds it.
 * - 12b: a crash between a scheduled command's submission and its recording: after the restart the
 *   robot receives the command once.
 *
 * Crashes and failures are injected with the test-only `FLEETGW_TEST_FAULT` hook
 * (src/missions/fault-points.ts).
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { RobotAgent } from '../../src/agent/index.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';
import { freePort } from '../support/net.js';
import { fleetgwAsync } from '../support/stream-client.js';

// Bounds, not waits (every wait in here ends on a condition): real processes on a loaded 2-core
// machine (.ci/load-check.sh) take several times longer than on an idle one.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

/** 9999-12-31T23:59:59.999Z: the documented latest time a request may name. */
const MAX_TIME_MS = 253_402_300_799_999;

const dirs: string[] = [];
const running: { gw: RunningGateway[]; agents: RobotAgent[] } = { gw: [], agents: [] };

afterEach(async () => {
  for (const a of running.agents.splice(0)) await a.stop();
  for (const gw of running.gw.splice(0)) await gw.stop();
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

type Data = ReturnType<typeof makeDataDir>;

function setup(robots = 0): { d: Data; creds: { robotId: string; robotToken: string }[] } {
  const d = makeDataDir('fleetgw-integrity-');
  dirs.push(d.dataDir);
  const creds = Array.from({ length: robots }, (_, i) => adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `r${i}`]));
  return { d, creds };
}

/** The gateway on fixed ports (robots reconnect to a restarted one), optionally with a test fault. */
async function gateway(d: Data, ports: { http: number; grpc: number }, fault?: string): Promise<RunningGateway> {
  const gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--port', String(ports.http), '--grpc-port', String(ports.grpc)], fault ? { FLEETGW_TEST_FAULT: fault } : {});
  running.gw.push(gw);
  return gw;
}

async function ports(): Promise<{ http: number; grpc: number }> {
  return { http: await freePort(), grpc: await freePort() };
}

/** Waits for a gateway that was made to SIGKILL itself. */
async function crashed(gw: RunningGateway): Promise<void> {
  await until(() => gw.proc.exitCode !== null || gw.proc.signalCode !== null, 30_000, 'the gateway to crash');
  expect(gw.proc.signalCode).toBe('SIGKILL');
  running.gw.splice(running.gw.indexOf(gw), 1);
}

function client(gw: () => RunningGateway, d: Data, key = d.apiKey) {
  const base = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}`;
  const post = (path: string, body: unknown, idem?: string) =>
    api(gw().ready.http, key, path, { method: 'POST', body: JSON.stringify(body), headers: idem !== undefined ? { 'idempotency-key': idem } : {} });
  return {
    base,
    post,
    get: (path: string) => api(gw().ready.http, d.apiKey, path),
    schedules: async (): Promise<Record<string, any>[]> => (await api(gw().ready.http, d.apiKey, `/v1/mission-schedule?fleet_id=${d.fleetId}`)).body,
    templates: async (): Promise<{ missionId: string }[]> => (await api(gw().ready.http, d.apiKey, `${base}/mission-templates`)).body.items,
    feature: async (): Promise<string> => {
      const f = await post(`${base}/features`, { name: 'yard', geometry: { type: 'Polygon', coordinates: [[[8, 47], [8.001, 47], [8.001, 47.001], [8, 47]]] } }, randomUUID());
      expect(f.status).toBe(201);
      return f.body.featureId as string;
    },
    template: async (featureId: string): Promise<string> => {
      const t = await post(`${base}/mission-templates`, { name: 'patrol', featureId, steps: [{ kind: 'wait', config: { seconds: 0.2 } }] }, randomUUID());
      expect(t.status).toBe(201);
      return t.body.missionId as string;
    },
  };
}

/** One command a robot's handler applied; `seq` orders commands by when the gateway accepted them. */
interface Applied {
  commandId: string;
  seq: bigint;
  action: string;
  reason: string;
}

/** A robot that records every command its handler applies (each command id at most once). */
function robot(address: string, cred: { robotId: string; robotToken: string }): { agent: RobotAgent; applied: Applied[] } {
  const applied: Applied[] = [];
  const agent = new RobotAgent({
    address, ...cred, dedicatedConnection: true, reconnect: { initialMs: 50, maxMs: 200 },
    onCommand: (cmd) => {
      applied.push({ commandId: cmd.commandId, seq: cmd.seq, action: cmd.action.case ?? '', reason: cmd.action.case === 'stop' ? cmd.action.value.reason : '' });
      return { accept: true };
    },
  });
  agent.start();
  running.agents.push(agent);
  return { agent, applied };
}

describe('issue 8 item 9: time bounds and errors after commit', () => {
  it('refuses a time beyond the maximum with 400 naming the field, in every tool, and stores nothing', async () => {
    const { d, creds } = setup(1);
    const gw = await gateway(d, await ports());
    const c = client(() => gw, d);
    const featureId = await c.feature();
    const missionId = await c.template(featureId);
    const ids = { org_id: d.orgId, fleet_id: d.fleetId };
    const far = 9_007_199_254_740_991;
    const once = { timezone: 'UTC', startTimeMs: far, kind: 'once' };
    const cron = { timezone: 'Europe/Berlin', startTimeMs: far, kind: { cron: { expr: '0 3 * * *' } } };
    const interval = { timezone: 'UTC', startTimeMs: MAX_TIME_MS + 1, kind: { interval: { everySeconds: 60 } } };
    const requests: [string, Record<string, unknown>][] = [
      ['/v1/agent/schedule-mission', { ...ids, mission_id: missionId, robot_ids: [], schedule: once }],
      ['/v1/agent/schedule-mission', { ...ids, mission_id: missionId, robot_ids: [], schedule: cron }],
      ['/v1/agent/schedule-mission', { ...ids, mission_id: missionId, robot_ids: [], schedule: interval }],
      ['/v1/agent/submit-job', { ...ids, name: 'job', feature_id: featureId, capabilities: [], robot_ids: [], deployment_deadline_ms: 60_000, schedule: cron }],
      ['/v1/agent/schedule-command', { ...ids, command: { action: 'stop', robot_ids: [creds[0]!.robotId] }, schedule: once }],
    ];
    for (const [path, body] of requests) {
      const key = randomUUID();
      for (let i = 0; i < 2; i++) {
        const res = await c.post(path, body, key);
        expect(res.status, `${path} ${JSON.stringify(body)}`).toBe(400);
        expect(res.body.code).toBe('bad_request');
        expect(res.body.error).toContain('startTimeMs');
      }
    }
    expect(await c.schedules()).toHaveLength(0);
    expect(await c.templates()).toHaveLength(1);

    // The maximum itself is accepted, and answered with its date.
    const ok = await c.post('/v1/agent/schedule-mission', { ...ids, mission_id: missionId, robot_ids: [], schedule: { ...once, startTimeMs: MAX_TIME_MS } }, randomUUID());
    expect(ok.status).toBe(201);
    expect(ok.body.detail).toContain('9999-12-31T23:59:59.999Z');
    // edit-schedule is bounded the same way and leaves the schedule as it was.
    const edit = await c.post('/v1/agent/edit-schedule', { ...ids, schedule_id: ok.body.scheduleId, schedule: cron });
    expect(edit.status).toBe(400);
    expect(edit.body.error).toContain('startTimeMs');
    const rows = await c.schedules();
    expect(rows).toHaveLength(1);
    expect(rows[0]!.next_fire_at_ms).toBe(MAX_TIME_MS);
  }, 180_000);

  it('a failure after the commit answers from the commit, and the retry returns the same schedule', async () => {
    const { d } = setup();
    const p = await ports();
    let gw = await gateway(d, p);
    const c = client(() => gw, d);
    const featureId = await c.feature();
    const missionId = await c.template(featureId);
    await gw.stop();
    running.gw.splice(0);
    gw = await gateway(d, p, 'mission-tool.after-commit:throw');
    const body = { org_id: d.orgId, fleet_id: d.fleetId, mission_id: missionId, robot_ids: [], schedule: { timezone: 'UTC', startTimeMs: Date.now() + 3_600_000, kind: 'once' } };
    const key = randomUUID();
    const first = await c.post('/v1/agent/schedule-mission', body, key);
    expect(first.status).toBe(201);
    expect(first.body.status).toBe('scheduled');
    const again = await c.post('/v1/agent/schedule-mission', body, key);
    expect(again.status).toBe(201);
    expect(again.body.scheduleId).toBe(first.body.scheduleId);
    expect(again.headers.get('idempotent-replayed')).toBe('true');

    const job = { org_id: d.orgId, fleet_id: d.fleetId, name: 'job', feature_id: featureId, capabilities: [], robot_ids: [], deployment_deadline_ms: 60_000, schedule: body.schedule };
    const jobKey = randomUUID();
    const j1 = await c.post('/v1/agent/submit-job', job, jobKey);
    expect([201, 202]).toContain(j1.status);
    const j2 = await c.post('/v1/agent/submit-job', job, jobKey);
    expect(j2.body.scheduleId).toBe(j1.body.scheduleId);
    expect(j2.body.missionId).toBe(j1.body.missionId);

    const rows = await c.schedules();
    expect(rows.map((r) => r.scheduleId).sort()).toEqual([first.body.scheduleId, j1.body.scheduleId].sort());
    expect(await c.templates()).toHaveLength(2);
  }, 180_000);
});

describe('issue 8 item 10: one commit per request', () => {
  it('a kill -9 right after the commit of submit-job, deploy-mission or a template create, then a retry: one of each', async () => {
    const { d } = setup();
    const p = await ports();
    let gw = await gateway(d, p);
    const c = client(() => gw, d);
    const featureId = await c.feature();
    const missionId = await c.template(featureId);
    await gw.stop();
    running.gw.splice(0);

    const job = { org_id: d.orgId, fleet_id: d.fleetId, name: 'job', feature_id: featureId, capabilities: [], robot_ids: [], deployment_deadline_ms: 60_000, schedule: { timezone: 'UTC', startTimeMs: Date.now() + 3_600_000, kind: 'once' } };
    const deploy = { org_id: d.orgId, fleet_id: d.fleetId, mission_id: missionId, robot_ids: [] };
    const template = { name: 'sweep', featureId, steps: [{ kind: 'wait', config: { seconds: 0.2 } }] };
    const jobKey = randomUUID();
    const deployKey = randomUUID();
    const templateKey = randomUUID();
    for (const [path, body, key] of [['/v1/agent/submit-job', job, jobKey], ['/v1/agent/deploy-mission', deploy, deployKey], [`${c.base}/mission-templates`, template, templateKey]] as const) {
      gw = await gateway(d, p, 'mission-tool.after-commit:kill');
      await expect(c.post(path, body, key)).rejects.toThrow();
      await crashed(gw);
    }

    gw = await gateway(d, p);
    const j = await c.post('/v1/agent/submit-job', job, jobKey);
    expect([201, 202]).toContain(j.status);
    const dep = await c.post('/v1/agent/deploy-mission', deploy, deployKey);
    expect(dep.status).toBe(202);
    // And once more: the same answers.
    expect((await c.post('/v1/agent/submit-job', job, jobKey)).body.scheduleId).toBe(j.body.scheduleId);
    expect((await c.post('/v1/agent/deploy-mission', deploy, deployKey)).body.scheduleId).toBe(dep.body.scheduleId);
    const tpl = await c.post(`${c.base}/mission-templates`, template, templateKey);
    expect([201, 202]).toContain(tpl.status);

    const templates = (await c.templates()).map((t) => t.missionId).sort();
    expect(templates).toEqual([missionId, j.body.missionId, tpl.body.missionId].sort());
    const rows = await c.schedules();
    expect(rows.map((r) => r.scheduleId).sort()).toEqual([j.body.scheduleId, dep.body.scheduleId].sort());
    expect(rows.find((r) => r.scheduleId === j.body.scheduleId)?.template_mission_id).toBe(j.body.missionId);
    expect(rows.find((r) => r.scheduleId === dep.body.scheduleId)?.template_mission_id).toBe(missionId);
    // The first retries were answered from the crashed process's commits.
    for (const res of [j, dep, tpl]) expect(res.headers.get('idempotent-replayed')).toBe('true');
  }, 240_000);
});

describe('issue 8 item 12: who a schedule acts as, and exactly-once command fires', () => {
  it('a schedule whose creator key is revoked pauses with a reason and an event, and sends nothing more', async () => {
    const { d, creds } = setup(1);
    // Every CLI run that follows a robot's connect runs asynchronously: a synchronous one holds this
    // process's event loop for seconds on a loaded machine, so the robot's link drops (its stops are
    // then delivered late, from the gateway's backlog) and a pooled HTTP socket the gateway closed
    // meanwhile is reused ("other side closed").
    const creator = adminJson<{ apiKeyId: string; apiKey: string }>(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--fleet', d.fleetId, '--permissions', 'operations:control,robots:write']);
    const gw = await gateway(d, await ports());
    const r = robot(gw.ready.grpc, creds[0]!);
    await until(() => r.agent.stats().connected, 30_000, 'robot connected');
    const c = client(() => gw, d, creator.apiKey);
    const res = await c.post('/v1/agent/schedule-command', {
      org_id: d.orgId, fleet_id: d.fleetId, command: { action: 'stop', robot_ids: [creds[0]!.robotId], reason: 'every second' },
      schedule: { timezone: 'UTC', startTimeMs: Date.now(), kind: { interval: { everySeconds: 1 } } },
    }, randomUUID());
    expect(res.status).toBe(201);
    /** The schedule's stops the robot applied whose commands the gateway accepted after `seq`. */
    const firedAfter = (seq: bigint): Applied[] => r.applied.filter((a) => a.reason === 'every second' && a.seq > seq);
    await until(() => firedAfter(0n).length >= 2, 30_000, 'two scheduled stops');

    const revoked = await fleetgwAsync(['admin', 'revoke-key', '--data-dir', d.dataDir, '--key-id', creator.apiKeyId]);
    expect(revoked.status, revoked.stderr).toBe(0);
    const row = async (): Promise<Record<string, any>> => (await c.schedules()).find((s) => s.scheduleId === res.body.scheduleId)!;
    await until(async () => (await row()).paused_reason === 'creator_key_invalid', 30_000, 'the schedule to pause');
    const s = await row();
    expect(s).toMatchObject({ status: 'failed', last_failure_reason: 'creator_key_invalid', paused_reason: 'creator_key_invalid', next_fire_at_ms: null });
    expect(s.last_failure_detail).toContain('revoked');
    const events = await c.get(`/v1/events?fleet_id=${d.fleetId}&correlation_id=${res.body.correlationId}&limit=1000`);
    const paused = (events.body.items as { kind: string; data: Record<string, unknown> }[]).find((e) => e.kind === 'schedule.paused');
    expect(paused?.data).toMatchObject({ reason: 'creator_key_invalid', apiKeyId: creator.apiKeyId });
    // A marker sent once the pause is seen: a stop the schedule sent after the pause would have a
    // higher seq. Stops it sent before the pause may still arrive after the marker (the robot's link
    // can drop on a loaded machine, and its backlog is flushed when it reconnects): those are not
    // "more".
    const admin = client(() => gw, d);
    const marker = await admin.post('/v1/agent/control-robot', { org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_id: creds[0]!.robotId, reason: 'marker', wait_for_ack: true });
    expect(marker.body.outcomes[0].delivery.state).toBe('agent_received');
    const markerSeq = r.applied.find((a) => a.commandId === marker.body.outcomes[0].delivery.commandId)!.seq;
    // The scheduler fires in due-time order: once a schedule due two seconds from now has fired, the
    // paused one (every second) would have fired at least once before it.
    const anchor = await admin.post('/v1/agent/schedule-command', {
      org_id: d.orgId, fleet_id: d.fleetId, command: { action: 'stop', robot_ids: [creds[0]!.robotId], reason: 'anchor' },
      schedule: { timezone: 'UTC', startTimeMs: Date.now() + 2_000, kind: 'once' },
    }, randomUUID());
    expect(anchor.status).toBe(201);
    await until(() => r.applied.some((a) => a.reason === 'anchor'), 30_000, 'the later once-schedule to fire');
    expect(firedAfter(markerSeq)).toEqual([]);
    expect((await row()).status).toBe('failed');

    // Another key with the required permissions re-binds it: it acts as that key and fires again.
    const rebind = await admin.post('/v1/agent/edit-schedule', { org_id: d.orgId, fleet_id: d.fleetId, schedule_id: res.body.scheduleId, rebind_to_caller: true });
    expect(rebind.status).toBe(200);
    await until(() => firedAfter(markerSeq).length > 0, 30_000, 'fires after the re-bind');
    expect(await row()).toMatchObject({ paused_reason: null, acts_as_api_key_id: d.apiKeyId });
  }, 180_000);

  it('a crash between submitting a scheduled command and recording it: the robot receives it once', async () => {
    const { d, creds } = setup(1);
    const p = await ports();
    let gw = await gateway(d, p, 'command-fire.submitted:kill');
    const r = robot(gw.ready.grpc, creds[0]!);
    await until(() => r.agent.stats().connected, 30_000, 'robot connected');
    const c = client(() => gw, d);
    // A first answer while nothing is scheduled: the response log fetches this gateway's
    // /openapi.json with it (for the check after the file), before the gateway can crash.
    expect(await c.schedules()).toEqual([]);
    const res = await c.post('/v1/agent/schedule-command', {
      org_id: d.orgId, fleet_id: d.fleetId, command: { action: 'stop', robot_ids: [creds[0]!.robotId], reason: 'once' },
      schedule: { timezone: 'UTC', startTimeMs: Date.now() + 1000, kind: 'once' },
    }, randomUUID());
    expect(res.status).toBe(201);
    await crashed(gw);
    expect(r.applied.filter((a) => a.action === 'stop')).toHaveLength(1);

    gw = await gateway(d, p);
    await until(async () => (await c.schedules())[0]?.status === 'deployed', 30_000, 'the fire to settle');
    // A second submission would be on the robot's stream (sent, or resent in the reconnect flush)
    // before a stop sent now: once that one is acknowledged, a duplicate would have arrived.
    await until(() => r.agent.stats().connected, 30_000, 'robot reconnected');
    const next = await c.post('/v1/agent/control-robot', { org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_id: creds[0]!.robotId, wait_for_ack: true });
    expect(next.body.outcomes[0].delivery.state).toBe('agent_received');
    expect(r.applied.filter((a) => a.action === 'stop').map((a) => a.commandId === next.body.outcomes[0].delivery.commandId)).toEqual([false, true]);
  }, 180_000);
});
