/**
 * A VDA 5050 robot going offline, through the real `fleetgw serve` and its embedded broker:
 *
 * - a robot on a plain `mqtt` client, with the standard's last will (`connection` CONNECTIONBROKEN,
 *   retained) on its own connection topic, loses its TCP connection without a word (the socket
 *   destroyed, no DISCONNECT, no OFFLINE): the broker publishes the will, the robot is offline in
 *   REST, a stop for it is kept `deferred`, the `robot_offline` alert opens after the threshold
 *   (FLEETGW_ALERT_OFFLINE_AFTER_S=1) and is on the robot's event timeline; the robot back resolves
 *   the alert and takes the deferred stop;
 * - a vda-5050-lib AGV that stops the orderly way (connection OFFLINE) is offline in REST too, for
 *   that reason, and gets its own alert;
 * - a robot without a last will that loses its connection is taken offline by the broker's end of
 *   its session, and comes back with its next state.
 */
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';
import { startVirtualAgv, type VirtualAgv } from '../support/vda-agv.js';
import { addVdaRobot, embeddedBroker, type VdaRobot } from '../support/vda-gateway.js';
import { scriptedRobot, type ScriptedRobot } from '../vda5050/vda-fixtures.js';

type Json = Record<string, any>;

describe('a VDA 5050 robot offline through fleetgw serve: last will, offline alert, timeline', () => {
  const d = makeDataDir('fleetgw-vda-offline-');
  let gw: RunningGateway;
  let url = '';
  let willRobot: VdaRobot;
  let agvRobot: VdaRobot;
  let silentRobot: VdaRobot;
  const scripted: ScriptedRobot[] = [];
  let agv: VirtualAgv | undefined;
  const get = (path: string): Promise<{ status: number; body: any }> => api(gw.ready.http, d.apiKey, path);
  const alerts = async (q: Record<string, string>): Promise<Json[]> => {
    const r = await get(`/v1/orgs/${d.orgId}/fleets/${d.fleetId}/alerts?${new URLSearchParams(q).toString()}`);
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    return r.body.items as Json[];
  };
  const online = async (robotId: string): Promise<boolean> => (await get(`/v1/robots/${robotId}`)).body.online === true;
  const offlineLines = (robotId: string): string[] => gw.stderr().split('\n').filter((l) => l.includes(`robot ${robotId}: offline (VDA 5050)`));

  beforeAll(async () => {
    willRobot = addVdaRobot(d.dataDir, d.fleetId, 'will', 'Acme', 'WILL-1');
    agvRobot = addVdaRobot(d.dataDir, d.fleetId, 'agv', 'Acme', 'AGV-1');
    silentRobot = addVdaRobot(d.dataDir, d.fleetId, 'silent', 'Acme', 'SILENT-1');
    const broker = await embeddedBroker();
    url = broker.url;
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...broker.args], { FLEETGW_ALERT_OFFLINE_AFTER_S: '1' });
  });

  afterAll(async () => {
    for (const r of scripted) await r.end().catch(() => undefined);
    await agv?.stop().catch(() => undefined);
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  async function connectScripted(): Promise<ScriptedRobot> {
    const r = await scriptedRobot(url, { manufacturer: willRobot.manufacturer, serialNumber: willRobot.serialNumber }, { username: willRobot.robotId, password: willRobot.robotToken });
    scripted.push(r);
    await r.online();
    await r.publishState();
    return r;
  }

  it('a cut TCP connection: the last will takes it offline, a stop is deferred, robot_offline opens and is on its timeline; back online resolves it', async () => {
    let robot = await connectScripted();
    await until(() => online(willRobot.robotId), 30_000, 'the scripted robot online', 100);
    // Offline 1 s after the start (before it connected): that alert is resolved by the robot coming online.
    await until(async () => (await alerts({ kind: 'robot_offline', robot_id: willRobot.robotId, state: 'open' })).length === 0, 10_000, 'no open offline alert while online', 100);
    const before = await alerts({ kind: 'robot_offline', robot_id: willRobot.robotId });

    const cutAt = Date.now();
    robot.drop();
    await until(async () => !(await online(willRobot.robotId)), 10_000, 'the robot offline in GET /v1/robots/{id}', 100);
    // The broker's last will, not a timeout, took it offline.
    await until(() => offlineLines(willRobot.robotId).length === 1, 10_000, 'the offline log line');
    expect(offlineLines(willRobot.robotId)[0]).toContain('the robot\'s connection broke (CONNECTIONBROKEN)');
    const listed = ((await get(`/v1/robots?fleet_id=${d.fleetId}`)).body as Json[]).find((r) => r.id === willRobot.robotId);
    expect(listed?.online).toBe(false);

    // A stop for the robot while it is away is kept for it.
    const stop = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
      method: 'POST',
      body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, robot_id: willRobot.robotId, action: 'stop', reason: 'while the link is down' }),
    });
    expect(stop.status, JSON.stringify(stop.body)).toBe(200);
    const stopDelivery = stop.body.outcomes[0].delivery;
    expect(stopDelivery.state).toBe('deferred');

    // The offline alert, after the 1 s threshold (the sweep runs every second).
    let alert: Json | undefined;
    await until(async () => {
      alert = (await alerts({ kind: 'robot_offline', robot_id: willRobot.robotId, state: 'open' }))[0];
      return alert !== undefined;
    }, 15_000, 'the robot_offline alert open', 100);
    expect(before.map((a) => a.alertId)).not.toContain(alert!.alertId);
    expect(alert).toMatchObject({ kind: 'robot_offline', severity: 'warning', subject: { type: 'robot', id: willRobot.robotId }, robotId: willRobot.robotId, correlationId: willRobot.robotId });
    expect(alert!.details.thresholdMs).toBe(1000);
    expect(alert!.details.offlineSinceMs).toBeGreaterThanOrEqual(cutAt - 1);

    // On the robot's own timeline.
    const timeline = async (): Promise<Json[]> => {
      const r = await get(`/v1/events?fleet_id=${d.fleetId}&correlation_id=${willRobot.robotId}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return (r.body.items as Json[]).filter((e) => e.subject.id === alert!.alertId);
    };
    await until(async () => (await timeline()).some((e) => e.kind === 'alert.opened'), 10_000, 'alert.opened on the robot\'s timeline', 100);
    expect((await timeline()).find((e) => e.kind === 'alert.opened')).toMatchObject({ data: { alertKind: 'robot_offline', about: { type: 'robot', id: willRobot.robotId } } });

    // Back: the alert resolves, the deferred stop reaches the robot.
    robot = await connectScripted();
    await until(() => online(willRobot.robotId), 15_000, 'the robot online again', 100);
    await until(async () => (await get(`/v1/orgs/${d.orgId}/fleets/${d.fleetId}/alerts/${alert!.alertId as string}`)).body.state === 'resolved', 10_000, 'the offline alert resolved', 100);
    expect((await get(`/v1/orgs/${d.orgId}/fleets/${d.fleetId}/alerts/${alert!.alertId as string}`)).body.resolution).toBe('condition_cleared');
    await until(async () => (await timeline()).some((e) => e.kind === 'alert.resolved'), 10_000, 'alert.resolved on the timeline', 100);
    await until(() => robot.actionIds().includes(stopDelivery.commandId), 15_000, 'the deferred stop at the robot', 100);
    await robot.publishState({ paused: true, actionStates: [{ actionId: stopDelivery.commandId, actionType: 'startPause', actionStatus: 'FINISHED' }] });
    await until(async () => (await get(`/v1/robot-commands/${stopDelivery.commandId as string}`)).body.state === 'agent_received', 10_000, 'the deferred stop agent_received', 100);
  }, 60_000);

  it('a robot without a last will that loses its connection is offline by the end of its session, and back with its next state', async () => {
    const login = { username: silentRobot.robotId, password: silentRobot.robotToken, noWill: true };
    const binding = { manufacturer: silentRobot.manufacturer, serialNumber: silentRobot.serialNumber };
    const first = await scriptedRobot(url, binding, login);
    scripted.push(first);
    // No connection message at all: its state alone brings it online.
    await first.publishState();
    await until(() => online(silentRobot.robotId), 30_000, 'the robot online', 100);
    first.drop();
    await until(async () => !(await online(silentRobot.robotId)), 10_000, 'the robot offline', 100);
    await until(() => offlineLines(silentRobot.robotId).length === 1, 10_000, 'the offline log line');
    expect(offlineLines(silentRobot.robotId)[0]).toContain('the robot\'s MQTT session ended without a connection message');
    const again = await scriptedRobot(url, binding, login);
    scripted.push(again);
    await again.publishState();
    await until(() => online(silentRobot.robotId), 15_000, 'the robot online again', 100);
  }, 60_000);

  it('a vda-5050-lib AGV that says goodbye (connection OFFLINE) is offline for that reason and gets the alert', async () => {
    agv = await startVirtualAgv({ brokerUrl: url, username: agvRobot.robotId, password: agvRobot.robotToken, manufacturer: agvRobot.manufacturer, serialNumber: agvRobot.serialNumber });
    await until(() => online(agvRobot.robotId), 30_000, 'the AGV online', 100);
    await until(async () => (await alerts({ kind: 'robot_offline', robot_id: agvRobot.robotId, state: 'open' })).length === 0, 10_000, 'no open offline alert for the AGV', 100);
    const stoppedAt = Date.now();
    await agv.stop();
    agv = undefined;
    await until(async () => !(await online(agvRobot.robotId)), 10_000, 'the AGV offline', 100);
    await until(() => offlineLines(agvRobot.robotId).length === 1, 10_000, 'the AGV\'s offline log line');
    expect(offlineLines(agvRobot.robotId)[0]).toContain('the robot disconnected (connection OFFLINE)');
    await until(async () => (await alerts({ kind: 'robot_offline', robot_id: agvRobot.robotId, state: 'open' })).some((a) => a.details.offlineSinceMs >= stoppedAt - 1), 15_000, 'the AGV\'s robot_offline alert', 100);
  }, 60_000);
});
