/**
 * Real process: VDA 5050 identities and the embedded MQTT broker of `fleetgw serve`, with the
 * third-party `mqtt` client as the robots.
 *  - `fleetgw admin add-robot --vda5050`: binding, a second robot on one identity refused naming
 *    the flag, topic-unsafe parts refused; `list-robots` and the robot view show the identity;
 *  - robot login = robot id + robot token; a wrong token, an unbound robot and a last will on
 *    another robot's topic are refused;
 *  - isolation: robot A may publish its own state and subscribe to its own order, never B's
 *    (a denied publish closes A's connection, a denied subscription gets 0x80), counted in
 *    `fleetgw_vda5050_denied_total`;
 *  - `PATCH /v1/robots/{id}` `vda5050`: 400 naming the field, 409 for an identity another robot
 *    holds, and a binding made at run time lets that robot log in without a restart.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson, fleetgw } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';

type Creds = { robotId: string; robotToken: string };

/** Connects; resolves with the client once CONNACK accepts, rejects with the refusal. */
function login(port: number, username: string, password: string, will?: { topic: string; payload: string }): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = mqtt.connect(`mqtt://127.0.0.1:${port}`, { username, password, reconnectPeriod: 0, connectTimeout: 10_000, ...(will !== undefined ? { will } : {}) });
    c.once('connect', () => resolve(c));
    c.once('error', (err) => {
      c.end(true);
      reject(err);
    });
    c.once('close', () => reject(new Error('closed before CONNACK')));
  });
}

/** The granted QoS of one subscription (128: refused). */
async function granted(c: MqttClient, topic: string): Promise<number> {
  return new Promise((resolve, reject) => {
    c.subscribe(topic, { qos: 1 }, (err, grants) => {
      // mqtt.js reports a failure return code (0x80) as an error carrying the SUBACK.
      const code = (err as { packet?: { granted?: unknown[] } } | null | undefined)?.packet?.granted?.[0];
      if (typeof code === 'number') resolve(code);
      else if (err) reject(err);
      else if (grants?.[0] !== undefined) resolve(grants[0].qos);
      else reject(new Error('no grant'));
    });
  });
}

