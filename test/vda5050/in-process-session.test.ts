/**
 * Master control's session inside the embedded broker (src/vda5050/broker/in-process-session.ts),
 * against robots on real MQTT connections: retained messages at subscribe, a robot's state handed
 * over in the turn the broker read it, master control's messages reaching only their robot, and a
 * robot that stops reading: its messages beyond the bound are dropped and counted while another
 * robot's stop still arrives at once (over one shared MQTT connection it would wait behind the stuck
 * robot's socket until the broker's drain timeout).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mqtt, { type MqttClient } from 'mqtt';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import type { MasterSession } from '../../src/vda5050/contracts.js';
import { EmbeddedBroker } from '../../src/vda5050/broker/embedded.js';
import { MAX_IN_FLIGHT_PER_TOPIC } from '../../src/vda5050/broker/in-process-session.js';
import { RegistryVda5050Identities } from '../../src/vda5050/identity/identities.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';

const ROOT = 'uagv/v2/Acme';
const INBOUND = ['uagv/v2/+/+/connection', 'uagv/v2/+/+/state'];

interface Seen {
  topic: string;
  payload: string;
}

function login(port: number, username: string, password: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = mqtt.connect(`mqtt://127.0.0.1:${port}`, { username, password, reconnectPeriod: 0, connectTimeout: 10_000 });
    c.once('connect', () => resolve(c));
    c.once('error', reject);
  });
}

describe('master control inside the embedded broker', () => {
  let dir: string;
  let store: Store;
  let identities: RegistryVda5050Identities;
  let broker: EmbeddedBroker;
  let port = 0;
  const robots: Record<'a' | 'b', { robotId: string; token: string }> = { a: { robotId: '', token: '' }, b: { robotId: '', token: '' } };
  const clients: MqttClient[] = [];
  const sessions: MasterSession[] = [];

  const robot = async (which: 'a' | 'b'): Promise<{ client: MqttClient; seen: Seen[] }> => {
    const client = await login(port, robots[which].robotId, robots[which].token);
    clients.push(client);
    const seen: Seen[] = [];
    client.on('message', (topic, payload) => seen.push({ topic, payload: payload.toString() }));
    await client.subscribeAsync([`${ROOT}/${which.toUpperCase()}1/instantActions`, `${ROOT}/${which.toUpperCase()}1/order`], { qos: 0 });
    return { client, seen };
  };

  const master = async (): Promise<{ session: MasterSession; seen: Seen[]; turns: string[]; gone: string[] }> => {
    const session = broker.forMasterControl.openMasterSession('test-master');
    sessions.push(session);
    const seen: Seen[] = [];
    const turns: string[] = [];
    const gone: string[] = [];
    await new Promise<void>((resolve, reject) => {
      session.start({
        connect: () => session.subscribe(INBOUND, (err) => (err ? reject(err) : resolve())),
        close: () => {},
        error: reject,
        drain: () => {},
        robotDisconnected: (binding) => gone.push(binding.serialNumber),
        message: (topic, payload) => {
          seen.push({ topic, payload: payload.toString() });
          turns.push(topic);
        },
      });
    });
    return { session, seen, turns, gone };
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-vda5050-session-'));
    store = openStore(dir);
    const org = createOrg(store, 'o');
    const fleet = createFleet(store, org.orgId, 'f');
    for (const which of ['a', 'b'] as const) {
      const r = addRobot(store, { fleetId: fleet.fleetId, name: which, capabilities: [], active: true, vda5050: { manufacturer: 'Acme', serialNumber: `${which.toUpperCase()}1` } });
      robots[which] = { robotId: r.record.robotId, token: r.robotToken };
    }
    identities = new RegistryVda5050Identities(store);
    identities.start(50);
    port = await freePort();
    broker = new EmbeddedBroker({
      store, identities, host: '127.0.0.1', port, tls: null, interfaceName: 'uagv', version: '2.0.0',
      maxConnections: 16, maxPacketBytes: 64 * 1024,
      observer: { denied: () => {}, routingQueue: () => {} },
      log: pino({ enabled: false }),
    });
    await broker.listen();
  });
  afterAll(async () => {
    for (const c of clients) c.end(true);
    for (const s of sessions) await s.close();
    await broker.close();
    identities.stop();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hands over the retained connection messages when it subscribes, and new messages as they come', async () => {
    const a = await robot('a');
    await a.client.publishAsync(`${ROOT}/A1/connection`, '{"connectionState":"ONLINE"}', { qos: 1, retain: true });
    const m = await master();
    await until(() => m.seen.some((s) => s.topic === `${ROOT}/A1/connection`), 5_000, 'the retained connection message');
    expect(m.seen.find((s) => s.topic === `${ROOT}/A1/connection`)!.payload).toBe('{"connectionState":"ONLINE"}');
    await a.client.publishAsync(`${ROOT}/A1/state`, '{"headerId":1}', { qos: 0 });
    await until(() => m.seen.some((s) => s.topic === `${ROOT}/A1/state`), 5_000, 'the state');
    await m.session.close();
  });

  it('hands a robot\'s state over in the turn the broker read it, before any immediate runs', async () => {
    const a = await robot('a');
    const m = await master();
    let immediateRan: boolean | null = null;
    // The broker reads the robot's socket in an I/O callback: mark that turn from the socket itself.
    const socket = (Object.values((broker as unknown as { aedes: { clients: Record<string, { conn: NodeJS.EventEmitter }> } }).aedes.clients)).at(-1)!.conn;
    const mark = (): void => {
      immediateRan = false;
      setImmediate(() => {
        immediateRan = true;
      });
    };
    socket.prependListener('data', mark);
    const before = m.turns.length;
    let ranBefore: boolean | null = null;
    const watch = setInterval(() => {
      if (ranBefore === null && m.turns.length > before) ranBefore = immediateRan;
    }, 0);
    const origin = m.turns.push.bind(m.turns);
    m.turns.push = (...items: string[]): number => {
      if (ranBefore === null) ranBefore = immediateRan;
      return origin(...items);
    };
    try {
      await a.client.publishAsync(`${ROOT}/A1/state`, '{"headerId":2}', { qos: 0 });
      await until(() => ranBefore !== null, 5_000, 'the state at master control');
      expect(ranBefore).toBe(false);
    } finally {
      clearInterval(watch);
      socket.removeListener('data', mark);
      await m.session.close();
    }
  });

  it('tells when a robot\'s session ends, but not when the robot replaced it by logging in again', async () => {
    const m = await master();
    const b = await robot('b');
    const again = await robot('b');
    // The first session was closed by the second login: B is still there.
    await until(() => !b.client.connected, 5_000, 'the replaced session closed');
    expect(m.gone).toEqual([]);
    again.client.stream.destroy();
    await until(() => m.gone.length > 0, 5_000, 'B\'s session end');
    expect(m.gone).toEqual(['B1']);
    await m.session.close();
  });

  it('publishes to the robot it names only', async () => {
    const a = await robot('a');
    const b = await robot('b');
    const m = await master();
    expect(m.session.publish(`${ROOT}/B1/instantActions`, Buffer.from('{"for":"b"}'))).toBe(true);
    await until(() => b.seen.length > 0, 5_000, 'B\'s message');
    expect(b.seen[0]).toEqual({ topic: `${ROOT}/B1/instantActions`, payload: '{"for":"b"}' });
    expect(a.seen).toEqual([]);
    await m.session.close();
  });

  it('drops messages beyond its bound to a robot that stopped reading, and another robot\'s stop still arrives at once', async () => {
    const a = await robot('a');
    const b = await robot('b');
    const m = await master();
    // A stops reading its socket: what the broker writes to it piles up in the kernel, then in its
    // connection, and the broker's writes to it wait for a drain that does not come.
    a.client.stream.unpipe();
    a.client.stream.pause();
    const big = Buffer.alloc(60 * 1024, 0x61);
    let sent = 0;
    await until(() => {
      for (let i = 0; i < 32; i++, sent++) m.session.publish(`${ROOT}/A1/instantActions`, big);
      return m.session.droppedCount > 0;
    }, 30_000, 'messages to the stuck robot dropped at the bound');
    expect(sent).toBeGreaterThan(MAX_IN_FLIGHT_PER_TOPIC);
    const dropped = m.session.droppedCount;
    // The stuck robot holds its own topic only: a stop to B is written at once.
    const t0 = Date.now();
    m.session.publish(`${ROOT}/B1/instantActions`, Buffer.from('{"stop":true}'));
    await until(() => b.seen.some((s) => s.payload === '{"stop":true}'), 10_000, 'B\'s stop while A is stuck');
    // Well inside the broker's drain timeout (30 s), which is what a shared connection waited for.
    expect(Date.now() - t0).toBeLessThan(5_000);
    // Still stuck: more to A is dropped, not queued.
    m.session.publish(`${ROOT}/A1/instantActions`, big);
    expect(m.session.droppedCount).toBe(dropped + 1);
    a.client.end(true);
    await m.session.close();
  });
});
