/**
 * A stop leaves the real gateway's embedded broker for the robot as one TCP segment: the broker's
 * sockets have Nagle's algorithm off, so each socket write is its own segment, and an MQTT publish
 * written piece by piece reached the robot in five. Counted from the robot's socket (the kernel's
 * `data_segs_in`, read with `ss`), around one stop sent through POST /v1/agent/control-robot.
 */
import { execFileSync } from 'node:child_process';
import type { Socket } from 'node:net';
import mqtt from 'mqtt';
import { describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';

/** Data segments the socket on local port `port` has received so far. */
function dataSegmentsIn(port: number): number {
  const out = execFileSync('ss', ['-tinH', 'state', 'established', `( sport = :${port} )`]).toString();
  const m = /data_segs_in:(\d+)/.exec(out);
  // No data received yet: ss leaves the field out.
  return m === null ? 0 : Number(m[1]);
}

describe('VDA 5050 stop on the wire', () => {
  it('reaches the robot as one TCP segment', async () => {
    const d = makeDataDir('fleetgw-vda-segments-');
    const added = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'wire', '--vda5050', 'Acme/W-1', '--json']);
    const mqttPort = await freePort();
    const gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--vda5050', 'on', '--vda5050-mqtt-port', String(mqttPort)]);
    const prefix = 'uagv/v2/Acme/W-1';
    const header = (id: number): Record<string, unknown> => ({ headerId: id, timestamp: new Date().toISOString(), version: '2.0.0', manufacturer: 'Acme', serialNumber: 'W-1' });
    const robot = await mqtt.connectAsync(`mqtt://127.0.0.1:${mqttPort}`, { username: added.robotId, password: added.robotToken, protocolVersion: 4, reconnectPeriod: 0 });
    try {
      const actionIds: string[] = [];
      robot.on('message', (_topic, payload) => {
        const body = JSON.parse(payload.toString()) as { instantActions?: Array<{ actionId: string }> };
        for (const a of body.instantActions ?? []) actionIds.push(a.actionId);
      });
      await robot.subscribeAsync(`${prefix}/instantActions`, { qos: 0 });
      await robot.publishAsync(`${prefix}/connection`, JSON.stringify({ ...header(1), connectionState: 'ONLINE' }), { qos: 1, retain: true });
      await robot.publishAsync(`${prefix}/state`, JSON.stringify({
        ...header(1), orderId: '', orderUpdateId: 0, lastNodeId: 'home', lastNodeSequenceId: 0, driving: false, paused: false, operatingMode: 'AUTOMATIC',
        nodeStates: [], edgeStates: [], actionStates: [], errors: [], loads: [],
        agvPosition: { x: 1, y: 2, theta: 0, mapId: 'site', positionInitialized: true },
        batteryState: { batteryCharge: 80, charging: false }, safetyState: { eStop: 'NONE', fieldViolation: false },
      }));
      await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robots/${added.robotId}`)).body.online === true, 30_000, 'the robot online');
      // What master control asks of a robot coming online (its state, its factsheet) is in before counting.
      await until(() => actionIds.some((id) => id.startsWith('fleetgw-factsheet-')), 30_000, 'the factsheet request');
      const port = (robot.stream as Socket).localPort!;
      const before = dataSegmentsIn(port);
      const stop = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, robot_id: added.robotId, action: 'stop', reason: 'wire test' }) });
      expect(stop.status).toBe(200);
      const commandId = stop.body.outcomes[0].delivery.commandId as string;
      await until(() => actionIds.includes(commandId), 10_000, 'the stop at the robot');
      expect(dataSegmentsIn(port) - before).toBe(1);
    } finally {
      await robot.endAsync(true);
      await gw.stop();
    }
  }, 120_000);
});
