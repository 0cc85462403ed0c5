/**
 * A mission run on a VDA 5050 AGV (vda-5050-lib, embedded broker) through the real `fleetgw serve`,
 * with the gateway SIGKILLed while the AGV is mid-order and started again on the same data dir. Master
 * control then sees the robot run `mission:{runId}` without having sent it in this process: it
 * rebuilds the order from the run's MissionStart, so the run's progress goes on rising from where it
 * was (not estimated afresh from the nodes left), each report's step index is the template step of the
 * node reached (a step without a place makes node and step numbers differ), and the run completes
 * at its last step with its mission id.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';
import { startVirtualAgv, type VirtualAgv } from '../support/vda-agv.js';
import { addVdaRobot, embeddedBroker } from '../support/vda-gateway.js';

interface Run { runId: string; missionId: string; state: string; missionProgressPct: number; currentStepIndex: number }

// Five places 12 m apart on the x axis, a step without a place (a 1 s noop on the node reached
// before it) after the second: order nodes are the start node and steps 0, 1, 3, 4, 5.
const STEPS = [
  { kind: 'drive_to', config: { x_m: 12, y_m: 0 } },
  { kind: 'drive_to', config: { x_m: 24, y_m: 0 } },
  { kind: 'noop', config: { duration: 1 } },
  { kind: 'drive_to', config: { x_m: 36, y_m: 0 } },
  { kind: 'drive_to', config: { x_m: 48, y_m: 0 } },
  { kind: 'drive_to', config: { x_m: 60, y_m: 0 } },
];
const STEP_OF_NODE = [-1, 0, 1, 3, 4, 5];
const LEGS = STEP_OF_NODE.length - 1;
// Slow enough that the AGV is still under way when the restarted gateway reads its state: 60 m at
// 1 m/s, the kill after the first 12 m (a restart has the other 48 s, a loaded machine's included).
const SPEED_MPS = 1;

describe('a VDA 5050 mission run across a gateway kill -9', () => {
  const d = makeDataDir('fleetgw-vda-mission-restart-');
  const robot = addVdaRobot(d.dataDir, d.fleetId, 'agv-1', 'Acme', 'RESTART-1');
  let gw: RunningGateway | undefined;
  let agv: VirtualAgv | undefined;

  afterAll(async () => {
    await agv?.stop();
    await gw?.stop('SIGKILL');
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('keeps the run\'s progress, step and mission id after the restart, and completes it at its last step', async () => {
    const embedded = await embeddedBroker();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...embedded.args]);
    let http = gw.ready.http;
    const post = (path: string, body: unknown, idem?: string) =>
      api(http, d.apiKey, path, { method: 'POST', body: JSON.stringify(body), headers: idem !== undefined ? { 'idempotency-key': idem } : {} });
    // The AGV reconnects by itself once the restarted gateway's broker listens again (same port).
    agv = await startVirtualAgv({ brokerUrl: embedded.url, username: robot.robotId, password: robot.robotToken, manufacturer: robot.manufacturer, serialNumber: robot.serialNumber, speedMps: SPEED_MPS });
    const online = async (): Promise<boolean> => ((await api(http, d.apiKey, `/v1/robots?fleet_id=${d.fleetId}`)).body as Array<{ id: string; online: boolean }>).some((r) => r.id === robot.robotId && r.online);
    await until(online, 60_000, 'the AGV online', 250);

    const fleetBase = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}`;
    const square = { type: 'Polygon', coordinates: [[[4.999, 51.999], [5.002, 51.999], [5.002, 52.002], [4.999, 52.002], [4.999, 51.999]]] };
    const feature = await post(`${fleetBase}/features`, { name: 'yard', geometry: square });
    expect(feature.status, JSON.stringify(feature.body)).toBe(201);
    const template = await post(`${fleetBase}/mission-templates`, { name: 'line', featureId: feature.body.featureId, steps: STEPS }, randomUUID());
    expect(template.status, JSON.stringify(template.body)).toBe(201);
    const missionId = template.body.missionId as string;
    expect((await post('/v1/agent/control-operation', { org_id: d.orgId, fleet_id: d.fleetId, action: 'start', operation_id: template.body.operationId })).status).toBe(200);
    const deployed = await post('/v1/agent/deploy-mission', { org_id: d.orgId, fleet_id: d.fleetId, mission_id: missionId, robot_ids: [robot.robotId] }, randomUUID());
    expect(deployed.status, JSON.stringify(deployed.body)).toBe(202);

    const run = async (): Promise<Run | undefined> => {
      const r = await api(http, d.apiKey, `/v1/mission-runs?fleet_id=${d.fleetId}&days=1`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.items as Run[])[0];
    };
    // Before the kill: the AGV has reached the first place (one of five legs), and the run says so.
    await until(async () => ((await run())?.missionProgressPct ?? 0) >= 100 / LEGS - 0.01, 60_000, 'the run at 20 %', 250);
    const before = (await run())!;
    const stepAt = (pct: number): number | undefined => STEP_OF_NODE[Math.round((pct / 100) * LEGS)];
    expect(before).toMatchObject({ missionId, state: 'running', currentStepIndex: stepAt(before.missionProgressPct) });
    const orderId = `mission:${before.runId}`;
    expect(agv.state().orderId).toBe(orderId);
    expect(agv.orders.map((o) => o.orderId)).toEqual([orderId]);

    await gw.stop('SIGKILL');
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...embedded.args]);
    http = gw.ready.http;
    await until(online, 60_000, 'the AGV online again', 250);
    // The restarted gateway read the AGV still under way: otherwise this test shows nothing.
    const first = (await run())!;
    expect(agv.state().nodeStates.length, 'the AGV finished before the restarted gateway read its state: slow it down').toBeGreaterThan(0);

    // Every report from here on: never below the progress before the kill, the step that of the node reached.
    const seen: Run[] = [first];
    await until(async () => {
      const r = (await run())!;
      seen.push(r);
      return r.state === 'completed';
    }, 120_000, 'the run completed', 250);
    for (const r of seen) {
      expect(r).toMatchObject({ runId: before.runId, missionId });
      expect(r.missionProgressPct).toBeGreaterThanOrEqual(before.missionProgressPct);
      expect(r.currentStepIndex, `at ${r.missionProgressPct} %`).toBe(stepAt(r.missionProgressPct));
    }
    const done = seen[seen.length - 1]!;
    expect(done).toMatchObject({ state: 'completed', missionProgressPct: 100, currentStepIndex: STEPS.length - 1 });
    // The order the restarted gateway knew is the one sent: not sent again, driven to its end.
    expect(agv.orders.map((o) => o.orderId)).toEqual([orderId]);
    expect(agv.state().agvPosition!.x).toBeCloseTo(60, 0);
    expect(gw.stderr()).not.toContain('whose run this gateway does not know');
  }, 360_000);
});
