/**
 * Real process: the embedded VDA 5050 broker in `auto` mode listens only once a robot has a VDA 5050
 * identity. A gateway with none leaves its MQTT port closed (the README's commands need no broker);
 * a binding made at run time through REST opens it and the robot logs in, without a restart.
 * The flags are checked at start with errors naming the flag.
 */
import { rmSync } from 'node:fs';
import { connect } from 'node:net';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, fleetgw } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';

/** Whether something accepts TCP connections on the port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

function login(port: number, username: string, password: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = mqtt.connect(`mqtt://127.0.0.1:${port}`, { username, password, reconnectPeriod: 0 });
    c.once('connect', () => resolve(c));
    c.once('error', (err) => {
      c.end(true);
      reject(err);
    });
  });
}

describe('the embedded VDA 5050 broker in auto mode through the real gateway process', () => {
  const d = makeDataDir('fleetgw-e2e-vda5050-auto-');
  const r = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'late']);
  let gw: RunningGateway;
  let port = 0;

  beforeAll(async () => {
    port = await freePort();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--vda5050-mqtt-port', String(port)]);
  });
  afterAll(async () => {
    await gw.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('no robot with a VDA 5050 identity: no broker listens', async () => {
    expect(await listening(port)).toBe(false);
    expect(gw.stderr()).toContain('VDA 5050 broker idle');
  });

  it('a binding made through REST at run time opens the broker and the robot logs in', async () => {
    const res = await api(gw.ready.http, d.apiKey, `/v1/robots/${r.robotId}`, { method: 'PATCH', body: JSON.stringify({ vda5050: { manufacturer: 'Late', serialNumber: 'L-1' } }) });
    expect(res.status).toBe(200);
    await until(() => listening(port), 15_000, 'the broker listening');
    const c = await login(port, r.robotId, r.robotToken);
    await c.publishAsync('uagv/v2/Late/L-1/state', '{}', { qos: 1 });
    c.end(true);
  });

  it('serve refuses bad VDA 5050 flags at start, naming the flag (every rule: test/cli/vda5050-options.test.ts)', () => {
    const cases: [string[], string][] = [
      [['--vda5050-version', '2.1.0'], '--vda5050-version must be one of: 2.0.0'],
      [['--vda5050-mqtt-password', 'secret-value'], '--vda5050-mqtt-password is refused'],
    ];
    for (const [flags, says] of cases) {
      const out = fleetgw(['serve', '--data-dir', d.dataDir, '--insecure-http', '--port', '0', '--grpc-port', '0', ...flags]);
      expect(out.status, flags.join(' ')).toBe(2);
      expect(out.stderr, flags.join(' ')).toContain(says);
      expect(out.stderr).not.toContain('secret-value');
    }
    // Two CLI starts on a loaded 2-core machine.
  }, 200_000);
});
