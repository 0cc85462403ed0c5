/**
 * Real process: `fleetgw serve` with simulated robots over the real robot link (issue 10 part 6).
 *  - mission progress reaches the robot snapshot (`GET /v1/robots/{id}`, the live stream) while
 *    get-runtime-status shows it;
 *  - `PATCH /v1/robots/{id}`: metadata, strict input, 409 while a mission runs or a command is
 *    undelivered, and the transfer of an online robot: both timelines, rosters, reconnect into the
 *    new fleet, commands through the old fleet refused, through the new one delivered;
 *  - `GET /v1/mission-runs` lists finished runs to any `fleet:read` key.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { runSimFleet, type SimFleet } from '../../src/sim/fleet.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

describe('robot administration and mission progress over the real gateway process', () => {
  const d = makeDataDir('fleetgw-e2e-robot-admin-');
  const fleetB = adminJson<{ fleetId: string }>(['create-fleet', '--data-dir', d.dataDir, '--org', d.orgId, '--name', 'B', '--json']).fleetId;
  const other = adminJson<{ orgId: string; fleetId: string; apiKey: string }>(['init', '--data-dir', d.dataDir, '--another-org', '--org', 'Other', '--fleet', 'X', '--json']);
  const otherRobot = adminJson<{ robotId: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', other.fleetId, '--name', 'x0', '--json']).robotId;
  const creds = Array.from({ length: 2 }, (_, i) => adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `r${i}`, '--json']));
  const offline = adminJson<{ robotId: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'parked', '--json']).robotId;
  const [r0, r1] = creds.map((c) => c.robotId) as [string, string];
  const noHistory = adminJson<{ apiKey: string }>(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--permissions', 'fleet:read,robots:read,operations:read', '--json']).apiKey;
  const scopedA = adminJson<{ apiKey: string }>(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--fleet', d.fleetId, '--permissions', 'robots:write,robots:read', '--json']).apiKey;
  const base = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}`;
  let gw: RunningGateway;
  let sim: SimFleet;
  const call = (path: string, init: RequestInit = {}, key = d.apiKey) => api(gw.ready.http, key, path, init);
  const post = (path: string, body: unknown, key = d.apiKey, idem = false) =>
    call(path, { method: 'POST', body: JSON.stringify(body), headers: idem ? { 'idempotency-key': randomUUID() } : {} }, key);
  const patch = (robotId: string, body: unknown, key = d.apiKey) => call(`/v1/robots/${robotId}`, { method: 'PATCH', body: JSON.stringify(body) }, key);
  const timeline = async (fleetId: string, correlationId: string, key = d.apiKey): Promise<{ kind: string; data: Record<string, unknown> }[]> =>
    (await call(`/v1/events?fleet_id=${fleetId}&correlation_id=${correlationId}&limit=1000`, {}, key)).body.items;

  beforeAll(async () => {
    gw = await startGatewayProcess(d.dataDir);
    sim = runSimFleet({ grpc: gw.ready.grpc, robots: creds, hz: 5 });
    await until(() => sim.stats().connected === 2, 15_000, 'robots connected');
  });
  afterAll(async () => {
    await sim.stop();
    await gw.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  let missionId = '';
  let runId = '';

  it('a running mission shows in the robot snapshot and the live stream, as in get-runtime-status', async () => {
    const feature = await post(`${base}/features`, { name: 'yard', geometry: { type: 'Polygon', coordinates: [[[5, 52], [5.001, 52], [5.001, 52.001], [5, 52]]] } });
    expect(feature.status).toBe(201);
    const tpl = await post(`${base}/mission-templates`, { name: 'long drive', featureId: feature.body.featureId, steps: [{ kind: 'drive_to', config: { distance_m: 200 } }] }, d.apiKey, true);
    expect(tpl.status).toBe(201);
    missionId = tpl.body.missionId;
    expect((await post('/v1/agent/control-operation', { org_id: d.orgId, fleet_id: d.fleetId, action: 'start' })).status).toBe(200);

    // The live stream, subscribed to r0 before the run starts.
    const t = await post('/v1/telemetry/stream-tickets', { org_id: d.orgId, fleet_id: d.fleetId });
    expect(t.status).toBe(201);
    const ws = new WebSocket(t.body.url);
    const live: { mission: unknown }[] = [];
    ws.on('message', (data: Buffer) => {
      const m = JSON.parse(data.toString('utf8'));
      if (m.robot_id === r0) live.push(m);
    });
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    ws.send(JSON.stringify({ op: 'subscribe', ticket: t.body.ticket, robot_ids: [r0], encoding: 'json' }));

    const dep = await post('/v1/agent/deploy-mission', { org_id: d.orgId, fleet_id: d.fleetId, mission_id: missionId, robot_ids: [r0] }, d.apiKey, true);
    expect(dep.status).toBe(202);
    const status = async () => (await post('/v1/agent/get-runtime-status', { org_id: d.orgId, fleet_id: d.fleetId, robot_id: r0 })).body;
    await until(async () => (await status()).mission_progress_pct > 0, 20_000, 'runtime status shows progress');
    runId = (await status()).assignment.run_id;
    await until(async () => {
      const v = (await call(`/v1/robots/${r0}`)).body;
      return v.missionState === 'running' && v.missionProgressPct > 0;
    }, 10_000, 'snapshot shows the mission');
    const view = (await call(`/v1/robots/${r0}`)).body;
    expect(view.statusTelemetry.mission).toMatchObject({ runId, missionState: 'running' });
    expect(view.statusTelemetry.mission.missionProgressPct).toBeGreaterThan(0);
    expect(view.statusTelemetry.mission.remainingDistanceM).toBeGreaterThan(0);
    await until(() => live.some((m) => m.mission !== null && (m.mission as { run_id?: string }).run_id === runId), 10_000, 'live stream mission');
    ws.close();
  }, 60_000);

  it('PATCH: metadata and strict input; a robot running a mission or with an undelivered command is not moved (409)', async () => {
    const ok = await patch(r0, { name: 'Mower 1', labels: { zone: 'north', 'model.v': 'x2' }, notes: 'new blades 2026-11' });
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({ id: r0, name: 'Mower 1', labels: { zone: 'north', 'model.v': 'x2' }, notes: 'new blades 2026-11', fleetId: d.fleetId });
    expect((await call(`/v1/robots/${r0}`)).body).toMatchObject({ name: 'Mower 1', notes: 'new blades 2026-11' });
    expect((await timeline(d.fleetId, r0)).map((e) => e.kind)).toContain('robot.updated');

    for (const [body, field] of [[{ nam: 'x' }, 'nam'], [{ labels: { 'Bad Key': 'v' } }, 'labels'], [{ fleet_id: 'nope' }, 'fleet_id'], [{ active: 'yes' }, 'active']] as const) {
      const bad = await patch(r0, body);
      expect(bad.status, JSON.stringify(body)).toBe(400);
      expect(bad.body.code).toBe('bad_request');
      expect(bad.body.error).toContain(field);
    }
    expect((await patch(r0, {})).status).toBe(400);
    expect((await patch(otherRobot, { name: 'x' })).status).toBe(404);
    expect((await patch(r1, { fleet_id: other.fleetId })).status).toBe(404);
    expect((await patch(r1, { fleet_id: fleetB }, scopedA)).status).toBe(403);

    const busy = await patch(r0, { fleet_id: fleetB });
    expect(busy.status).toBe(409);
    expect(busy.body.error).toContain(runId);

    // An offline robot with a deferred stop: not moved, and the stop stays queued for it.
    const stop = await post('/v1/agent/control-robot', { org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_id: offline });
    expect(stop.body.outcomes[0].delivery.state).toBe('deferred');
    const held = await patch(offline, { fleet_id: fleetB });
    expect(held.status).toBe(409);
    expect(held.body.error).toContain('not yet acknowledged');
    expect((await call(`/v1/robot-commands/${stop.body.outcomes[0].delivery.commandId}`)).body.state).toBe('deferred');
    expect((await call(`/v1/robots/${offline}`)).body.fleetId).toBe(d.fleetId);
  }, 30_000);

  it('GET /v1/mission-runs: active and finished runs for any fleet:read key (history:read is for mission_history)', async () => {
    const runs = async (key: string) => (await call(`/v1/mission-runs?fleet_id=${d.fleetId}&days=1`, {}, key)).body.items as { runId: string; state: string }[];
    expect((await runs(noHistory)).map((r) => r.runId)).toContain(runId);
    const cancel = await post('/v1/agent/control-mission', { org_id: d.orgId, fleet_id: d.fleetId, robot_id: r0, mission_id: missionId, action: 'cancel', wait_for_ack: true });
    expect(cancel.status).toBe(200);
    await until(async () => (await runs(d.apiKey)).find((r) => r.runId === runId)?.state === 'cancelled', 10_000, 'run cancelled');
    expect((await runs(noHistory)).find((r) => r.runId === runId)?.state).toBe('cancelled');
    await until(async () => (await call(`/v1/robots/${r0}`)).body.missionState === null, 10_000, 'snapshot mission cleared');
  }, 30_000);

  it('transfer of an online robot: one transaction, both timelines, rosters, reconnect into the new fleet, commands only there', async () => {
    // A closed roster of r0 and r1 (removing the third robot from the open roster lists the others): r1 leaves it.
    expect((await post('/v1/agent/control-operation', { org_id: d.orgId, fleet_id: d.fleetId, action: 'unassign_robot', mission_id: missionId, robot_id: offline })).status).toBe(200);
    expect([...(await call(`${base}/mission-templates/${missionId}`)).body.roster].sort()).toEqual([r0, r1].sort());
    const connectsBefore = sim.robots[1]!.agent.stats().connects;
    const moved = await patch(r1, { fleet_id: fleetB, name: 'r1 (B)' });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({ id: r1, fleetId: fleetB, name: 'r1 (B)' });
    const outA = (await timeline(d.fleetId, r1)).find((e) => e.kind === 'robot.transferred_out');
    const inB = (await timeline(fleetB, r1)).find((e) => e.kind === 'robot.transferred_in');
    expect(outA?.data).toMatchObject({ fromFleetId: d.fleetId, toFleetId: fleetB, rostersLeft: [missionId] });
    expect(inB?.data).toMatchObject({ fromFleetId: d.fleetId, toFleetId: fleetB });
    expect((await call(`${base}/mission-templates/${missionId}`)).body.roster).toEqual([r0]);
    expect((await call(`/v1/robots?fleet_id=${d.fleetId}`)).body.map((r: { id: string }) => r.id)).not.toContain(r1);
    expect((await call(`/v1/robots?fleet_id=${fleetB}`)).body.map((r: { id: string }) => r.id)).toEqual([r1]);

    // The old session was closed; the agent reconnected into fleet B.
    await until(() => sim.robots[1]!.agent.stats().connects > connectsBefore && sim.robots[1]!.agent.connected, 10_000, 'r1 reconnected');
    await until(async () => (await call(`/v1/robots/${r1}`)).body.online === true, 10_000, 'r1 online');

    // Through the old fleet: 404, nothing sent. Through the new one: delivered and applied once.
    const applied = sim.robots[1]!.agent.stats().commandsApplied;
    const viaA = await post(`${base}/robots/${r1}/mode`, { mode: 'docking', wait_for_ack: true });
    expect(viaA.status).toBe(404);
    const viaB = await post(`/v1/orgs/${d.orgId}/fleets/${fleetB}/robots/${r1}/mode`, { mode: 'docking', wait_for_ack: true });
    expect(viaB.status).toBe(200);
    expect(viaB.body.delivery.state).toBe('agent_received');
    expect(sim.robots[1]!.agent.stats().commandsApplied).toBe(applied + 1);
    expect(sim.robots[1]!.agent.stats().duplicateCommands).toBe(0);
    // The old fleet's stop-all no longer reaches it (r0 and the parked robot only).
    const stopAll = await post(`${base}/stop-all`, { reason: 'after the move', wait_for_ack_ms: 2000 });
    expect(stopAll.body.outcomes.map((o: { robotId: string }) => o.robotId).sort()).toEqual([r0, offline].sort());
    // A command through the new fleet, on the same ordered stream: once it is acknowledged, a stop
    // from the old fleet's stop-all would have arrived before it.
    const anchor = await post(`/v1/orgs/${d.orgId}/fleets/${fleetB}/robots/${r1}/mode`, { mode: 'docking', wait_for_ack: true });
    expect(anchor.body.delivery.state).toBe('agent_received');
    expect(sim.robots[1]!.agent.stats().commandsApplied).toBe(applied + 2);
    const audit = (await call(`/v1/audit-log?fleet_id=${fleetB}`)).body.items as { robotId: string; action: string }[];
    expect(audit.some((a) => a.robotId === r1 && a.action === 'mode')).toBe(true);

    // Telemetry after the move lands in fleet B's view of the robot.
    const seen = (await call(`/v1/robots/${r1}`)).body.lastSeenMs as number;
    await until(async () => (await call(`/v1/robots/${r1}`)).body.lastSeenMs > seen, 10_000, 'telemetry after the move');

    // Moving it back works the same way; the transfer survives a restart.
    await gw.stop();
    gw = await startGatewayProcess(d.dataDir);
    await sim.stop();
    sim = runSimFleet({ grpc: gw.ready.grpc, robots: creds, hz: 5 });
    expect((await call(`/v1/robots/${r1}`)).body).toMatchObject({ fleetId: fleetB, name: 'r1 (B)' });
    expect((await call(`/v1/robots/${r0}`)).body).toMatchObject({ labels: { zone: 'north', 'model.v': 'x2' } });
  }, 60_000);
});
