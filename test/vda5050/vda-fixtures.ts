/**
 * Test fixtures for the VDA 5050 link: a plain aedes broker on a free loopback port, a hand-made
 * identities table, and a third-party AGV (vda-5050-lib's AgvController with its VirtualAgvAdapter).
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { Aedes } from 'aedes';
import mqtt from 'mqtt';
import { AgvController, VirtualAgvAdapter } from 'vda-5050-lib';
import type { Vda5050Binding, Vda5050Identities, Vda5050Robot } from '../../src/vda5050/contracts.js';
import type { StopMarks } from '../../src/vda5050/link/stop-marks.js';

export interface TestBroker {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** An aedes broker without authentication on 127.0.0.1 (`port` 0: any free one). */
export async function startTestBroker(port = 0): Promise<TestBroker> {
  const aedes = await Aedes.createBroker();
  const server: Server = createServer(aedes.handle);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve());
  });
  const p = (server.address() as AddressInfo).port;
  return {
    url: `mqtt://127.0.0.1:${p}`,
    port: p,
    close: () =>
      new Promise<void>((resolve) => {
        // Every client connection is cut (a broker crash, as robots and master control see it).
        aedes.close(() => server.close(() => resolve()));
        for (const c of Object.values((aedes as unknown as { clients: Record<string, { conn?: { destroy(): void } }> }).clients)) c.conn?.destroy();
      }),
  };
}

/** Stop marks held in memory (a test's gateway lives for one test; the LMDB ones: test/vda5050/stop-marks.test.ts). */
export function memoryStopMarks(): StopMarks {
  const marks = new Map<string, bigint>();
  return {
    get: (robotId) => marks.get(robotId) ?? 0n,
    raise: (robotId, seq) => {
      if (seq > (marks.get(robotId) ?? 0n)) marks.set(robotId, seq);
    },
  };
}

/** A fixed identities table. */
export function identitiesOf(robots: Vda5050Robot[]): Vda5050Identities {
  return {
    robotOf: (m, s) => robots.find((r) => r.binding.manufacturer === m && r.binding.serialNumber === s),
    bindingOf: (id) => robots.find((r) => r.robotId === id)?.binding,
    all: () => robots,
    onChange: () => () => undefined,
  };
}

/** A virtual AGV at (x, y) on map `site`, connected to `brokerUrl`. */
export async function startAgv(brokerUrl: string, binding: Vda5050Binding, at = { x: 0, y: 0 }, opts: { speed?: number } = {}): Promise<AgvController> {
  const agv = new AgvController(
    { manufacturer: binding.manufacturer, serialNumber: binding.serialNumber },
    { interfaceName: 'uagv', vdaVersion: '2.0.0', transport: { brokerUrl, reconnectPeriod: 200 }, topicObjectValidation: { inbound: true, outbound: false } },
    { agvAdapterType: VirtualAgvAdapter, publishVisualizationInterval: 200 },
    { initialPosition: { mapId: 'site', x: at.x, y: at.y, theta: 0, lastNodeId: 'home' }, vehicleSpeed: opts.speed ?? 2 },
  );
  await agv.start();
  return agv;
}

/** A complete VDA 5050 2.0 factsheet (every section the standard's schema requires) with these agvActions. */
export function factsheetOf(binding: Vda5050Binding, agvActions: object[]): Record<string, unknown> {
  return {
    headerId: 0, timestamp: new Date().toISOString(), version: '2.0.0', manufacturer: binding.manufacturer, serialNumber: binding.serialNumber,
    typeSpecification: { seriesName: 'VirtualAGV', agvKinematic: 'DIFF', agvClass: 'CARRIER', maxLoadMass: 100, localizationTypes: ['NATURAL'], navigationTypes: ['AUTONOMOUS'] },
    physicalParameters: { speedMin: 0, speedMax: 2, accelerationMax: 1, decelerationMax: 1, heightMax: 1, width: 1, length: 1 },
    protocolLimits: { maxStringLens: {}, maxArrayLens: {}, timing: { minOrderInterval: 0.1, minStateInterval: 0.1 } },
    protocolFeatures: { optionalParameters: [], agvActions },
    agvGeometry: {},
    loadSpecification: {},
  };
}

