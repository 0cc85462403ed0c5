// The Agent read tools through the real `fleetgw serve` with `fleetgw sim` robots on the real robot
// link (issue 11 parts 1-3): query-entities over every kind (cursors bound to kind and filters,
// stable while features are inserted and deleted between pages, kinds with their per-kind report,
// permissions per kind, strict validation), get-entity (robot descriptors from the advertised policy,
// current settings, 404 for foreign ids), resolve, get-map-context and explain-capability.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { startSim } from '../support/stream-client.js';
import { until } from '../support/until.js';

const SQUARE = { type: 'Polygon', coordinates: [[[5, 52], [5.001, 52], [5.001, 52.001], [5, 52.001], [5, 52]]] };

describe('Agent read tools over HTTP', () => {
  const d = makeDataDir('fleetgw-agentread-');
  let gw: RunningGateway;
  let sim: ChildProcess | undefined;
  const robots: { robotId: string; robotToken: string }[] = [];
  let offline: string;
  let inactive: string;
  let foreignRobot: string;
  let noHistoryKey: string;
  const base = () => ({ org_id: d.orgId, fleet_id: d.fleetId });
  const tool = (name: string, body: Record<string, unknown>, key = d.apiKey) =>
    api(gw.ready.http, key, `/v1/agent/${name}`, { method: 'POST', body: JSON.stringify(body) });
  const query = (body: Record<string, unknown>, key?: string) => tool('query-entities', { ...base(), ...body }, key);
  const featuresPath = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/features`;
  const createFeature = async (name: string): Promise<string> => {
    const res = await api(gw.ready.http, d.apiKey, featuresPath, { method: 'POST', body: JSON.stringify({ name, geometry: SQUARE }) });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.featureId as string;
  };

  beforeAll(async () => {
    for (const name of ['Mower Alpha', 'mower alpha']) robots.push(adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', name]));
    offline = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'Parked']).robotId!;
    inactive = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'Spare', '--inactive']).robotId!;
    const other = adminJson(['create-fleet', '--data-dir', d.dataDir, '--org', d.orgId, '--name', 'Other']).fleetId!;
    foreignRobot = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', other, '--name', 'Foreign']).robotId!;
    noHistoryKey = adminJson(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--permissions', 'robots:read,features:read,missions:read,operations:read']).apiKey!;
    gw = await startGatewayProcess(d.dataDir);
    sim = await startSim(d.dataDir, gw.ready.grpc, robots, 10);
    for (const r of robots) {
      await until(async () => {
        const res = await api(gw.ready.http, d.apiKey, `/v1/robots/${r.robotId}`);
        return res.body.online === true && res.body.statusTelemetry !== null;
      }, 20_000, `robot ${r.robotId} online with telemetry`);
      // Its advertised policy is compiled (under a gateway-wide budget: later on a loaded machine).
      await until(async () => (await tool('control-robot', { ...base(), action: 'mode', robot_id: r.robotId, mode: 'autonomous' })).status === 200, 30_000, `robot ${r.robotId} policy compiled`, 250);
    }
  }, 120_000);

  afterAll(async () => {
    if (sim && sim.exitCode === null) {
      sim.kill('SIGTERM');
      await new Promise((r) => sim!.once('exit', r));
    }
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('lists active robots with capabilities and live status, filtered by online, available and capability', async () => {
    const all = await query({ kind: 'robot' });
    expect(all.status, JSON.stringify(all.body)).toBe(200);
    const ids = all.body.items.map((i: any) => i.robot_id);
    expect(ids.sort()).toEqual([...robots.map((r) => r.robotId), offline].sort());
    expect(ids).not.toContain(inactive);
    const alpha = all.body.items.find((i: any) => i.robot_id === robots[0]!.robotId);
    expect(alpha).toMatchObject({ kind: 'robot', name: 'Mower Alpha', status: { online: true, available: true } });
    expect(alpha.capabilities).toContain('invoke_action');
    expect(typeof alpha.status.battery_pct).toBe('number');
    const parked = all.body.items.find((i: any) => i.robot_id === offline);
    expect(parked.status).toMatchObject({ online: false, available: false, battery_pct: null, latitude: null });

    const online = await query({ kind: 'robot', online: true });
    expect(online.body.items.map((i: any) => i.robot_id).sort()).toEqual(robots.map((r) => r.robotId).sort());
    const notAvailable = await query({ kind: 'robot', available: false });
    expect(notAvailable.body.items.map((i: any) => i.robot_id)).toEqual([offline]);
    const beeping = await query({ kind: 'robot', capability: 'go_to' });
    expect(beeping.body.items).toHaveLength(2);
  });

  it('pages with cursors bound to the kind and the exact filters; numeric and foreign cursors are 400', async () => {
    const first = await query({ kind: 'robot', limit: 1 });
    expect(first.body.items).toHaveLength(1);
    expect(typeof first.body.next_cursor).toBe('string');
    const second = await query({ kind: 'robot', limit: 1, cursor: first.body.next_cursor });
    expect(second.status).toBe(200);
    expect(second.body.items[0].robot_id).not.toBe(first.body.items[0].robot_id);

    const otherFilters = await query({ kind: 'robot', limit: 1, online: true, cursor: first.body.next_cursor });
    expect(otherFilters.status).toBe(400);
    expect(otherFilters.body).toMatchObject({ code: 'bad_request' });
    expect(otherFilters.body.error).toMatch(/cursor/);
    const otherKind = await query({ kind: 'feature', cursor: first.body.next_cursor });
    expect(otherKind.status).toBe(400);
    const numeric = await query({ kind: 'robot', cursor: '100' });
    expect(numeric.status).toBe(400);
    expect(numeric.body.error).toMatch(/numeric offset/);
  });

  it('keeps pages exact while features are inserted and deleted between them', async () => {
    const initial: string[] = [];
    for (let i = 0; i < 9; i++) initial.push(await createFeature(`area ${i}`));
    const deleted = new Set<string>();
    const seen: string[] = [];
    let cursor: string | null = null;
    let page = 0;
    do {
      const res: { status: number; body: any } = await query({ kind: 'feature', limit: 2, ...(cursor ? { cursor } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      seen.push(...res.body.items.map((f: any) => f.feature_id));
      cursor = res.body.next_cursor;
      // Between pages: one new feature, and one feature deleted (one already returned, or one not yet).
      await createFeature(`inserted ${page}`);
      const victim = page % 2 === 0 ? seen[0]! : initial.find((id) => !seen.includes(id) && !deleted.has(id));
      if (victim !== undefined && !deleted.has(victim)) {
        const del = await api(gw.ready.http, d.apiKey, `${featuresPath}/${victim}`, { method: 'DELETE' });
        expect(del.status).toBe(204);
        deleted.add(victim);
      }
      page++;
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length); // nothing repeated
    for (const id of initial) if (!deleted.has(id)) expect(seen).toContain(id); // nothing present throughout skipped
    expect(page).toBeGreaterThan(3);
  });

  it('answers several kinds at once, not pageable, with a report per kind', async () => {
    const res = await query({ kinds: ['robot', 'feature', 'fault', 'operation'], limit: 2 });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.next_cursor).toBeNull();
    const report = Object.fromEntries(res.body.kinds.map((k: any) => [k.kind, k]));
    expect(report.robot).toMatchObject({ count: 2, truncated: true });
    expect(report.feature).toMatchObject({ count: 2, truncated: true });
    expect(report.operation).toMatchObject({ count: 0, truncated: false });
    expect(report.fault).toEqual({ kind: 'fault', count: 0, truncated: false });
    expect(res.body.items.filter((i: any) => i.kind === 'robot')).toHaveLength(2);
    const paged = await query({ kinds: ['robot', 'feature'], cursor: 'abc' });
    expect(paged.status).toBe(400);
  });

  it('serves the fleet-model kinds (fault, field_rule, object) from their modules', async () => {
    for (const kind of ['fault', 'field_rule', 'object']) {
      const res = await query({ kind });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(Array.isArray(res.body.items)).toBe(true);
    }
    // No field rule exists in this fleet; the simulated robots report what their sensors see
    // (src/sim/perception.ts), and query-entities lists exactly the objects the REST list holds.
    expect((await query({ kind: 'field_rule' })).body).toEqual({ items: [], next_cursor: null });
    let objects: any[] = [];
    await until(async () => (objects = (await query({ kind: 'object', limit: 100 })).body.items).length > 0, 20_000, 'a detected object');
    const rest = await api(gw.ready.http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/objects?limit=100`);
    const restIds = new Set(rest.body.items.map((o: any) => o.objectId));
    expect(objects.every((o) => o.kind === 'object' && o.source === 'robot')).toBe(true);
    expect(objects.filter((o) => restIds.has(o.object_id)).length).toBeGreaterThan(0);
    expect((await query({ kind: 'fault', active: true, robot_id: robots[0]!.robotId })).status).toBe(200);
    expect((await query({ kind: 'object', object_class: 'pallet', source: 'robot' })).status).toBe(200);
    expect((await query({ kind: 'field_rule', enabled: true, type: 'keep_out' })).status).toBe(200);
  });

  it('lists templates, schedules and the operation, and mission history needs history:read', async () => {
    const featureId = await createFeature('templated');
    const t = await api(gw.ready.http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/mission-templates`, {
      method: 'POST',
      headers: { 'idempotency-key': randomUUID() },
      body: JSON.stringify({ name: 'Mow north', featureId, capabilities: ['go_to'], steps: [{ kind: 'mow_area', config: {} }] }),
    });
    expect([201, 202], JSON.stringify(t.body)).toContain(t.status);
    const templates = await query({ kind: 'mission_template', capability: 'go_to', enabled: true });
    expect(templates.body.items.map((i: any) => i.mission_id)).toContain(t.body.missionId);
    expect((await query({ kind: 'mission_template', capability: 'no_such' })).body.items).toEqual([]);
    const op = await query({ kind: 'operation' });
    expect(op.body.items).toHaveLength(1);
    // get-runtime-status: the fleet rollup carries the live operation with its steps.
    const rollup = await tool('get-runtime-status', base());
    expect(rollup.body.operation).toMatchObject({ operation_id: op.body.items[0].operation_id, epoch: 0 });
    expect(rollup.body.operation.steps).toEqual([expect.objectContaining({ mission_id: t.body.missionId, enabled: true, active_runs: 0 })]);

    const sched = await tool('schedule-mission', {
      ...base(), mission_id: t.body.missionId, robot_ids: [],
      schedule: { timezone: 'UTC', startTimeMs: Date.now() + 86_400_000, kind: 'once' },
    });
    expect(sched.status).toBe(400); // Idempotency-Key required: proves the body reached the tool
    const withKey = await api(gw.ready.http, d.apiKey, '/v1/agent/schedule-mission', {
      method: 'POST', headers: { 'idempotency-key': randomUUID() },
      body: JSON.stringify({ ...base(), mission_id: t.body.missionId, robot_ids: [], schedule: { timezone: 'UTC', startTimeMs: Date.now() + 86_400_000, kind: 'once' } }),
    });
    expect(withKey.status, JSON.stringify(withKey.body)).toBe(201);
    const missions = await query({ kind: 'scheduled_mission', mission_id: t.body.missionId });
    expect(missions.body.items).toEqual([expect.objectContaining({ kind: 'scheduled_mission', schedule_id: withKey.body.scheduleId, status: 'scheduled' })]);
    expect((await query({ kind: 'scheduled_command' })).body.items).toEqual([]);

    const history = await query({ kind: 'mission_history', robot_id: robots[0]!.robotId });
    expect(history.status).toBe(200);
    const refused = await query({ kind: 'mission_history' }, noHistoryKey);
    expect(refused.status).toBe(403);
    expect(refused.body.error).toMatch(/history:read/);
    const refusedInKinds = await query({ kinds: ['robot', 'mission_history'] }, noHistoryKey);
    expect(refusedInKinds.status).toBe(403);
  });

  it('validates strictly, naming the field', async () => {
    const cases: [Record<string, unknown>, RegExp][] = [
      [{ kind: 'robot', extra: 1 }, /unknown field 'extra'/],
      [{ kind: 'robooot' }, /kind must be one of/],
      [{ kinds: 'robot' }, /kinds must be/],
      [{ kinds: ['robot', 'nope'] }, /kinds\[1\]/],
      [{ kind: 'scheduled_mission', mission_id: 'not-a-uuid' }, /mission_id must be a UUID/],
      [{ kind: 'feature', online: true }, /'online' is not a filter of kind feature/],
      [{ kind: 'robot', kinds: ['robot'] }, /kind or kinds/],
      [{}, /kind/],
      [{ kind: 'robot', online: 'yes' }, /online must be/],
    ];
    for (const [body, message] of cases) {
      const res = await query(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.code).toBe('bad_request');
      expect(res.body.error, JSON.stringify(body)).toMatch(message);
    }
    const badOrg = await tool('query-entities', { org_id: 'x', fleet_id: d.fleetId, kind: 'robot' });
    expect(badOrg.status).toBe(400);
    expect(badOrg.body.error).toMatch(/org_id must be a UUID/);
  });

  it('get-entity: a robot with its advertised descriptors, current settings and assignments; foreign ids 404', async () => {
    const robotId = robots[0]!.robotId;
    const set = await tool('control-robot', { ...base(), action: 'update_settings', robot_id: robotId, settings: { max_speed_mps: 1.5 }, wait_for_ack: true });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    const res = await tool('get-entity', { ...base(), kind: 'robot', id: robotId.toUpperCase() });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toMatchObject({ kind: 'robot', robot_id: robotId, name: 'Mower Alpha', active: true, status: { online: true } });
    const desc = res.body.capability_descriptors;
    expect(desc.has_policy).toBe(true);
    expect(desc.modes).toContain('autonomous');
    expect(desc.actions.find((a: any) => a.name === 'beep').arguments_schema).toMatchObject({ required: ['durationMs'] });
    expect(desc.actions.find((a: any) => a.name === 'dump_diagnostics').arguments_schema).toBeNull();
    expect(desc.settings.map((s: any) => s.key)).toContain('max_speed_mps');
    expect(res.body.current_settings).toEqual([expect.objectContaining({ key: 'max_speed_mps', value: 1.5 })]);
    expect(res.body.assignments).toMatchObject({ active_run: null });

    const parked = await tool('get-entity', { ...base(), kind: 'robot', id: offline });
    expect(parked.body.capability_descriptors).toBeNull();
    for (const id of [foreignRobot, randomUUID()]) {
      const nf = await tool('get-entity', { ...base(), kind: 'robot', id });
      expect(nf.status).toBe(404);
    }
    const noId = await tool('get-entity', { ...base(), kind: 'robot' });
    expect(noId.status).toBe(400);
    const op = await tool('get-entity', { ...base(), kind: 'operation' });
    expect(op.status).toBe(200);
    expect(op.body.steps.length).toBeGreaterThan(0);
    const wrongOp = await tool('get-entity', { ...base(), kind: 'operation', id: randomUUID() });
    expect(wrongOp.status).toBe(404);
    const rule = await tool('get-entity', { ...base(), kind: 'field_rule', id: randomUUID() });
    expect(rule.status).toBe(404);
    const badKind = await tool('get-entity', { ...base(), kind: 'mission_history', id: randomUUID() });
    expect(badKind.status).toBe(400);
  });

  it('resolve: exact first, then case-insensitive; ambiguous names return every match; unmatched listed', async () => {
    const res = await tool('resolve', { ...base(), names: ['Mower Alpha', 'MOWER ALPHA', 'area 3', 'nobody'], kinds: ['robot', 'feature'] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const byQuery = (q: string) => res.body.items.filter((i: any) => i.query === q);
    expect(byQuery('Mower Alpha')).toEqual([{ kind: 'robot', id: robots[0]!.robotId, name: 'Mower Alpha', query: 'Mower Alpha', match: 'exact' }]);
    expect(byQuery('MOWER ALPHA').map((i: any) => i.id).sort()).toEqual(robots.map((r) => r.robotId).sort());
    expect(byQuery('MOWER ALPHA').every((i: any) => i.match === 'case_insensitive')).toBe(true);
    expect(res.body.unmatched).toContain('nobody');
    const bad = await tool('resolve', { ...base(), names: 'Mower Alpha' });
    expect(bad.status).toBe(400);
  });

  it('get-map-context: robot positions and feature geometry; bbox validated, not applied', async () => {
    const res = await tool('get-map-context', { ...base(), include: ['robots', 'features'], bbox: [4.9, 51.9, 5.1, 52.1] });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.bbox_applied).toBe(false);
    const alpha = res.body.robots.find((r: any) => r.robot_id === robots[0]!.robotId);
    expect(typeof alpha.latitude).toBe('number');
    expect(Object.keys(alpha).sort()).toEqual(['elevation_m', 'latitude', 'longitude', 'name', 'online', 'robot_id']);
    expect(res.body.robots.find((r: any) => r.robot_id === offline)).toMatchObject({ latitude: null, longitude: null, elevation_m: null });
    expect(res.body.features[0].geometry.type).toBe('Polygon');
    expect((await tool('get-map-context', { ...base(), include: ['robots'], bbox: [5, 95, 6, 96] })).status).toBe(400);
    expect((await tool('get-map-context', { ...base(), include: ['robots'], bbox: [6, 50, 5, 51] })).status).toBe(400);
    expect((await tool('get-map-context', { ...base(), include: 'robots' })).status).toBe(400);
    const zones = await tool('get-map-context', { ...base(), include: ['field_rules', 'objects'] });
    expect(zones.body).toMatchObject({ bbox_applied: false, field_rules: [], truncated: [] });
    // The simulated robots' detections (src/sim/perception.ts) are the fleet's objects.
    expect(zones.body.objects.every((o: any) => typeof o.latitude === 'number' && typeof o.longitude === 'number')).toBe(true);
  });

  it('explain-capability: robots advertising an action, their state and the arguments it takes', async () => {
    const res = await tool('explain-capability', { ...base(), capability: 'beep' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.items).toHaveLength(1);
    const beep = res.body.items[0];
    expect(beep.capability).toBe('beep');
    expect(beep.robots.map((r: any) => r.robot_id).sort()).toEqual(robots.map((r) => r.robotId).sort());
    expect(beep.robots[0]).toMatchObject({ online: true, arguments_schema: { required: ['durationMs'] } });
    expect(res.body.robots_without_policy).toEqual([offline]);
    const all = await tool('explain-capability', base());
    // Every capability of the robots (the Hello's list and the policy's actions), as query-entities knows them.
    expect(all.body.items.map((i: any) => i.capability)).toEqual(expect.arrayContaining(['beep', 'dump_diagnostics', 'set_lights', 'stop', 'go_to']));
    const none = await tool('explain-capability', { ...base(), capability: 'fly' });
    expect(none.body.items).toEqual([{ capability: 'fly', robots: [] }]);
  });
});
