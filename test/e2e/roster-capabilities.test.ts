// Roster checks through the real `fleetgw serve` with a `fleetgw sim` robot on the real robot link:
// a robot qualifies for a template's roster with its capabilities as every read and the dispatcher
// count them (registered plus what its latest Hello advertised, policy actions included), on
// template create, template edit and control-operation `assign_robot`. A robot whose registration
// lacks a capability and that advertised nothing is refused with 400.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { startSim } from '../support/stream-client.js';
import { until } from '../support/until.js';

const SQUARE = { type: 'Polygon', coordinates: [[[5, 52], [5.001, 52], [5.001, 52.001], [5, 52.001], [5, 52]]] };
// `go_to` is in the simulator's Hello capabilities, `beep` an action of its command policy; neither is registered.
const REQUIRED = ['go_to', 'beep'];

describe('roster checks count advertised capabilities', () => {
  const d = makeDataDir('fleetgw-roster-');
  let gw: RunningGateway;
  let sim: ChildProcess | undefined;
  let online: { robotId: string; robotToken: string };
  let silent: string;
  const base = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}`;
  const post = (path: string, body: Record<string, unknown>) =>
    api(gw.ready.http, d.apiKey, path, { method: 'POST', headers: { 'idempotency-key': randomUUID() }, body: JSON.stringify(body) });
  let featureId: string;
  const createTemplate = (roster: string[]) => post(`${base}/mission-templates`, { name: 'Mow', featureId, capabilities: REQUIRED, roster, steps: [{ kind: 'mow_area', config: {} }] });
  const assign = (missionId: string, robotId: string) =>
    post('/v1/agent/control-operation', { org_id: d.orgId, fleet_id: d.fleetId, action: 'assign_robot', mission_id: missionId, robot_id: robotId });

  beforeAll(async () => {
    online = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'Mower', '--capabilities', 'mow']);
    silent = adminJson<{ robotId: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'Parked', '--capabilities', 'mow']).robotId;
    gw = await startGatewayProcess(d.dataDir);
    sim = await startSim(d.dataDir, gw.ready.grpc, [online], 5);
    // Its Hello reached the gateway: query-entities counts the advertised capabilities.
    await until(async () => {
      const res = await post('/v1/agent/query-entities', { org_id: d.orgId, fleet_id: d.fleetId, kind: 'robot', capability: 'beep' });
      return res.status === 200 && res.body.items.some((i: any) => i.robot_id === online.robotId);
    }, 30_000, 'robot advertising beep');
    const feature = await post(`${base}/features`, { name: 'Lawn', geometry: SQUARE });
    expect(feature.status, JSON.stringify(feature.body)).toBe(201);
    featureId = feature.body.featureId;
  }, 90_000);

  afterAll(async () => {
    if (sim && sim.exitCode === null) {
      sim.kill('SIGTERM');
      await new Promise((r) => sim!.once('exit', r));
    }
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('takes a robot that advertised the capabilities onto a roster on create, edit and assign_robot', async () => {
    const created = await createTemplate([online.robotId]);
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body.template.roster).toEqual([online.robotId]);

    const open = await createTemplate([]);
    expect(open.status, JSON.stringify(open.body)).toBe(201);
    const edited = await api(gw.ready.http, d.apiKey, `${base}/mission-templates/${open.body.missionId}`, { method: 'PUT', body: JSON.stringify({ roster: [online.robotId] }) });
    expect(edited.status, JSON.stringify(edited.body)).toBe(200);
    expect(edited.body.template.roster).toEqual([online.robotId]);

    const other = await createTemplate([]);
    expect(other.status, JSON.stringify(other.body)).toBe(201);
    const assigned = await assign(other.body.missionId, online.robotId);
    expect(assigned.status, JSON.stringify(assigned.body)).toBe(200);
    expect(assigned.body.template.roster).toEqual([]); // an open roster stays open
  });

  it('refuses a robot whose registration lacks a capability and that advertised nothing (400)', async () => {
    const created = await createTemplate([silent]);
    expect(created.status).toBe(400);
    expect(created.body.error).toContain(`Robot ${silent} does not advertise capability go_to`);

    const t = await createTemplate([online.robotId]);
    expect(t.status, JSON.stringify(t.body)).toBe(201);
    const edited = await api(gw.ready.http, d.apiKey, `${base}/mission-templates/${t.body.missionId}`, { method: 'PUT', body: JSON.stringify({ roster: [online.robotId, silent] }) });
    expect(edited.status).toBe(400);
    expect(edited.body.error).toContain(`Robot ${silent} does not advertise capability go_to`);
    const assigned = await assign(t.body.missionId, silent);
    expect(assigned.status).toBe(400);
    expect(assigned.body.error).toContain(`Robot ${silent} does not advertise capability go_to`);
  });
});