describe('VDA 5050 identities and the embedded broker through the real gateway process', () => {
  const d = makeDataDir('fleetgw-e2e-vda5050-');
  const add = (name: string, vda?: string): Creds =>
    adminJson<Creds>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', name, ...(vda !== undefined ? ['--vda5050', vda] : [])]);
  const a = add('a', 'Acme/A1');
  const b = add('b', 'Acme/B1');
  const c = add('c');
  let gw: RunningGateway;
  let port = 0;
  const open: MqttClient[] = [];
  const robot = async (creds: Creds, will?: { topic: string; payload: string }): Promise<MqttClient> => {
    const client = await login(port, creds.robotId, creds.robotToken, will);
    open.push(client);
    return client;
  };
  const patch = (robotId: string, body: unknown) => api(gw.ready.http, d.apiKey, `/v1/robots/${robotId}`, { method: 'PATCH', body: JSON.stringify(body) });
  const denied = async (reason: string): Promise<number> => {
    const token = readFileSync(join(d.dataDir, 'metrics-token'), 'utf8').trim();
    const text = await (await fetch(`${gw.ready.http}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    const m = new RegExp(`^fleetgw_vda5050_denied_total\\{reason="${reason}"\\} (\\d+)$`, 'm').exec(text);
    return m === null ? -1 : Number(m[1]);
  };

  beforeAll(async () => {
    port = await freePort();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--vda5050-mqtt-port', String(port)]);
  });
  afterAll(async () => {
    for (const client of open) client.end(true);
    await gw.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('admin add-robot --vda5050 binds one robot per identity and refuses topic-unsafe parts, naming the flag', () => {
    const dup = fleetgw(['admin', 'add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'twin', '--vda5050', 'Acme/A1']);
    expect(dup.status).toBe(2);
    expect(dup.stderr).toContain('--vda5050 Acme/A1');
    expect(dup.stderr).toContain(`already bound to robot ${a.robotId}`);
    // Every rule: test/cli/vda5050-options.test.ts.
    for (const [value, says] of [['Acme/+', '--vda5050 serial number'], ['Ac#me/X', '--vda5050 manufacturer']] as const) {
      const r = fleetgw(['admin', 'add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'bad', '--vda5050', value]);
      expect(r.status, value).toBe(2);
      expect(r.stderr, value).toContain(says);
    }
    const list = adminJson<{ robots: { robotId: string; vda5050: unknown }[] }>(['list-robots', '--data-dir', d.dataDir, '--fleet', d.fleetId]);
    expect(list.robots.find((r) => r.robotId === a.robotId)?.vda5050).toEqual({ manufacturer: 'Acme', serialNumber: 'A1' });
    expect(list.robots.find((r) => r.robotId === c.robotId)?.vda5050).toBeNull();
    expect(list.robots.filter((r) => r.robotId !== a.robotId && r.robotId !== b.robotId && r.robotId !== c.robotId)).toEqual([]);
    // Four CLI runs on a loaded 2-core machine.
  }, 240_000);

  it('the robot view shows the identity', async () => {
    const view = await api(gw.ready.http, d.apiKey, `/v1/robots/${a.robotId}`);
    expect(view.status).toBe(200);
    expect(view.body.vda5050).toEqual({ manufacturer: 'Acme', serialNumber: 'A1' });
    expect((await api(gw.ready.http, d.apiKey, `/v1/robots/${c.robotId}`)).body.vda5050).toBeNull();
    // /openapi.json states the identity's shape and rules where the view and PATCH use it.
    const doc = (await (await fetch(`${gw.ready.http}/openapi.json`)).json()) as { components: { schemas: Record<string, any> } };
    const identity = doc.components.schemas.Vda5050Identity;
    expect(identity.required).toEqual(['manufacturer', 'serialNumber']);
    expect(identity.properties.serialNumber).toMatchObject({ minLength: 1, maxLength: 128 });
    expect(new RegExp(identity.properties.manufacturer.pattern as string).test('Ac/me')).toBe(false);
    expect(JSON.stringify(doc.components.schemas.RobotView.properties.vda5050)).toContain('Vda5050Identity');
    expect(JSON.stringify(doc.components.schemas.RobotPatchRequest.properties.vda5050)).toContain('Vda5050Identity');
  });

  it('a wrong token, a robot without an identity and a last will on another robot\'s topic are refused', async () => {
    await expect(login(port, a.robotId, b.robotToken)).rejects.toThrow(/Bad username or password/);
    await expect(login(port, 'Acme/A1', a.robotToken)).rejects.toThrow(/Bad username or password/);
    await expect(login(port, c.robotId, c.robotToken)).rejects.toThrow(/Bad username or password/);
    await expect(login(port, a.robotId, a.robotToken, { topic: 'uagv/v2/Acme/B1/connection', payload: '{}' })).rejects.toThrow(/Not authorized/);
    expect(await denied('auth')).toBeGreaterThanOrEqual(3);
    expect(await denied('will')).toBe(1);
    const ok = await robot(a, { topic: 'uagv/v2/Acme/A1/connection', payload: '{"connectionState":"CONNECTIONBROKEN"}' });
    expect(ok.connected).toBe(true);
    ok.end(true);
  });

  it('robot A publishes its own state and subscribes to its own order, never B\'s', async () => {
    const ra = await robot(a);
    expect(await granted(ra, 'uagv/v2/Acme/A1/order')).toBe(1);
    expect(await granted(ra, 'uagv/v2/Acme/A1/instantActions')).toBe(1);
    await ra.publishAsync('uagv/v2/Acme/A1/state', '{}', { qos: 1 });
    for (const filter of ['uagv/v2/Acme/B1/order', 'uagv/v2/Acme/+/order', 'uagv/v2/#', '#', 'uagv/v2/Acme/A1/state']) {
      expect(await granted(ra, filter), filter).toBe(128);
    }
    expect(await denied('subscribe')).toBe(5);
    expect(ra.connected).toBe(true);
    // A publish MQTT 3.1.1 cannot refuse otherwise closes the connection.
    const closed = new Promise<void>((resolve) => ra.once('close', () => resolve()));
    ra.publish('uagv/v2/Acme/B1/state', '{"forged":true}', { qos: 1 });
    await closed;
    await until(async () => (await denied('publish')) === 1, 10_000, 'the denied publish counted');
    // B's own session is untouched and B can use its topics.
    const rb = await robot(b);
    expect(await granted(rb, 'uagv/v2/Acme/B1/order')).toBe(1);
    await rb.publishAsync('uagv/v2/Acme/B1/state', '{}', { qos: 1 });
  });

  it('PATCH vda5050: 400 naming the field, 409 for a held identity, and a run-time binding logs in without a restart', async () => {
    const bad = await patch(c.robotId, { vda5050: { manufacturer: 'Acme/X', serialNumber: 'C1' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('vda5050.manufacturer');
    const empty = await patch(c.robotId, { vda5050: { manufacturer: 'Acme', serialNumber: '' } });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toContain('vda5050.serialNumber');
    const taken = await patch(c.robotId, { vda5050: { manufacturer: 'Acme', serialNumber: 'B1' } });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe('conflict');
    expect(taken.body.error).toContain('vda5050');
    expect(taken.body.error).toContain(b.robotId);
    await expect(login(port, c.robotId, c.robotToken)).rejects.toThrow(/Bad username or password/);
    const bound = await patch(c.robotId, { vda5050: { manufacturer: 'Acme', serialNumber: 'C1' } });
    expect(bound.status).toBe(200);
    expect(bound.body.vda5050).toEqual({ manufacturer: 'Acme', serialNumber: 'C1' });
    const rc = await robot(c);
    expect(await granted(rc, 'uagv/v2/Acme/C1/order')).toBe(1);
    expect(await granted(rc, 'uagv/v2/Acme/B1/order')).toBe(128);
  });
});
