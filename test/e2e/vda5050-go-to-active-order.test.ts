/**
 * A go-to for a VDA 5050 robot that is still driving an order, through the real `fleetgw serve` and
 * a vda-5050-lib AGV (a third-party stack): the gateway publishes the new order (a new `orderId`
 * starting where the robot stands); the AGV refuses it, since it neither is idle nor extends the
 * active order's base, and reports an `orderUpdateError` naming that order id in its state; the
 * command's delivery is `agent_rejected` with the robot's reason (the go-to answers 422
 * `policy_rejected`, as for any agent's refusal), the robot's error shows as a warning fault, and the
 * first order drives on.
 * The way out: `release` (instant action `cancelOrder`) ends the active order, then the go-to is taken.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MapFrame } from '../../src/vda5050/link/map-frame.js';
import { api, makeDataDir, startGatewayProcess, untilPoliciesCompiled, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';
import { startVirtualAgv, type VirtualAgv } from '../support/vda-agv.js';
import { addVdaRobot, embeddedBroker, type VdaRobot } from '../support/vda-gateway.js';

const frame = new MapFrame();

describe('a go-to sent to a VDA 5050 robot that drives an order', () => {
  const d = makeDataDir('fleetgw-vda-busy-');
  let gw: RunningGateway;
  let robot: VdaRobot;
  let agv: VirtualAgv | undefined;

  beforeAll(async () => {
    robot = addVdaRobot(d.dataDir, d.fleetId, 'busy', 'Acme', 'BUSY-1');
    const broker = await embeddedBroker();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...broker.args]);
    // 1 m/s: the first order (100 m) is still under way when the second go-to arrives.
    agv = await startVirtualAgv({ brokerUrl: broker.url, username: robot.robotId, password: robot.robotToken, manufacturer: robot.manufacturer, serialNumber: robot.serialNumber, speedMps: 1, stateMs: 500 });
  });

  afterAll(async () => {
    await agv?.stop().catch(() => undefined);
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  const goTo = (x: number, y: number): Promise<{ status: number; body: any }> =>
    api(gw.ready.http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${robot.robotId}/go-to`, {
      method: 'POST',
      body: JSON.stringify({ ...frame.toLatLon(x, y), wait_for_ack_ms: 10_000 }),
    });

  it('is agent_rejected with the robot\'s orderUpdateError; after release a go-to is agent_received', async () => {
    await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robots/${robot.robotId}`)).body.online === true, 30_000, 'the AGV online', 100);
    await untilPoliciesCompiled(gw.ready.http, d.apiKey, d.orgId, d.fleetId, [robot.robotId]);

    const first = await goTo(100, 0);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    expect(first.body.delivery.state).toBe('agent_received');
    const firstOrder = first.body.delivery.commandId as string;
    await until(() => agv!.state().driving, 10_000, 'the AGV driving the first order');

    // A second go-to while the first order is active.
    const second = await goTo(0, 50);
    // A refusal by the robot answers like any agent's: 422 policy_rejected with the robot's reason.
    expect(second.status, JSON.stringify(second.body)).toBe(422);
    expect(second.body).toMatchObject({
      code: 'policy_rejected',
      error: 'The robot agent rejected the command: orderUpdateError: stitching order base not extending active order base.',
      details: { robotId: robot.robotId, delivery: { state: 'agent_rejected', retryBudgetExhausted: false } },
    });
    const secondId = second.body.details.delivery.commandId as string;
    // It reached the robot once; the robot drives the first order on.
    expect(agv!.orders.map((o) => o.orderId)).toEqual([firstOrder, secondId]);
    expect(agv!.state().orderId).toBe(firstOrder);
    expect(agv!.state().driving).toBe(true);
    const record = await api(gw.ready.http, d.apiKey, `/v1/robot-commands/${secondId}`);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({
      action: 'go_to',
      state: 'agent_rejected',
      rejectReason: 'orderUpdateError: stitching order base not extending active order base',
      ackSource: 'agent',
      attempts: 1,
      retryBudgetExhausted: false,
    });

    // The robot's error is also a warning fault of the robot, naming the refused order.
    const faults = async (): Promise<any[]> => (await api(gw.ready.http, d.apiKey, `/v1/robots/${robot.robotId}/faults`)).body.items as any[];
    const refusal = async (): Promise<any> => (await faults()).find((f) => f.code === 'orderUpdateError');
    await until(async () => (await refusal())?.state === 'active', 10_000, 'the orderUpdateError fault', 100);
    expect(await refusal()).toMatchObject({ severity: 'warning', component: `orderId=${secondId}`, message: 'stitching order base not extending active order base' });

    // The way out: release ends the active order (cancelOrder), then the go-to is taken.
    const release = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
      method: 'POST',
      body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, robot_id: robot.robotId, action: 'release', wait_for_ack_ms: 10_000 }),
    });
    expect(release.status, JSON.stringify(release.body)).toBe(200);
    expect(release.body.outcomes[0].delivery.state).toBe('agent_received');
    await until(() => {
      const s = agv!.state();
      return !s.driving && s.nodeStates.length === 0 && s.edgeStates.length === 0;
    }, 10_000, 'the first order cancelled');

    const third = await goTo(0, 50);
    expect(third.status, JSON.stringify(third.body)).toBe(200);
    expect(third.body.delivery.state).toBe('agent_received');
    expect(agv!.state().orderId).toBe(third.body.delivery.commandId);
    await until(() => agv!.state().driving, 10_000, 'the AGV driving the new order');
    // vda-5050-lib drops an order's rejection error when it accepts the next order: the fault clears from its report.
    await until(async () => (await refusal())?.state === 'cleared', 10_000, 'the orderUpdateError fault cleared', 100);
    expect((await refusal()).clearedBy).toBe('robot_report');
  }, 60_000);
});
