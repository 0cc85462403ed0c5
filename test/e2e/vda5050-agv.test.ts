/**
 * A third-party VDA 5050 AGV (vda-5050-lib's AgvController + VirtualAgvAdapter) through the real
 * `fleetgw serve`, once through the embedded broker and once through a private Debian mosquitto with
 * the documented ACL. One journey each: the robot is registered with its VDA 5050 identity, logs in
 * with its robot token, goes online, reports state, takes a go-to order (`POST …/robots/{id}/go-to`)
 * and drives it, is stopped and released through `POST /v1/agent/control-robot`, and shows up in `GET /v1/robots`, the live stream,
 * Foxglove and the telemetry history.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { connectFoxglove } from '../support/foxglove-client.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { HAVE_MOSQUITTO } from '../support/mosquitto.js';
import { openStream, requestTicket } from '../support/stream-client.js';
import { until } from '../support/until.js';
import { startVirtualAgv, type VirtualAgv } from '../support/vda-agv.js';
import { addVdaRobot, embeddedBroker } from '../support/vda-gateway.js';
import { startMosquittoFor, type MosquittoForGateway } from '../support/vda-mosquitto.js';

// The link's default map frame (docs/vda5050.md): map x east, y north, origin at 52.0 N, 5.0 E.
const ORIGIN = { latitude: 52.0, longitude: 5.0 };
const M_PER_DEG_LAT = 111_320;
const M_PER_DEG_LON = M_PER_DEG_LAT * Math.cos((ORIGIN.latitude * Math.PI) / 180);
const latLonOf = (x: number, y: number): { latitude: number; longitude: number } => ({ latitude: ORIGIN.latitude + y / M_PER_DEG_LAT, longitude: ORIGIN.longitude + x / M_PER_DEG_LON });

interface Delivery { state: string; commandId: string }

describe.each([
  { broker: 'the embedded broker' as const },
  { broker: 'Debian mosquitto' as const },
])('a vda-5050-lib AGV through fleetgw serve and $broker', ({ broker }) => {
  const skip = broker === 'Debian mosquitto' && !HAVE_MOSQUITTO;
  const d = makeDataDir('fleetgw-vda-');
  let gw: RunningGateway | undefined;
  let agv: VirtualAgv | undefined;
  let mosquitto: MosquittoForGateway | undefined;

  afterAll(async () => {
    await agv?.stop();
    await gw?.stop();
    await mosquitto?.close();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it.skipIf(skip)('registers, goes online, reports state, drives a go-to order, is stopped and released, and shows in REST, the live stream, Foxglove and history', async () => {
    // Registration: the identity binding.
    const robot = addVdaRobot(d.dataDir, d.fleetId, 'agv-1', 'Acme Robotics', 'AGV-0001');
    let brokerUrl: string;
    if (broker === 'the embedded broker') {
      const embedded = await embeddedBroker();
      gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...embedded.args]);
      brokerUrl = embedded.url;
    } else {
      mosquitto = await startMosquittoFor(d.dataDir, [robot]);
      gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...mosquitto.serveArgs]);
      brokerUrl = mosquitto.url;
    }
    const http = gw.ready.http;
    const get = (path: string) => api(http, d.apiKey, path);
    const control = (body: Record<string, unknown>) => api(http, d.apiKey, '/v1/agent/control-robot', {
      method: 'POST',
      body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, robot_id: robot.robotId, wait_for_ack_ms: 20_000, ...body }),
    });

    // The live stream and Foxglove are open before the robot connects: they must see it come.
    const streamTicket = await requestTicket(http, d.apiKey, d.orgId, d.fleetId);
    expect(streamTicket.status).toBe(201);
    const stream = openStream(streamTicket.body.url as string);
    await stream.opened;
    stream.send({ op: 'subscribe', ticket: streamTicket.body.ticket, robot_ids: [robot.robotId], encoding: 'json' });
    await until(() => stream.of('subscribed').length === 1, 10_000, 'stream subscription confirmed');
    const foxTicket = await requestTicket(http, d.apiKey, d.orgId, d.fleetId);
    const fox = connectFoxglove(`${http.replace(/^http/, 'ws')}/v1/telemetry/foxglove?ticket=${foxTicket.body.ticket as string}`);
    await fox.opened;

    // Goes online with its robot token.
    agv = await startVirtualAgv({ brokerUrl, username: robot.robotId, password: robot.robotToken, manufacturer: robot.manufacturer, serialNumber: robot.serialNumber, speedMps: 5 });
    const view = async (): Promise<any> => ((await get(`/v1/robots?fleet_id=${d.fleetId}`)).body as any[]).find((r) => r.id === robot.robotId);
    await until(async () => (await view())?.online === true, 30_000, 'robot online in GET /v1/robots', 250);
    // Reports state: its battery and position (map 0,0 is the origin) reach the snapshot.
    await until(async () => (await view())?.batteryPct === 100, 30_000, 'battery from the state message', 250);
    const here = await view();
    expect(here.latitude).toBeCloseTo(ORIGIN.latitude, 5);
    expect(here.longitude).toBeCloseTo(ORIGIN.longitude, 5);

    // A go-to order, driven: 40 m east, 30 m north.
    const target = latLonOf(40, 30);
    const goTo = await api(http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${robot.robotId}/go-to`, {
      method: 'POST',
      body: JSON.stringify({ ...target, wait_for_ack_ms: 20_000 }),
    });
    expect(goTo.status, JSON.stringify(goTo.body)).toBe(200);
    const goToDelivery = goTo.body.delivery as Delivery;
    expect(goToDelivery.state).toBe('agent_received');
    expect(agv.orders.map((o) => o.orderId)).toEqual([goToDelivery.commandId]);
    await until(() => {
      const s = agv!.state();
      return s.orderId === goToDelivery.commandId && !s.driving && s.nodeStates.length === 0 && s.edgeStates.length === 0;
    }, 30_000, 'the order driven to its end');
    const arrived = agv.state().agvPosition!;
    expect(arrived.x).toBeCloseTo(40, 0);
    expect(arrived.y).toBeCloseTo(30, 0);
    await until(async () => Math.abs(((await view())?.latitude ?? 0) - target.latitude) < 1e-5, 30_000, 'the snapshot at the target', 250);

    // Stopped and released: each command arrives once as an instant action whose id is the command id.
    const stop = await control({ action: 'stop' });
    expect(stop.status, JSON.stringify(stop.body)).toBe(200);
    const stopDelivery = stop.body.outcomes[0].delivery as Delivery;
    expect(stopDelivery.state).toBe('agent_received');
    await until(() => agv!.state().paused === true, 10_000, 'the AGV paused');
    const release = await control({ action: 'release' });
    expect(release.status, JSON.stringify(release.body)).toBe(200);
    const releaseDelivery = release.body.outcomes[0].delivery as Delivery;
    expect(releaseDelivery.state).toBe('agent_received');
    const commands = agv.instantActions.filter((a) => a.actionId === stopDelivery.commandId || a.actionId === releaseDelivery.commandId);
    expect(commands.map((a) => [a.actionId, a.actionType])).toEqual([[stopDelivery.commandId, 'startPause'], [releaseDelivery.commandId, 'cancelOrder']]);

    // The live stream carried the robot's samples, Foxglove advertised and sent its channels.
    await until(() => stream.messages.some((m) => m.robot_id === robot.robotId), 10_000, 'a live sample');
    await until(() => fox.channels.size === 3, 20_000, 'the robot\'s Foxglove channels');
    const location = fox.channel(`/robots/${robot.robotId}/location`);
    expect(location).toBeDefined();
    const sub = fox.client.subscribe(location!.id);
    await until(() => fox.messages.some((m) => m.subscriptionId === sub), 20_000, 'a Foxglove location message');
    stream.ws.terminate();
    fox.ws.terminate();

    // History: the samples were stored.
    const from = Date.now() - 600_000;
    await until(async () => ((await get(`/v1/robots/${robot.robotId}/telemetry/series?from_ms=${from}&to_ms=${Date.now()}&max_points=1`)).body.points?.[0]?.count ?? 0) > 0, 60_000, 'stored samples', 250);
  }, 240_000);
});
