/**
 * The interface, exactly, through the real `fleetgw serve` with simulated robots on the real link:
 *  - a schedule's `status` is one of the interface's four; a cancelled schedule leaves the schedule
 *    reads and stays readable in its events timeline and get-runtime-status;
 *  - `GET /v1/mission-runs` with `fleet:read` alone lists finished runs too;
 *  - `requestedBy` has one shape per actor kind (API key, user, operation, schedule), also for
 *    records stored in the earlier shape;
 *  - one meaning of capability: query-entities and explain-capability list the same robots.
 * Every response here is also validated against /openapi.json (test/support/openapi-responses.ts).
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/lmdb.js';
import { adminJson, FLEETGW_BIN } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { startSim as spawnSim } from '../support/stream-client.js';
import { until } from '../support/until.js';

type Json = Record<string, any>;

const STATUSES = ['scheduled', 'pending', 'deployed', 'failed'];
const PASSWORD = 'interface test password';
const SQUARE = { type: 'Polygon', coordinates: [[[5, 52], [5.001, 52], [5.001, 52.001], [5, 52.001], [5, 52]]] };

let d: ReturnType<typeof makeDataDir>;
let gw: RunningGateway;
let sim: ChildProcess | undefined;
let base: string;
let fleetReadKey: string;
const robots: { robotId: string; robotToken: string }[] = [];
const state: { operationId?: string; scheduleId?: string; runId?: string; operationCommandId?: string; keyCommandId?: string; userCommandId?: string; sessionId?: string; userId?: string } = {};

const ids = (): { org_id: string; fleet_id: string } => ({ org_id: d.orgId, fleet_id: d.fleetId });
const nested = (rest: string): string => `/v1/orgs/${d.orgId}/fleets/${d.fleetId}${rest}`;
const get = (path: string, key = d.apiKey) => api(base, key, path);
const post = (path: string, body: unknown, headers: Record<string, string> = {}) => api(base, d.apiKey, path, { method: 'POST', body: JSON.stringify(body), headers });
const audit = async (): Promise<Json[]> => (await get(`/v1/audit-log?fleet_id=${d.fleetId}&limit=500`)).body.items as Json[];

async function startSim(): Promise<void> {
  sim = await spawnSim(d.dataDir, gw.ready.grpc, robots, 5);
  for (const r of robots) await until(async () => (await get(`/v1/robots/${r.robotId}`)).body.online === true, 20_000, `robot ${r.robotId} online`);
}

async function stopSim(): Promise<void> {
  if (sim && sim.exitCode === null) {
    const exited = new Promise((r) => sim!.once('exit', r));
    sim.kill('SIGTERM');
    await exited;
  }
}

beforeAll(async () => {
  d = makeDataDir('fleetgw-iface-');
  robots.push(adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'lifter', '--capabilities', 'lift']));
  robots.push(adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'plain']));
  fleetReadKey = adminJson<{ apiKey: string }>(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--permissions', 'fleet:read']).apiKey;
  const user = spawnSync(process.execPath, [FLEETGW_BIN, 'admin', 'create-user', '--data-dir', d.dataDir, '--org', d.orgId, '--email', 'ops@acme.test', '--role', 'operator'], { input: PASSWORD, encoding: 'utf8' });
  expect(user.status, user.stderr).toBe(0);
  gw = await startGatewayProcess(d.dataDir);
  base = gw.ready.http;
  await startSim();
}, 90_000);

afterAll(async () => {
  await stopSim();
  await gw?.stop();
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

describe('the interface, exactly', () => {
  it('a cancelled schedule leaves the schedule reads, keeps its timeline, and no status outside the four', async () => {
    const command = { ...ids(), command: { action: 'stop', robot_ids: [robots[1]!.robotId], reason: 'night' }, schedule: { timezone: 'UTC', startTimeMs: Date.now() + 3_600_000, kind: { interval: { everySeconds: 3600 } } } };
    const kept = await post('/v1/agent/schedule-command', command, { 'idempotency-key': randomUUID() });
    const gone = await post('/v1/agent/schedule-command', command, { 'idempotency-key': randomUUID() });
    expect(gone.status, JSON.stringify(gone.body)).toBe(201);
    const scheduleId = gone.body.scheduleId as string;
    expect((await post('/v1/agent/cancel-schedule', { ...ids(), schedule_id: scheduleId })).status).toBe(200);

    const rows = (await get(`/v1/mission-schedule?fleet_id=${d.fleetId}`)).body as Json[];
    expect(rows.map((r) => r.scheduleId)).toEqual([kept.body.scheduleId]);
    expect(rows.every((r) => STATUSES.includes(r.status as string))).toBe(true);
    expect((await get(`/v1/mission-schedule?fleet_id=${d.fleetId}&limit=10`)).body.items.map((r: Json) => r.scheduleId)).toEqual([kept.body.scheduleId]);
    expect((await get(`/v1/mission-schedule?fleet_id=${d.fleetId}&id=${scheduleId}`)).status).toBe(404);
    const listed = await post('/v1/agent/query-entities', { ...ids(), kind: 'scheduled_command' });
    expect(listed.body.items.map((i: Json) => i.schedule_id)).toEqual([kept.body.scheduleId]);

    // Still readable: its live status (phase `cancelled`) and its events timeline.
    const live = await post('/v1/agent/get-runtime-status', { ...ids(), schedule_id: scheduleId });
    expect(live.body).toMatchObject({ kind: 'schedule', phase: 'cancelled' });
    expect(STATUSES).toContain(live.body.status);
    const timeline = await get(`/v1/events?fleet_id=${d.fleetId}&correlation_id=${gone.body.correlationId as string}`);
    expect(timeline.body.items.map((e: Json) => e.kind)).toContain('schedule.cancelled');
  });

  it('a run and its commands: who asked is the schedule, the operation, the key or the user; fleet:read lists the finished run', async () => {
    const [r0, r1] = [robots[0]!.robotId, robots[1]!.robotId];
    const feature = await post(nested('/features'), { name: 'yard', geometry: SQUARE });
    expect(feature.status, JSON.stringify(feature.body)).toBe(201);
    const template = await post(nested('/mission-templates'), { name: 'patrol', featureId: feature.body.featureId, steps: [{ kind: 'wait', config: { seconds: 120 } }] }, { 'idempotency-key': randomUUID() });
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    const missionId = template.body.missionId as string;
    state.operationId = template.body.operationId as string;
    expect((await post('/v1/agent/control-operation', { ...ids(), action: 'start' })).status).toBe(200);
    const deployed = await post('/v1/agent/deploy-mission', { ...ids(), mission_id: missionId, robot_ids: [r0] }, { 'idempotency-key': randomUUID() });
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(202);
    state.scheduleId = deployed.body.scheduleId as string;
    const runs = async (key: string): Promise<Json[]> => (await get(`/v1/mission-runs?fleet_id=${d.fleetId}&days=1`, key)).body.items as Json[];
    await until(async () => (await runs(d.apiKey)).some((r) => r.scheduleId === state.scheduleId && r.state === 'running'), 20_000, 'the run running');
    state.runId = (await runs(d.apiKey)).find((r) => r.scheduleId === state.scheduleId)!.runId as string;

    // The schedule's MissionStart.
    const start = (await audit()).find((e) => e.action === 'mission_start');
    expect.soft(start?.requestedBy).toEqual({ actorType: 'schedule', scheduleId: state.scheduleId });
    // The operation's pause of its runs.
    expect((await post('/v1/agent/control-operation', { ...ids(), action: 'pause' })).status).toBe(200);
    const byOperation = (await audit()).find((e) => e.action === 'mission_control');
    expect.soft(byOperation?.requestedBy).toEqual({ actorType: 'operation', operationId: state.operationId });
    state.operationCommandId = byOperation!.commandId as string;
    expect.soft((await get(`/v1/robot-commands/${state.operationCommandId}`)).body.requestedBy).toEqual({ actorType: 'operation', operationId: state.operationId });
    // The key's cancel of the run.
    const cancel = await post('/v1/agent/control-mission', { ...ids(), robot_id: r0, mission_id: missionId, action: 'cancel', wait_for_ack: true });
    expect(cancel.status, JSON.stringify(cancel.body)).toBe(200);
    state.keyCommandId = cancel.body.delivery.commandId as string;
    expect.soft((await get(`/v1/robot-commands/${state.keyCommandId}`)).body.requestedBy).toEqual({ actorType: 'api_key', apiKeyId: d.apiKeyId });
    // A user's session: recorded as the user, never as its session.
    const login = await fetch(`${base}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'ops@acme.test', password: PASSWORD }) });
    expect(login.status).toBe(201);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;
    const csrf = ((await login.json()) as Json).csrfToken as string;
    const me = (await (await fetch(`${base}/v1/sessions/current`, { headers: { cookie } })).json()) as Json;
    const modeRes = await fetch(`${base}${nested(`/robots/${r1}/mode`)}`, { method: 'POST', headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json' }, body: JSON.stringify({ mode: 'docking', wait_for_ack: true }) });
    const mode = { status: modeRes.status, body: (await modeRes.json()) as Json };
    expect(mode.status, JSON.stringify(mode.body)).toBe(200);
    state.userCommandId = mode.body.delivery.commandId as string;
    state.sessionId = me.session.sessionId as string;
    state.userId = me.session.user.userId as string;
    expect.soft((await get(`/v1/robot-commands/${mode.body.delivery.commandId as string}`)).body.requestedBy).toEqual({ actorType: 'user', userId: me.session.user.userId });

    // The finished run, with fleet:read alone.
    await until(async () => (await runs(d.apiKey)).find((r) => r.runId === state.runId)?.state === 'cancelled', 20_000, 'the run cancelled');
    expect((await runs(fleetReadKey)).find((r) => r.runId === state.runId)).toMatchObject({ state: 'cancelled', scheduleId: state.scheduleId });
  }, 60_000);

  it('one meaning of capability: query-entities and explain-capability name the same robots', async () => {
    const [lifter, plain] = [robots[0]!.robotId, robots[1]!.robotId];
    const robotsWith = async (capability: string): Promise<string[]> =>
      ((await post('/v1/agent/query-entities', { ...ids(), kind: 'robot', capability })).body.items as Json[]).map((r) => r.robot_id as string).sort();
    const explained = async (capability: string): Promise<Json[]> => (await post('/v1/agent/explain-capability', { ...ids(), capability })).body.items[0].robots as Json[];
    // Registered only (the simulator does not advertise it): listed by both, not invocable.
    expect(await robotsWith('lift')).toEqual([lifter]);
    const lift = await explained('lift');
    expect(lift.map((r) => r.robot_id)).toEqual([lifter]);
    expect(lift[0]).toMatchObject({ invocable: false, arguments_schema: null, advertised_at_ms: null });
    // An action of the advertised policy: both robots in both reads, invocable with its arguments.
    expect(await robotsWith('beep')).toEqual([lifter, plain].sort());
    const beep = await explained('beep');
    expect(beep.map((r) => r.robot_id).sort()).toEqual([lifter, plain].sort());
    expect(beep.every((r) => r.invocable === true && r.arguments_schema?.required?.[0] === 'durationMs')).toBe(true);
    // A capability of the Hello's list: the same on both sides too.
    expect((await explained('go_to')).map((r) => r.robot_id).sort()).toEqual(await robotsWith('go_to'));
  });

  it('routes outside /v1 are the ones docs/api-conventions.md names, each with its reason', async () => {
    for (const path of ['/healthz', '/readyz', '/docs', '/openapi.json']) expect((await fetch(`${base}${path}`)).status, path).toBe(200);
    const doc = readFileSync(new URL('../../docs/api-conventions.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Routes outside `/v1`'));
    expect(section.length).toBeLessThan(doc.length);
    for (const path of ['/healthz', '/readyz', '/docs', '/', '/openapi.json']) expect(section).toContain(`\`${path}\``);
  });

  it('commands stored in the earlier requestedBy shape are served in the current one after an upgrade', async () => {
    await stopSim();
    await gw.stop();
    const store = openStore(d.dataDir);
    try {
      for (const [id, legacy] of [[state.operationCommandId!, { apiKeyId: 'operation' }], [state.keyCommandId!, { apiKeyId: d.apiKeyId }], [state.userCommandId!, { apiKeyId: state.sessionId! }]] as const) {
        const rec = store.commands.get(id) as Json;
        await store.commands.put(id, { ...rec, requestedBy: legacy });
      }
    } finally {
      await store.close();
    }
    gw = await startGatewayProcess(d.dataDir);
    base = gw.ready.http;
    expect((await get(`/v1/robot-commands/${state.operationCommandId!}`)).body.requestedBy).toEqual({ actorType: 'operation', operationId: state.operationId });
    expect((await get(`/v1/robot-commands/${state.keyCommandId!}`)).body.requestedBy).toEqual({ actorType: 'api_key', apiKeyId: d.apiKeyId });
    expect((await get(`/v1/robot-commands/${state.userCommandId!}`)).body.requestedBy).toEqual({ actorType: 'user', userId: state.userId });
    const entries = await audit();
    expect(entries.find((e) => e.commandId === state.operationCommandId)?.requestedBy).toEqual({ actorType: 'operation', operationId: state.operationId });
  }, 60_000);
});
