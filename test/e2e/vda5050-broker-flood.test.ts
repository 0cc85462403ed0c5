/**
 * Real process: a VDA 5050 robot that publishes faster than the embedded broker routes does not
 * make the broker queue its publishes (a queue whose per-message cost grew with its length, so the
 * broker fell ever further behind and the gateway's event loop, the gRPC robot link's included, was
 * spent on it). The broker reads a robot's next bytes only once the last ones are routed: after a
 * burst of thousands of publishes arriving in few socket reads, `fleetgw_vda5050_broker_routing_queue_max`
 * is still 0, and a gRPC robot connects.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/agent.js';
import { adminJson } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';

type Creds = { robotId: string; robotToken: string };

/** More publishes than aedes' default routing concurrency (100) many times over, in one burst. */
const BURST = 5_000;

describe('a VDA 5050 publish flood through the real gateway process', () => {
  const d = makeDataDir('fleetgw-e2e-vda5050-flood-');
  const vda = adminJson<Creds>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'flooder', '--vda5050', 'Acme/F1']);
  const grpc = adminJson<Creds>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'grpc']);
  let gw: RunningGateway;
  let port = 0;
  let client: MqttClient | null = null;
  let agent: RobotAgent | null = null;
  const metric = async (name: string): Promise<number> => {
    const token = readFileSync(join(d.dataDir, 'metrics-token'), 'utf8').trim();
    const text = await (await fetch(`${gw.ready.http}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    const m = new RegExp(`^${name} (\\d+)$`, 'm').exec(text);
    return m === null ? -1 : Number(m[1]);
  };

  beforeAll(async () => {
    port = await freePort();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--vda5050-mqtt-port', String(port)]);
  });
  afterAll(async () => {
    client?.end(true);
    await agent?.stop();
    await gw.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('routes every publish as it reads it, and a gRPC robot connects after the flood', async () => {
    client = await new Promise<MqttClient>((resolve, reject) => {
      const c = mqtt.connect(`mqtt://127.0.0.1:${port}`, { username: vda.robotId, password: vda.robotToken, reconnectPeriod: 0, connectTimeout: 30_000 });
      c.once('connect', () => resolve(c));
      c.once('error', reject);
    });
    const topic = 'uagv/v2/Acme/F1/visualization';
    const header = { version: '2.0.0', manufacturer: 'Acme', serialNumber: 'F1' };
    // Written in one synchronous loop: the bytes reach the broker in a few large socket reads.
    for (let i = 1; i <= BURST; i++) {
      const msg = { headerId: i, timestamp: new Date(1_800_000_000_000 + i).toISOString(), ...header, agvPosition: { x: i % 50, y: 1, theta: 0, mapId: 'm', positionInitialized: true } };
      client.publish(topic, JSON.stringify(msg), { qos: 0 });
    }
    // The broker handles one client's packets in order: the PUBACK of a QoS 1 publish after the burst
    // means every publish before it was routed.
    await client.publishAsync(topic, JSON.stringify({ headerId: BURST + 1, timestamp: new Date().toISOString(), ...header }), { qos: 1 });
    expect(await metric('fleetgw_vda5050_broker_routing_queue_max')).toBe(0);

    agent = new RobotAgent({ address: gw.ready.grpc, robotId: grpc.robotId, robotToken: grpc.robotToken, onCommand: () => ({ accept: true }), dedicatedConnection: true });
    agent.start();
    await until(() => agent?.stats().connected === true, 60_000, 'the gRPC robot to connect after the VDA 5050 flood');
  }, 180_000);
});
