// docs/api-conventions.md through the real `fleetgw serve` process: removed routes, UUID letter case,
// validation messages that name the field and list what it may be.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';

describe('API conventions (real HTTP)', () => {
  const d = makeDataDir('fleetgw-conventions-');
  let gw: RunningGateway;
  let robotId = '';
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    api(gw.ready.http, d.apiKey, path, { method: 'POST', body: JSON.stringify(body), headers });
  beforeAll(async () => {
    robotId = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r1', '--capabilities', 'mow']).robotId ?? '';
    gw = await startGatewayProcess(d.dataDir);
  }, 60_000);
  afterAll(async () => {
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('removed routes answer 404 not_found naming the replacement, also next to a served method', async () => {
    const flatPost = await post('/v1/mission-schedule', {});
    expect(flatPost.status).toBe(404);
    expect(flatPost.body.code).toBe('not_found');
    expect(flatPost.body.error).toContain('/v1/agent/schedule-mission');
    const flatDelete = await api(gw.ready.http, d.apiKey, `/v1/mission-schedule?fleet_id=${d.fleetId}`, { method: 'DELETE' });
    expect(flatDelete.status).toBe(404);
    expect(flatDelete.body).toMatchObject({ code: 'not_found' });
    expect(flatDelete.body.error).toContain('cancel-schedule');
    const nestedStop = await post(`/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${robotId}/stop`, {});
    expect(nestedStop.status).toBe(404);
    expect(nestedStop.body.error).toContain('/v1/agent/control-robot');
    // The GET next to them is still served; an unremoved wrong method is still a 405.
    expect((await api(gw.ready.http, d.apiKey, `/v1/mission-schedule?fleet_id=${d.fleetId}`)).status).toBe(200);
    expect((await api(gw.ready.http, d.apiKey, '/v1/me', { method: 'DELETE' })).status).toBe(405);
  });

  it('UUIDs are accepted in any letter case and returned lower-case', async () => {
    const robot = await api(gw.ready.http, d.apiKey, `/v1/robots/${robotId.toUpperCase()}`);
    expect(robot.status).toBe(200);
    expect(robot.body.id).toBe(robotId);
    const list = await api(gw.ready.http, d.apiKey, `/v1/robots?fleet_id=${d.fleetId.toUpperCase()}`);
    expect(list.status).toBe(200);
    expect(list.body.map((r: { id: string }) => r.id)).toEqual([robotId]);
    const fleets = await api(gw.ready.http, d.apiKey, `/v1/orgs/${d.orgId.toUpperCase()}/fleets`);
    expect(fleets.body.items[0].fleetId).toBe(d.fleetId);
    const status = await post('/v1/agent/get-runtime-status', { org_id: d.orgId.toUpperCase(), fleet_id: d.fleetId.toUpperCase(), robot_id: robotId.toUpperCase() });
    expect(status.status).toBe(200);
    expect(status.body).toMatchObject({ kind: 'robot', robot_id: robotId });
    // Mixed case in an array member too.
    const stop = await post('/v1/agent/control-robot', { org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_ids: [robotId.toUpperCase()] });
    expect(stop.status).toBe(200);
    expect(stop.body.outcomes[0].robotId).toBe(robotId);
  });

  it('validation messages name the field path and list the allowed values, never a regex', async () => {
    const base = { org_id: d.orgId, fleet_id: d.fleetId };
    const cases: [string, unknown, string][] = [
      ['/v1/agent/control-mission', { ...base, robot_id: robotId, mission_id: robotId, action: 'stop' }, 'Invalid request body: action must be one of: pause, resume, cancel, abort.'],
      ['/v1/agent/control-robot', { ...base, action: 'stop', robot_ids: [robotId, 'r-2'] }, 'Invalid request body: robot_ids[1] must be a UUID (8-4-4-4-12 hex digits).'],
      ['/v1/agent/control-mission', { ...base, robot_id: robotId, mission_id: robotId, run_id: 'nope', action: 'pause' }, 'Invalid request body: run_id must be a UUID (8-4-4-4-12 hex digits).'],
      ['/v1/agent/control-robot', { ...base, action: 'stop', robot_id: robotId, extra: 1 }, "Invalid request body: unknown field 'extra'."],
    ];
    for (const [path, body, message] of cases) {
      const r = await post(path, body);
      expect(r.status, path).toBe(400);
      expect(r.body).toEqual({ error: message, code: 'bad_request' });
    }
    const job = {
      ...base, name: 'j', feature_id: robotId, capabilities: [], robot_ids: [], deployment_deadline_ms: 1000,
      schedule: { owner: 'ops', timezone: 'UTC', startTimeMs: 0, kind: 'twice' },
    };
    const kind = await post('/v1/agent/submit-job', job, { 'idempotency-key': 'conv-kind' });
    expect(kind.body.error).toBe('Invalid request body: schedule.kind must be one of: once, an object with interval, an object with cron.');
    const every = await post('/v1/agent/submit-job', { ...job, schedule: { ...job.schedule, kind: { interval: { everySeconds: 'x' } } } }, { 'idempotency-key': 'conv-every' });
    expect(every.body.error).toBe('Invalid request body: schedule.kind.interval.everySeconds must be an integer.');
    const path = await api(gw.ready.http, d.apiKey, '/v1/robots/not-a-uuid');
    expect(path.body.error).toBe('Invalid path parameter robot_id: must be a UUID (8-4-4-4-12 hex digits).');
    const query = await api(gw.ready.http, d.apiKey, '/v1/robots?fleet_id=123');
    expect(query.body.error).toBe('Invalid query: fleet_id must be a UUID (8-4-4-4-12 hex digits).');
    const step = await post(`/v1/orgs/${d.orgId}/fleets/${d.fleetId}/mission-templates`, { name: 't', featureId: robotId, steps: [{ kind: 'Cover' }] }, { 'idempotency-key': 'conv-step' });
    expect(step.body.error).toBe("Invalid request body: steps[0].kind must be a lower-case letter, then up to 63 lower-case letters, digits or '_'.");
    for (const r of [kind, every, path, query, step]) expect(r.body.error).not.toMatch(/\^|\$"|\[0-9/);
  });
});
