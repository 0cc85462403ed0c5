/**
 * A mixed fleet through the real `fleetgw serve`: robots of the gRPC robot link (`fleetgw sim`) and
 * third-party VDA 5050 AGVs (vda-5050-lib, embedded broker) in one fleet. One mission template is
 * deployed to each robot of both kinds; every run completes, and the fleet's views list them all.
 */
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { startSim } from '../support/stream-client.js';
import { until } from '../support/until.js';
import { startVirtualAgvs, type VirtualAgv } from '../support/vda-agv.js';
import { addVdaRobot, embeddedBroker } from '../support/vda-gateway.js';

/** A run whose report stays the same this long is stuck (the simulator reports every 500 ms while driving). */
const STALL_MS = 60_000;

describe('gRPC robots and VDA 5050 AGVs in one fleet', () => {
  const d = makeDataDir('fleetgw-vda-mixed-');
  const grpcRobots = [0, 1].map((i) => adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `grpc-${i}`]));
  const vdaRobots = [0, 1].map((i) => addVdaRobot(d.dataDir, d.fleetId, `agv-${i}`, 'Acme', `MIX-${i}`));
  let gw: RunningGateway | undefined;
  let sim: ChildProcess | undefined;
  let agvs: VirtualAgv[] = [];

  afterAll(async () => {
    for (const a of agvs) await a.stop();
    sim?.kill('SIGTERM');
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('one template, deployed to robots of both links, completes on each', async () => {
    const embedded = await embeddedBroker();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...embedded.args]);
    const http = gw.ready.http;
    const post = (path: string, body: unknown, idem?: string) =>
      api(http, d.apiKey, path, { method: 'POST', body: JSON.stringify(body), headers: idem !== undefined ? { 'idempotency-key': idem } : {} });
    sim = await startSim(d.dataDir, gw.ready.grpc, grpcRobots, 10);
    agvs = await startVirtualAgvs(vdaRobots.map((r, i) => ({
      brokerUrl: embedded.url, username: r.robotId, password: r.robotToken, manufacturer: r.manufacturer, serialNumber: r.serialNumber, speedMps: 5, position: { x: i * 5, y: 0 },
    })));
    const all = [...grpcRobots.map((r) => r.robotId), ...vdaRobots.map((r) => r.robotId)];
    await until(async () => {
      const items = (await api(http, d.apiKey, `/v1/robots?fleet_id=${d.fleetId}`)).body as Array<{ id: string; online: boolean }>;
      return all.every((id) => items.find((r) => r.id === id)?.online === true);
    }, 60_000, 'all four robots online');

    // One template: drive to a point of the site (map frame, metres east and north), then wait.
    const fleetBase = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}`;
    const square = { type: 'Polygon', coordinates: [[[4.999, 51.999], [5.002, 51.999], [5.002, 52.002], [4.999, 52.002], [4.999, 51.999]]] };
    const feature = await post(`${fleetBase}/features`, { name: 'yard', geometry: square });
    expect(feature.status).toBe(201);
    const template = await post(`${fleetBase}/mission-templates`, {
      name: 'fetch', featureId: feature.body.featureId, steps: [{ kind: 'drive_to', config: { x_m: 30, y_m: 20 } }, { kind: 'drive_to', config: { x_m: 10, y_m: 5 } }],
    }, randomUUID());
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    const started = await post('/v1/agent/control-operation', { org_id: d.orgId, fleet_id: d.fleetId, action: 'start', operation_id: template.body.operationId });
    expect(started.status).toBe(200);

    const schedules = new Map<string, string>();
    for (const robotId of all) {
      const deployed = await post('/v1/agent/deploy-mission', { org_id: d.orgId, fleet_id: d.fleetId, mission_id: template.body.missionId, robot_ids: [robotId] }, randomUUID());
      expect(deployed.status, JSON.stringify(deployed.body)).toBe(202);
      schedules.set(robotId, deployed.body.scheduleId as string);
    }
    // One list call per poll, twice a second: the key's request rate stays far below its limit.
    const runs = async (): Promise<Array<{ state: string; robotId: string; scheduleId: string; missionProgressPct: number; remainingDistanceM: number; currentStepIndex: number }>> => {
      const r = await api(http, d.apiKey, `/v1/mission-runs?fleet_id=${d.fleetId}&days=1`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body.items;
    };
    // The simulator's robots start anywhere in its 300 m depot and cruise at 1.2-2 m/s, both drawn from
    // the robot id (src/sim/robot-model.ts): a run may drive 250 m, over 200 s. So the wait is for
    // every run to complete as long as each keeps moving; one whose report does not change for
    // STALL_MS fails the test at once.
    const lastChange = new Map<string, { key: string; atMs: number }>();
    const completed = async (): Promise<boolean> => {
      const items = await runs();
      const now = Date.now();
      for (const robotId of all) {
        const r = items.find((x) => x.scheduleId === schedules.get(robotId));
        if (r?.state === 'completed') continue;
        const key = r === undefined ? 'no run' : `${r.state}|${r.missionProgressPct}|${r.remainingDistanceM}|${r.currentStepIndex}`;
        const seen = lastChange.get(robotId);
        if (seen === undefined || seen.key !== key) lastChange.set(robotId, { key, atMs: now });
        else if (now - seen.atMs > STALL_MS) throw new Error(`the run of robot ${robotId} made no progress for ${STALL_MS / 1000} s: ${JSON.stringify(r ?? null)}`);
      }
      return all.every((robotId) => items.some((r) => r.scheduleId === schedules.get(robotId) && r.state === 'completed'));
    };
    await until(completed, 360_000, 'every run completed', 500);
    const items = await runs();
    for (const robotId of all) expect(items.filter((r) => r.scheduleId === schedules.get(robotId))).toEqual([expect.objectContaining({ robotId, state: 'completed' })]);
    // The AGVs drove the template's points as one order, and ended at its last one.
    for (const agv of agvs) {
      expect(agv.orders.map((o) => o.orderId)).toHaveLength(1);
      const p = agv.state().agvPosition!;
      expect(p.x).toBeCloseTo(10, 0);
      expect(p.y).toBeCloseTo(5, 0);
    }
  }, 480_000);
});
