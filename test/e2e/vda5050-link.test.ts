/**
 * VDA 5050 robots through the real gateway: a third-party AGV (vda-5050-lib's AgvController with its
 * VirtualAgvAdapter) logs in to the embedded broker with its robot token, goes online, its state
 * shows in GET /v1/robots, a go-to order is driven to its end, stop and release through
 * POST /v1/agent/control-robot reach FINISHED in the robot's actionStates with delivery states that
 * match, and a command VDA 5050 cannot carry is refused before anything is published: 422
 * `policy_rejected` on the per-robot route, 502 `unavailable` with the outcome's `policy_rejected` on
 * control-robot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgvController, VirtualAgvAdapter } from 'vda-5050-lib';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';
import { MapFrame } from '../../src/vda5050/link/map-frame.js';
import { scriptedRobot } from '../vda5050/vda-fixtures.js';

const frame = new MapFrame();

describe('VDA 5050 robot through fleetgw serve', () => {
  const d = makeDataDir('fleetgw-vda-link-');
  let gw: RunningGateway;
  let agv: AgvController;
  let newAgv: () => AgvController;
  let robotId = '';
  const control = (body: Record<string, unknown>): Promise<{ status: number; body: any }> =>
    api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, robot_id: robotId, ...body }) });
  const actionStatus = (id: string): string | undefined => agv.currentState.actionStates?.find((a) => a.actionId === id)?.actionStatus;

  beforeAll(async () => {
    const added = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'agv-1', '--vda5050', 'Acme/AGV-1', '--json']);
    robotId = added.robotId;
    const mqttPort = await freePort();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--vda5050', 'on', '--vda5050-mqtt-port', String(mqttPort)]);
    newAgv = () => new AgvController(
      { manufacturer: 'Acme', serialNumber: 'AGV-1' },
      { interfaceName: 'uagv', vdaVersion: '2.0.0', transport: { brokerUrl: `mqtt://127.0.0.1:${mqttPort}`, username: robotId, password: added.robotToken, reconnectPeriod: 200 } },
      { agvAdapterType: VirtualAgvAdapter, publishVisualizationInterval: 250 },
      { initialPosition: { mapId: 'site', x: 5, y: 5, theta: 0, lastNodeId: 'home' }, vehicleSpeed: 5 },
    );
    agv = newAgv();
    await agv.start();
  });

  afterAll(async () => {
    await agv?.stop().catch(() => undefined);
    await gw?.stop();
  });

  it('goes online and its state appears in GET /v1/robots', async () => {
    const at = frame.toLatLon(5, 5);
    let robot: any;
    await until(async () => {
      const r = await api(gw.ready.http, d.apiKey, `/v1/robots?fleet_id=${d.fleetId}`);
      robot = (r.body as any[]).find((x) => x.id === robotId);
      return robot?.online === true && robot.batteryPct !== null;
    }, 30_000, 'the VDA 5050 robot online with telemetry');
    expect(robot.batteryPct).toBeGreaterThan(0);
    expect(robot.latitude).toBeCloseTo(at.latitude, 5);
    expect(robot.longitude).toBeCloseTo(at.longitude, 5);
    expect(robot.mode).toBe('autonomous');
  });

  it('drives a go-to order to its end', async () => {
    const target = frame.toLatLon(15, 5);
    let r: { status: number; body: any } = { status: 0, body: null };
    // The factsheet-derived policy (go-to area) is compiled shortly after the robot comes online.
    await until(async () => {
      r = await api(gw.ready.http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${robotId}/go-to`, { method: 'POST', body: JSON.stringify({ latitude: target.latitude, longitude: target.longitude, wait_for_ack_ms: 10_000 }) });
      return !(r.status === 422 && String(r.body.error).includes('waiting to be compiled'));
    }, 30_000, 'the policy compiled');
    expect(r.status).toBe(200);
    expect(r.body.delivery.state).toBe('agent_received');
    expect(agv.currentState.orderId).toBe(r.body.delivery.commandId);
    await until(() => agv.currentState.nodeStates.length === 0 && !agv.currentState.driving, 20_000, 'the order driven to its end');
    expect(agv.currentState.agvPosition!.x).toBeCloseTo(15, 0);
  });

  it('stop and release through control-robot reach FINISHED, their deliveries agent_received', async () => {
    const far = frame.toLatLon(120, 5);
    const go = await api(gw.ready.http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${robotId}/go-to`, { method: 'POST', body: JSON.stringify({ latitude: far.latitude, longitude: far.longitude, wait_for_ack_ms: 10_000 }) });
    expect(go.body.delivery.state).toBe('agent_received');
    await until(() => agv.currentState.driving, 10_000, 'the robot under way');
    const stop = await control({ action: 'stop', reason: 'e2e', wait_for_ack_ms: 10_000 });
    expect(stop.status).toBe(200);
    const stopDelivery = stop.body.outcomes[0].delivery;
    expect(stopDelivery.state).toBe('agent_received');
    await until(() => actionStatus(stopDelivery.commandId) === 'FINISHED', 10_000, 'startPause FINISHED');
    expect(agv.currentState.paused).toBe(true);
    const release = await control({ action: 'release', wait_for_ack_ms: 10_000 });
    expect(release.status).toBe(200);
    const releaseDelivery = release.body.outcomes[0].delivery;
    expect(releaseDelivery.state).toBe('agent_received');
    await until(() => actionStatus(releaseDelivery.commandId) === 'FINISHED', 10_000, 'cancelOrder FINISHED');
    const rec = await api(gw.ready.http, d.apiKey, `/v1/robot-commands/${stopDelivery.commandId}`);
    expect(rec.body.state).toBe('agent_received');
    const start = await control({ action: 'start', wait_for_ack_ms: 10_000 });
    // Released, the robot is no longer paused: its stopPause is refused "not yet paused", which leaves it where a start wants it.
    expect(start.body.outcomes[0].delivery.state).toBe('agent_received');
    await until(() => !agv.currentState.paused, 10_000, 'the robot resumed');
  });

  it('refuses a command VDA 5050 cannot carry with a 4xx naming why, publishing nothing', async () => {
    const shown = agv.currentState.actionStates.length;
    // control-robot (the Agent API's bulk route) reports each target's refusal in its outcome; with
    // every target refused the answer is 502 `unavailable` (the bulk rule: 200 / 207 / 502).
    const reset = await control({ action: 'force_reset' });
    expect(reset.status).toBe(502);
    expect(reset.body.code).toBe('unavailable');
    expect(reset.body.outcomes[0].success).toBe(false);
    expect(reset.body.outcomes[0].error.code).toBe('policy_rejected');
    expect(reset.body.outcomes[0].error.message).toMatch(/VDA 5050 defines no reset/);
    const bulkMode = await control({ action: 'mode', mode: 'manual' });
    expect(bulkMode.status).toBe(502);
    expect(bulkMode.body.code).toBe('unavailable');
    expect(bulkMode.body.outcomes[0].error.code).toBe('policy_rejected');
    expect(bulkMode.body.outcomes[0].error.message).toMatch(/operating mode/);
    // The per-robot REST route answers the refusal itself: 422 `policy_rejected`.
    const mode = await api(gw.ready.http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${robotId}/mode`, { method: 'POST', body: JSON.stringify({ mode: 'manual' }) });
    expect(mode.status).toBe(422);
    expect(mode.body.code).toBe('policy_rejected');
    expect(mode.body.error).toMatch(/operating mode/);
    expect(agv.currentState.actionStates.length).toBe(shown);
  });

  it('keeps a stop for an offline robot (deferred) and delivers it when the robot is back', async () => {
    await agv.stop();
    const offline = async (): Promise<boolean> => (await api(gw.ready.http, d.apiKey, `/v1/robots/${robotId}`)).body.online === false;
    await until(offline, 10_000, 'the robot offline');
    const stop = await control({ action: 'stop', reason: 'while offline' });
    const delivery = stop.body.outcomes[0].delivery;
    expect(delivery.state).toBe('deferred');
    // The same robot back (a new process: a new controller with the same identity and token).
    agv = newAgv();
    await agv.start();
    await until(() => actionStatus(delivery.commandId) === 'FINISHED', 20_000, 'the deferred stop FINISHED at the robot');
    await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robot-commands/${delivery.commandId}`)).body.state === 'agent_received', 20_000, 'the deferred stop received');
  });
});

describe('VDA 5050 delivery across a gateway kill -9', () => {
  it('sends a stop exactly once: after the restart the robot\'s first state shows it, so it is acknowledged, not published again', async () => {
    const d = makeDataDir('fleetgw-vda-kill-');
    const added = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'scripted', '--vda5050', 'Acme/S-1', '--json']);
    const mqttPort = await freePort();
    const args = ['--insecure-http', '--vda5050', 'on', '--vda5050-mqtt-port', String(mqttPort)];
    let gw = await startGatewayProcess(d.dataDir, args);
    const robot = await scriptedRobot(`mqtt://127.0.0.1:${mqttPort}`, { manufacturer: 'Acme', serialNumber: 'S-1' }, { username: added.robotId, password: added.robotToken });
    try {
      await robot.online();
      await robot.publishState();
      const online = async (): Promise<boolean> => (await api(gw.ready.http, d.apiKey, `/v1/robots/${added.robotId}`)).body.online === true;
      await until(online, 30_000, 'the scripted robot online');
      const stop = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, robot_id: added.robotId, action: 'stop', reason: 'kill test' }) });
      expect(stop.status).toBe(200);
      const commandId = stop.body.outcomes[0].delivery.commandId as string;
      expect(stop.body.outcomes[0].delivery.state).toBe('dispatched');
      // The robot executes it, but the gateway dies before any state shows it.
      await until(() => robot.actionIds().includes(commandId), 10_000, 'the stop at the robot');
      await gw.stop('SIGKILL');
      gw = await startGatewayProcess(d.dataDir, args);
      await until(() => robot.connected(), 30_000, 'the robot back on the restarted broker');
      await robot.online();
      await robot.publishState({ paused: true, actionStates: [{ actionId: commandId, actionType: 'startPause', actionStatus: 'FINISHED' }] });
      await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robot-commands/${commandId}`)).body.state === 'agent_received', 30_000, 'the stop acknowledged from the robot\'s state');
      expect(robot.actionIds().filter((id) => id === commandId)).toHaveLength(1);
    } finally {
      await robot.end();
      await gw.stop();
    }
  }, 180_000);
});
