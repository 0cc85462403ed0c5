/**
 * Where a VDA 5050 order starts, through the real `fleetgw serve` and a third-party AGV (vda-5050-lib's
 * AgvController + VirtualAgvAdapter, embedded broker). An order's first node is where master control
 * last heard the robot, with an allowed deviation of 1 m (docs/vda5050.md, "Mapping"): a robot that
 * moved less than that since its last state takes the order. A VDA 5050 2.0 robot built from the
 * standard's JSON schema reads that radius as `allowedDeviationXy`; without it the AGV applies its own
 * default (0.5 m for the virtual AGV) and refuses the order.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';
import { startVirtualAgv, type VirtualAgv } from '../support/vda-agv.js';
import { addVdaRobot, embeddedBroker } from '../support/vda-gateway.js';

// The link's default map frame (docs/vda5050.md): map x east, y north, origin at 52.0 N, 5.0 E.
const M_PER_DEG_LAT = 111_320;
const latLonOf = (x: number, y: number): { latitude: number; longitude: number } => ({
  latitude: 52.0 + y / M_PER_DEG_LAT,
  longitude: 5.0 + x / (M_PER_DEG_LAT * Math.cos((52.0 * Math.PI) / 180)),
});

/** The virtual AGV's own position (what it checks an order's first node against), moved without a state. */
function push(agv: VirtualAgv, dx: number): void {
  const adapter = (agv.controller as unknown as { _agvAdapter: { _vehicleState: { position: { x: number } } } })._agvAdapter;
  adapter._vehicleState.position.x += dx;
}

describe('the start node of a VDA 5050 order', () => {
  const d = makeDataDir('fleetgw-vda-start-');
  let gw: RunningGateway | undefined;
  let agv: VirtualAgv | undefined;

  afterAll(async () => {
    await agv?.stop();
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('allows 1 m: an AGV pushed 0.8 m since its last state takes a go-to order and drives it', async () => {
    const robot = addVdaRobot(d.dataDir, d.fleetId, 'agv-1', 'Acme', 'START-1');
    const embedded = await embeddedBroker();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...embedded.args]);
    const http = gw.ready.http;
    // A state only on a change or a request, no visualization: the push below reaches master control
    // with nothing until the AGV takes or refuses the order.
    agv = await startVirtualAgv({
      brokerUrl: embedded.url, username: robot.robotId, password: robot.robotToken, manufacturer: robot.manufacturer, serialNumber: robot.serialNumber,
      speedMps: 5, position: { x: 10, y: 10 }, stateMs: 3_600_000, visualizationMs: 0,
    });
    const view = async (): Promise<any> => ((await api(http, d.apiKey, `/v1/robots?fleet_id=${d.fleetId}`)).body as any[]).find((r) => r.id === robot.robotId);
    await until(async () => (await view())?.online === true, 30_000, 'robot online in GET /v1/robots', 250);

    push(agv, 0.8);
    const goTo = await api(http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${robot.robotId}/go-to`, {
      method: 'POST',
      body: JSON.stringify({ ...latLonOf(30, 10), wait_for_ack_ms: 20_000 }),
    });
    expect(goTo.status, JSON.stringify(goTo.body)).toBe(200);
    const delivery = goTo.body.delivery as { state: string; commandId: string; rejectReason?: string | null };
    expect(delivery.state, JSON.stringify(goTo.body)).toBe('agent_received');
    const first = agv.orders.at(-1)!.nodes[0]!;
    expect(first.nodePosition).toMatchObject({ x: 10, y: 10, allowedDeviationXy: 1 });
    expect(agv.state().errors).toEqual([]);
    await until(() => {
      const s = agv!.state();
      return s.orderId === delivery.commandId && !s.driving && s.nodeStates.length === 0;
    }, 30_000, 'the order driven to its end');
    expect(agv.state().agvPosition!.x).toBeCloseTo(30, 0);
  }, 120_000);
});
