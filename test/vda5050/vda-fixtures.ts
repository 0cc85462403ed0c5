/**
 * Test fixtures for the VDA 5050 link: a plain aedes broker on a free loopback port, a hand-made
 * identities table, and a third-party AGV (vda-5050-lib's AgvController with its VirtualAgvAdapter).
 */
import { createServer, type AddressInfo, type Server } from 'node:net';
import { Aedes } from 'aedes';
import { AgvController, VirtualAgvAdapter } from 'vda-5050-lib';
import type { Vda5050Binding, Vda5050Identities, Vda5050Robot } from '../../src/vda5050/contracts.js';

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
    { initialPosition: { mapId: 'site', x: at.x, y: at.y, theta: 0, lastNodeId: 'home' }, vehicleSpeed: opts.speed ?? 2 } as never,
  );
  await agv.start();
  return agv;
}