/** A hand-driven robot on a plain MQTT client: it publishes exactly the states a test gives it. */
export interface ScriptedRobot {
  /** Every instant action and order received, in order. */
  received: Array<{ topic: 'instantActions' | 'order'; body: Record<string, unknown> }>;
  /** Action ids received (each time one arrives). */
  actionIds(): string[];
  publishState(patch?: Record<string, unknown>): Promise<void>;
  online(): Promise<void>;
  /** Whether its client is connected to the broker. */
  connected(): boolean;
  /** Cuts the TCP connection without a DISCONNECT (the broker then publishes the robot's will). */
  drop(): void;
  end(): Promise<void>;
}

/**
 * A scripted robot logged in as `username`/`password` (empty for an open broker); `ca`: the CA to trust
 * for `mqtts://`; `noWill`: without the standard's last will (CONNECTIONBROKEN on its connection topic).
 */
export async function scriptedRobot(url: string, binding: Vda5050Binding, login: { username?: string; password?: string; ca?: Buffer; noWill?: boolean } = {}): Promise<ScriptedRobot> {
  const { noWill = false, ...auth } = login;
  const prefix = `uagv/v2/${binding.manufacturer}/${binding.serialNumber}`;
  const header = (id: number): Record<string, unknown> => ({ headerId: id, timestamp: new Date().toISOString(), version: '2.0.0', manufacturer: binding.manufacturer, serialNumber: binding.serialNumber });
  const c = await mqtt.connectAsync(url, {
    reconnectPeriod: 200,
    clientId: `scripted-${binding.serialNumber}-${Math.random().toString(16).slice(2)}`,
    ...auth,
    ...(noWill ? {} : { will: { topic: `${prefix}/connection`, payload: Buffer.from(JSON.stringify({ ...header(0), connectionState: 'CONNECTIONBROKEN' })), qos: 1 as const, retain: true } }),
  });
  const received: ScriptedRobot['received'] = [];
  c.on('message', (topic, payload) => received.push({ topic: topic.endsWith('/order') ? 'order' : 'instantActions', body: JSON.parse(payload.toString()) as Record<string, unknown> }));
  await c.subscribeAsync([`${prefix}/instantActions`, `${prefix}/order`]);
  let stateHeader = 0;
  let connectionHeader = 0;
  const base = {
    orderId: '', orderUpdateId: 0, lastNodeId: 'home', lastNodeSequenceId: 0, driving: false, paused: false, operatingMode: 'AUTOMATIC',
    nodeStates: [], edgeStates: [], actionStates: [], errors: [], loads: [],
    agvPosition: { x: 1, y: 2, theta: 0, mapId: 'site', positionInitialized: true },
    batteryState: { batteryCharge: 80, charging: false }, safetyState: { eStop: 'NONE', fieldViolation: false },
  };
  return {
    received,
    actionIds: () => received.flatMap((r) => ((r.body.instantActions ?? r.body.actions ?? []) as Array<{ actionId: string }>).map((a) => a.actionId)),
    publishState: async (patch = {}) => {
      await c.publishAsync(`${prefix}/state`, JSON.stringify({ ...header(++stateHeader), ...base, ...patch }));
    },
    online: async () => {
      await c.publishAsync(`${prefix}/connection`, JSON.stringify({ ...header(++connectionHeader), connectionState: 'ONLINE' }), { retain: true, qos: 1 });
    },
    connected: () => c.connected,
    drop: () => {
      c.options.reconnectPeriod = 0;
      c.stream.destroy();
    },
    end: () => c.endAsync(true),
  };
}
