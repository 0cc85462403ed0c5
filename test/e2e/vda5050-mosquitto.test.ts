/**
 * Real processes: Debian's mosquitto 2.0 as the external VDA 5050 broker, configured as
 * docs/vda5050.md says: a password file made by mosquitto_passwd (username = robot id, password =
 * robot token) and the ACL file made by `fleetgw admin vda5050-acl`. With the `mqtt` client as
 * robots: robot A cannot publish B's state (mosquitto drops it), cannot receive B's order (even
 * subscribed to it or to everything), cannot leave a last will on B's topic, and a wrong token is
 * refused; master control's login does both directions. `fleetgw serve --vda5050-mqtt-url` starts
 * with that broker's login and runs no broker of its own.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';

type Creds = { robotId: string; robotToken: string };
const MASTER = 'master-control';
const MASTER_PASSWORD = 'master-password-for-the-test';

function login(port: number, username: string, password: string, will?: { topic: string; payload: string }): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = mqtt.connect(`mqtt://127.0.0.1:${port}`, { username, password, reconnectPeriod: 0, ...(will !== undefined ? { will } : {}) });
    c.once('connect', () => resolve(c));
    c.once('error', (err) => {
      c.end(true);
      reject(err);
    });
  });
}

/** Topics (and payloads) a client received, in order. */
function recorder(c: MqttClient): { topic: string; payload: string }[] {
  const seen: { topic: string; payload: string }[] = [];
  c.on('message', (topic, payload) => seen.push({ topic, payload: payload.toString() }));
  return seen;
}

describe('mosquitto with the generated VDA 5050 ACL isolates robots', () => {
  const d = makeDataDir('fleetgw-e2e-vda5050-mosquitto-');
  const add = (name: string, vda: string): Creds => adminJson<Creds>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', name, '--vda5050', vda]);
  const a = add('a', 'Acme/A1');
  const b = add('b', 'Acme/B1');
  const aclFile = join(d.dataDir, 'mosquitto.acl');
  const passwordFile = join(d.dataDir, 'mosquitto.passwd');
  let port = 0;
  let mosquitto: ChildProcess;
  let log = '';
  const clients: MqttClient[] = [];
  let master: MqttClient;
  let masterSeen: { topic: string; payload: string }[];
  let gw: RunningGateway | undefined;

  beforeAll(async () => {
    adminJson(['vda5050-acl', '--data-dir', d.dataDir, '--master-username', MASTER, '--out', aclFile]);
    writeFileSync(passwordFile, '', { mode: 0o600 });
    for (const [user, pw] of [[MASTER, MASTER_PASSWORD], [a.robotId, a.robotToken], [b.robotId, b.robotToken]] as const) {
      const r = spawnSync('mosquitto_passwd', ['-b', passwordFile, user, pw], { encoding: 'utf8' });
      expect(r.status, r.stderr).toBe(0);
    }
    port = await freePort();
    const conf = join(d.dataDir, 'mosquitto.conf');
    writeFileSync(conf, [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous false',
      `password_file ${passwordFile}`,
      `acl_file ${aclFile}`,
      'persistence false',
      'log_dest stderr',
      'log_type all',
      // Started as root, mosquitto drops to this user (the files are this user's).
      `user ${userInfo().username}`,
      '',
    ].join('\n'));
    chmodSync(conf, 0o600);
    mosquitto = spawn('/usr/sbin/mosquitto', ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    mosquitto.stderr?.setEncoding('utf8');
    mosquitto.stderr?.on('data', (s: string) => {
      log += s;
    });
    await until(() => log.includes('running'), 15_000, `mosquitto running; log:\n${log}`);
    master = await login(port, MASTER, MASTER_PASSWORD);
    clients.push(master);
    masterSeen = recorder(master);
    await master.subscribeAsync('uagv/v2/#', { qos: 1 });
  });
  afterAll(async () => {
    for (const c of clients) c.end(true);
    await gw?.stop();
    mosquitto?.kill('SIGTERM');
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('a wrong token is refused', async () => {
    await expect(login(port, a.robotId, b.robotToken)).rejects.toThrow(/Not authorized/);
    await expect(login(port, 'Acme/A1', a.robotToken)).rejects.toThrow(/Not authorized/);
  });

  it('robot A cannot publish B\'s state; master control receives A\'s own', async () => {
    const ra = await login(port, a.robotId, a.robotToken);
    clients.push(ra);
    await ra.publishAsync('uagv/v2/Acme/B1/state', '{"forged":true}', { qos: 1 });
    await ra.publishAsync('uagv/v2/Acme/A1/state', '{"marker":1}', { qos: 1 });
    // One connection's messages arrive in order: once the marker is in, a forged state would be too.
    await until(() => masterSeen.some((m) => m.payload === '{"marker":1}'), 10_000, 'A\'s own state at master control');
    expect(masterSeen.filter((m) => m.topic === 'uagv/v2/Acme/B1/state')).toEqual([]);
    ra.end(true);
  });

  it('robot A cannot receive B\'s order, even subscribed to it; master control reaches A', async () => {
    const ra = await login(port, a.robotId, a.robotToken);
    clients.push(ra);
    const seen = recorder(ra);
    await ra.subscribeAsync(['uagv/v2/Acme/A1/order', 'uagv/v2/Acme/B1/order', 'uagv/v2/#'], { qos: 1 }).catch(() => {});
    await master.publishAsync('uagv/v2/Acme/B1/order', '{"for":"B"}', { qos: 1 });
    await master.publishAsync('uagv/v2/Acme/A1/order', '{"for":"A"}', { qos: 1 });
    await until(() => seen.some((m) => m.payload === '{"for":"A"}'), 10_000, 'A\'s order at A');
    expect(seen.filter((m) => m.payload === '{"for":"B"}')).toEqual([]);
    ra.end(true);
  });

  it('robot A\'s last will on B\'s connection topic is never delivered', async () => {
    const ra = await login(port, a.robotId, a.robotToken, { topic: 'uagv/v2/Acme/B1/connection', payload: '{"forgedWill":true}' });
    const clientId = ra.options.clientId!;
    // An unclean end: mosquitto publishes the will, if the ACL lets it.
    ra.stream.destroy();
    await until(() => new RegExp(`Client ${clientId} (closed its connection|disconnected)`).test(log), 10_000, 'mosquitto saw A go');
    const marker = await login(port, a.robotId, a.robotToken);
    clients.push(marker);
    await marker.publishAsync('uagv/v2/Acme/A1/connection', '{"marker":2}', { qos: 1 });
    await until(() => masterSeen.some((m) => m.payload === '{"marker":2}'), 10_000, 'the marker at master control');
    expect(masterSeen.filter((m) => m.payload.includes('forgedWill'))).toEqual([]);
  });

  it('fleetgw serve --vda5050-mqtt-url starts with the external broker and runs none of its own', async () => {
    const pw = join(d.dataDir, 'master.pw');
    writeFileSync(pw, `${MASTER_PASSWORD}\n`, { mode: 0o600 });
    gw = await startGatewayProcess(d.dataDir, [
      '--insecure-http', '--vda5050-mqtt-url', `mqtt://127.0.0.1:${port}`, '--vda5050-mqtt-username', MASTER, '--vda5050-mqtt-password-file', pw,
    ]);
    expect(gw.stderr()).toContain('VDA 5050 uses an external broker');
    expect(gw.stderr()).not.toContain('VDA 5050 broker listening');
    expect(gw.stderr()).not.toContain(MASTER_PASSWORD);
  });
});
