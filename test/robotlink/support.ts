/**
 * Shared fixtures for robot link, agent and simulator tests: a temp LMDB with an org, a fleet and
 * robots; a real robot link server on 127.0.0.1:0; an event recorder; and a TCP proxy that can cut
 * or silently black-hole connections (to play a dead network).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { CommandAck } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { startRobotLinkServer, type RobotLinkServer, type RobotLinkServerOptions } from '../../src/robotlink/server.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';

export interface LinkEvents {
  online: { robotId: string; fleetId: string; capabilities: string[]; agentVersion: string; lastAppliedSeq?: bigint; at: number }[];
  offline: { robotId: string; reason: string; at: number }[];
  telemetry: { robotId: string; fleetId: string; batch: Uint8Array }[];
  acks: { robotId: string; ack: CommandAck }[];
}

export interface Harness {
  dir: string;
  store: Store;
  fleetId: string;
  server: RobotLinkServer;
  events: LinkEvents;
  /** Registers a robot and returns its credentials. */
  robot(name?: string): { robotId: string; robotToken: string };
  close(): Promise<void>;
}

/** Temp LMDB + robot link server with a recording listener. */
export async function startHarness(opts: Partial<RobotLinkServerOptions> = {}): Promise<Harness> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'fleetgw-robotlink-'));
  const store = openStore(dir);
  const org = createOrg(store, 'test org');
  const fleet = createFleet(store, org.orgId, 'test fleet');
  const server = await startRobotLinkServer({ store, host: '127.0.0.1', port: 0, tls: null, ...opts });
  const events: LinkEvents = { online: [], offline: [], telemetry: [], acks: [] };
  server.link.listen({
    onOnline: (robotId, info) => events.online.push({ robotId, ...info, at: Date.now() }),
    onOffline: (robotId, reason) => events.offline.push({ robotId, reason, at: Date.now() }),
    // Copy: the batch may be a view into a buffer grpc-js reuses.
    onTelemetry: (robotId, fleetId, batch) => events.telemetry.push({ robotId, fleetId, batch: Uint8Array.from(batch) }),
    onAck: (robotId, ack) => events.acks.push({ robotId, ack }),
  });
  return {
    dir,
    store,
    fleetId: fleet.fleetId,
    server,
    events,
    robot: (name = 'robot') => {
      const r = addRobot(store, { fleetId: fleet.fleetId, name, capabilities: ['stop'], active: true });
      return { robotId: r.record.robotId, robotToken: r.robotToken };
    },
    close: async () => {
      await server.close();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Polls until `cond` holds, or throws naming `what` after `timeoutMs` (a bound for a loaded machine, not a wait). */
export async function waitFor(cond: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** A TCP proxy in front of the gateway that can drop or silently black-hole its connections. */
export interface Proxy {
  address: string;
  /** Destroys every proxied connection (both ends see the TCP connection close). */
  cut(): void;
  /** Stops forwarding bytes without closing anything, like a cable pulled mid-route. */
  blackhole(on: boolean): void;
  close(): Promise<void>;
}

export async function startProxy(target: string): Promise<Proxy> {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const sockets = new Set<net.Socket>();
  let holed = false;
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    for (const [a, b] of [[client, upstream], [upstream, client]] as const) {
      sockets.add(a);
      a.on('data', (chunk: Buffer) => {
        if (!holed) b.write(chunk);
      });
      a.on('error', () => b.destroy());
      a.on('close', () => {
        sockets.delete(a);
        b.destroy();
      });
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${addr.port}`,
    cut: () => {
      for (const s of sockets) s.destroy();
    },
    blackhole: (on) => {
      holed = on;
    },
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
