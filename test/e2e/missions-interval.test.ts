/**
 * Real time, real process: `fleetgw serve` (from dist) with simulated robots on gRPC. A schedule with
 * a 1-second interval fires three times, each fire deploying a run that a robot executes; a restart
 * of the gateway process in the middle loses nothing and fires nothing twice.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSimFleet, type SimFleet } from '../../src/sim/fleet.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';


describe('missions over the real gateway process', () => {
  const d = makeDataDir('fleetgw-e2e-missions-');
  const creds = Array.from({ length: 2 }, (_, i) => adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `m${i}`, '--json']));
  let gw: RunningGateway;
  let sim: SimFleet;
  const post = (path: string, body: unknown, idem = true) =>
    api(gw.ready.http, d.apiKey, path, { method: 'POST', body: JSON.stringify(body), headers: idem ? { 'idempotency-key': randomUUID() } : {} });

  beforeAll(async () => {
    gw = await startGatewayProcess(d.dataDir);
    sim = runSimFleet({ grpc: gw.ready.grpc, robots: creds, hz: 5 });
  });
  afterAll(async () => {
    await sim.stop();
    await gw.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('an interval of 1 s fires 3 times, each deploying a run; a restart loses nothing', async () => {
    const base = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}`;
    const feature = await post(`${base}/features`, { name: 'yard', geometry: { type: 'Polygon', coordinates: [[[8, 47], [8.001, 47], [8.001, 47.001], [8, 47]]] } });
    expect(feature.status).toBe(201);
    const tpl = await post(`${base}/mission-templates`, { name: 'patrol', featureId: feature.body.featureId, steps: [{ kind: 'wait', config: { seconds: 0.2 } }] });
    expect(tpl.status).toBe(201);
    expect((await post('/v1/agent/control-operation', { org_id: d.orgId, fleet_id: d.fleetId, action: 'start' }, false)).status).toBe(200);
    await until(() => sim.stats().connected === 2, 10_000, 'robots connected');

    const res = await post('/v1/agent/schedule-mission', {
      org_id: d.orgId,
      fleet_id: d.fleetId,
      mission_id: tpl.body.missionId,
      robot_ids: [],
      schedule: { timezone: 'Europe/Zurich', startTimeMs: Date.now() + 500, kind: { interval: { everySeconds: 1 } } },
    });
    expect(res.status).toBe(201);
    const id = res.body.scheduleId as string;
    const runs = async (): Promise<{ runId: string; scheduleId: string; state: string }[]> =>
      (await api(gw.ready.http, d.apiKey, `/v1/mission-runs?fleet_id=${d.fleetId}&days=1&schedule_id=${id}`)).body.items;
    await until(async () => (await runs()).length >= 3, 15_000, 'three runs');
    const cancel = await post('/v1/agent/cancel-schedule', { org_id: d.orgId, fleet_id: d.fleetId, schedule_id: id }, false);
    expect(cancel.status).toBe(200);
    await until(async () => (await runs()).every((r) => r.state === 'completed'), 10_000, 'runs completed');
    const done = await runs();
    expect(done.length).toBeGreaterThanOrEqual(3);
    expect(new Set(done.map((r) => r.runId)).size).toBe(done.length);
    for (const r of done) expect(r.scheduleId).toBe(id);
    // A cancelled schedule leaves the schedule reads; its timeline (below) keeps every fire.
    expect((await api(gw.ready.http, d.apiKey, `/v1/mission-schedule?fleet_id=${d.fleetId}&id=${id}`)).status).toBe(404);

    // Restart the process: the schedule, its runs and its timeline are all still there, and the
    // cancelled schedule does not fire again.
    await gw.stop();
    const before = done.length;
    gw = await startGatewayProcess(d.dataDir);
    await sim.stop();
    sim = runSimFleet({ grpc: gw.ready.grpc, robots: creds, hz: 5 });
    // The scheduler fires in due-time order: once a schedule due two seconds from now has deployed
    // its run, the cancelled one (every second) would have fired before it.
    const anchor = await post('/v1/agent/schedule-mission', {
      org_id: d.orgId, fleet_id: d.fleetId, mission_id: tpl.body.missionId, robot_ids: [],
      schedule: { timezone: 'UTC', startTimeMs: Date.now() + 2000, kind: 'once' },
    });
    expect(anchor.status).toBe(201);
    const anchorRuns = async (): Promise<unknown[]> =>
      (await api(gw.ready.http, d.apiKey, `/v1/mission-runs?fleet_id=${d.fleetId}&days=1&schedule_id=${anchor.body.scheduleId as string}`)).body.items;
    await until(async () => (await anchorRuns()).length === 1, 15_000, 'the later once-schedule to deploy its run');
    expect((await runs()).length).toBe(before);
    const events = await api(gw.ready.http, d.apiKey, `/v1/events?fleet_id=${d.fleetId}&correlation_id=${res.body.correlationId}&limit=1000`);
    const kinds = (events.body.items as { kind: string }[]).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'schedule.deployed')).toHaveLength(before);
    expect(kinds).toContain('schedule.cancelled');
  }, 60_000);
});
