/**
 * The embedded VDA 5050 broker over real TCP with the `mqtt` client, in-process so the test holds
 * master control's credential (made at start, never written anywhere): master control reaches
 * every robot's topics in both directions and nothing outside its interface; a robot receives
 * only its own order; packet and connection bounds; an identity change ends the robot's session.
 * The real-process tests (test/e2e/vda5050-broker*.test.ts) cover what a robot can do.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureTlsFiles, readTlsFiles } from '../../src/http/tls.js';
import { addRobot, createFleet, createOrg, replaceRobotSync } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { EmbeddedBroker, type DenialReason } from '../../src/vda5050/broker/embedded.js';
import { PacketSizeScanner } from '../../src/vda5050/broker/packet-limit.js';
import { RegistryVda5050Identities } from '../../src/vda5050/identity/identities.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';

function login(port: number, username: string, password: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = mqtt.connect(`mqtt://127.0.0.1:${port}`, { username, password, reconnectPeriod: 0, connectTimeout: 10_000 });
    c.once('connect', () => resolve(c));
    c.once('error', (err) => {
      c.end(true);
      reject(err);
    });
    c.once('close', () => reject(new Error('closed before CONNACK')));
  });
}

function granted(c: MqttClient, topic: string): Promise<number> {
  return new Promise((resolve, reject) => {
    c.subscribe(topic, { qos: 1 }, (err, grants) => {
      const code = (err as { packet?: { granted?: unknown[] } } | null | undefined)?.packet?.granted?.[0];
      if (typeof code === 'number') resolve(code);
      else if (err) reject(err);
      else resolve(grants?.[0]?.qos ?? -1);
    });
  });
}

function recorder(c: MqttClient): { topic: string; payload: string }[] {
  const seen: { topic: string; payload: string }[] = [];
  c.on('message', (topic, payload) => seen.push({ topic, payload: payload.toString() }));
  return seen;
}

describe('PacketSizeScanner', () => {
  it('follows packet boundaries across any chunking and stops at the first packet over the limit', () => {
    // PINGREQ (no body), a PUBLISH with a 200-byte body (2 length bytes), then one declaring 5,000.
    const publish = Buffer.concat([Buffer.from([0x30, 0xc8, 0x01]), Buffer.alloc(200, 1)]);
    const stream = Buffer.concat([Buffer.from([0xc0, 0x00]), publish, Buffer.from([0x30, 0x88, 0x27])]);
    for (const size of [1, 2, 3, 7, stream.length]) {
      const s = new PacketSizeScanner(4096);
      const okUntil = 2 + publish.length;
      let ok = true;
      for (let i = 0; i < stream.length && ok; i += size) {
        ok = s.feed(stream.subarray(i, i + size));
        if (i + size <= okUntil) expect(ok, `chunk ${size} at ${i}`).toBe(true);
      }
      expect(ok, `chunk size ${size}`).toBe(false);
      expect(s.refusedLength).toBe(5000);
    }
    expect(new PacketSizeScanner(4096).feed(publish)).toBe(true);
  });
});

describe('the embedded VDA 5050 broker', () => {
  let dir: string;
  let store: Store;
  let identities: RegistryVda5050Identities;
  let broker: EmbeddedBroker;
  let port = 0;
  const denials: DenialReason[] = [];
  const clients: MqttClient[] = [];
  let a: { robotId: string; token: string };
  let b: { robotId: string; token: string };
  const open = async (username: string, password: string): Promise<MqttClient> => {
    const c = await login(port, username, password);
    clients.push(c);
    return c;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-vda5050-broker-'));
    store = openStore(dir);
    const org = createOrg(store, 'o');
    const fleet = createFleet(store, org.orgId, 'f');
    const ra = addRobot(store, { fleetId: fleet.fleetId, name: 'a', capabilities: [], active: true, vda5050: { manufacturer: 'Acme', serialNumber: 'A1' } });
    const rb = addRobot(store, { fleetId: fleet.fleetId, name: 'b', capabilities: [], active: true, vda5050: { manufacturer: 'Acme', serialNumber: 'B1' } });
    a = { robotId: ra.record.robotId, token: ra.robotToken };
    b = { robotId: rb.record.robotId, token: rb.robotToken };
    identities = new RegistryVda5050Identities(store);
    identities.start(50);
    port = await freePort();
    broker = new EmbeddedBroker({
      store,
      identities,
      host: '127.0.0.1',
      port,
      tls: null,
      interfaceName: 'uagv',
      version: '2.0.0',
      // Master control, A, B and one more.
      maxConnections: 4,
      maxPacketBytes: 4096,
      observer: { denied: (reason) => denials.push(reason), routingQueue: () => {} },
      log: pino({ enabled: false }),
    });
    await broker.listen();
  });
  afterAll(async () => {
    for (const c of clients) c.end(true);
    await broker.close();
    identities.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hands out a master login whose password stays out of JSON', () => {
    expect(broker.connection).toMatchObject({ url: `mqtt://127.0.0.1:${port}`, username: 'fleetgw-master-control', interfaceName: 'uagv', version: '2.0.0' });
    expect(broker.connection.password.length).toBeGreaterThanOrEqual(32);
    expect(JSON.stringify(broker.connection)).not.toContain(broker.connection.password);
  });

  it('master control receives robot state and reaches each robot\'s order; a robot gets only its own', async () => {
    await expect(login(port, broker.connection.username, 'not-the-password')).rejects.toThrow(/Bad username or password/);
    const master = await open(broker.connection.username, broker.connection.password);
    const masterSeen = recorder(master);
    expect(await granted(master, 'uagv/v2/+/+/state')).toBe(1);
    expect(await granted(master, 'other/v2/#')).toBe(128);
    const ra = await open(a.robotId, a.token);
    const rb = await open(b.robotId, b.token);
    const aSeen = recorder(ra);
    const bSeen = recorder(rb);
    expect(await granted(ra, 'uagv/v2/Acme/A1/order')).toBe(1);
    expect(await granted(rb, 'uagv/v2/Acme/B1/order')).toBe(1);
    await ra.publishAsync('uagv/v2/Acme/A1/state', '{"from":"A"}', { qos: 1 });
    await until(() => masterSeen.some((m) => m.topic === 'uagv/v2/Acme/A1/state'), 10_000, 'A\'s state at master control');
    await master.publishAsync('uagv/v2/Acme/A1/order', '{"for":"A"}', { qos: 1 });
    await master.publishAsync('uagv/v2/Acme/B1/order', '{"for":"B"}', { qos: 1 });
    await until(() => aSeen.length > 0 && bSeen.length > 0, 10_000, 'each robot\'s order');
    expect(aSeen).toEqual([{ topic: 'uagv/v2/Acme/A1/order', payload: '{"for":"A"}' }]);
    expect(bSeen).toEqual([{ topic: 'uagv/v2/Acme/B1/order', payload: '{"for":"B"}' }]);
    // Outside its interface master control is refused too (the connection closes).
    const closed = new Promise<void>((resolve) => master.once('close', () => resolve()));
    master.publish('elsewhere/x', 'x', { qos: 1 });
    await closed;
    expect(denials).toContain('publish');
  });

  it('a packet over the size limit closes the connection before its body is read', async () => {
    const ra = await open(a.robotId, a.token);
    const closed = new Promise<void>((resolve) => ra.once('close', () => resolve()));
    ra.publish('uagv/v2/Acme/A1/state', Buffer.alloc(10_000, 0x20), { qos: 0 });
    await closed;
    expect(denials).toContain('packet_size');
  });

  it('connections past the bound are dropped', async () => {
    for (const c of clients) c.end(true);
    clients.length = 0;
    // The bound counts sockets, logged in or not: four that never send CONNECT fill it.
    const sockets: Socket[] = [];
    await until(async () => {
      const s = await new Promise<Socket | null>((resolve) => {
        const sock = connect(port, '127.0.0.1', () => resolve(sock));
        sock.once('error', () => resolve(null));
      });
      if (s !== null) sockets.push(s);
      return sockets.length === 4;
    }, 10_000, 'four idle sockets');
    await expect(login(port, a.robotId, a.token)).rejects.toThrow();
    expect(denials).toContain('connections');
    for (const s of sockets) s.destroy();
  });

  it('a robot whose identity changes is logged out, and logs in again under the new one', async () => {
    await until(async () => (await login(port, a.robotId, a.token).then((c) => (clients.push(c), true), () => false)), 10_000, 'a free connection slot');
    const ra = clients.at(-1)!;
    const closed = new Promise<void>((resolve) => ra.once('close', () => resolve()));
    await store.root.transaction(() => {
      const cur = store.robots.get(a.robotId)!;
      replaceRobotSync(store, cur, { ...cur, vda5050: { manufacturer: 'Acme', serialNumber: 'A2' } });
    });
    await closed;
    const again = await open(a.robotId, a.token);
    expect(await granted(again, 'uagv/v2/Acme/A2/order')).toBe(1);
    expect(await granted(again, 'uagv/v2/Acme/A1/order')).toBe(128);
    expect(identities.robotOf('Acme', 'A1')).toBeUndefined();
    expect(identities.robotOf('Acme', 'A2')?.robotId).toBe(a.robotId);
  });
});

describe('the embedded VDA 5050 broker over TLS (a non-loopback gateway host)', () => {
  it('master control and robots log in over mqtts trusting the gateway certificate; plain MQTT is not served', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-vda5050-tls-'));
    const store = openStore(dir);
    const identities = new RegistryVda5050Identities(store);
    const org = createOrg(store, 'o');
    const fleet = createFleet(store, org.orgId, 'f');
    const r = addRobot(store, { fleetId: fleet.fleetId, name: 'a', capabilities: [], active: true, vda5050: { manufacturer: 'Acme', serialNumber: 'T1' } });
    const pem = await readTlsFiles(await ensureTlsFiles(dir));
    const port = await freePort();
    // The plugin passes the robot link's TLS pair (null on a loopback host); the self-signed one names 127.0.0.1.
    const broker = new EmbeddedBroker({ store, identities, host: '127.0.0.1', port, tls: pem, interfaceName: 'uagv', version: '2.0.0', maxConnections: 10, maxPacketBytes: 4096, observer: { denied: () => {}, routingQueue: () => {} }, log: pino({ enabled: false }) });
    try {
      await broker.listen();
      expect(broker.connection.url).toBe(`mqtts://127.0.0.1:${port}`);
      expect(broker.connection.ca?.equals(pem.cert)).toBe(true);
      const tlsLogin = (username: string, password: string): Promise<MqttClient> =>
        new Promise((resolve, reject) => {
          const c = mqtt.connect(broker.connection.url, { username, password, ca: broker.connection.ca, reconnectPeriod: 0 });
          c.once('connect', () => resolve(c));
          c.once('error', (err) => {
            c.end(true);
            reject(err);
          });
        });
      const master = await tlsLogin(broker.connection.username, broker.connection.password);
      const robot = await tlsLogin(r.record.robotId, r.robotToken);
      const seen = recorder(robot);
      expect(await granted(robot, 'uagv/v2/Acme/T1/order')).toBe(1);
      await master.publishAsync('uagv/v2/Acme/T1/order', '{"tls":true}', { qos: 1 });
      await until(() => seen.length === 1, 10_000, 'the order over TLS');
      master.end(true);
      robot.end(true);
      await expect(login(port, r.record.robotId, r.robotToken)).rejects.toThrow();
    } finally {
      await broker.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
