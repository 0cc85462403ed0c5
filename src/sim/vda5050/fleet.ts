/**
 * Virtual VDA 5050 robots for `fleetgw sim --vda5050`: each robot is a third-party AGV stack, the
 * AgvController and VirtualAgvAdapter of vda-5050-lib (VDA 5050 2.0 over MQTT), logged in to the
 * gateway's broker with its robot token. They drive the orders they are given, execute instant actions
 * (stopPause, startPause, cancelOrder, ...) and report state and visualization like any VDA 5050 AGV.
 * vda-5050-lib is loaded here only, on demand: the gRPC simulator and the gateway never load it.
 */
import type { AgvController, InstantActions, Order } from 'vda-5050-lib';
import type { VdaSimRobotCredentials } from './robots-file.js';

export interface VdaSimFleetOptions {
  /** The broker, `mqtt://HOST:PORT` or `mqtts://HOST:PORT`. */
  brokerUrl: string;
  robots: VdaSimRobotCredentials[];
  /** The MQTT user name a robot logs in with (its password is its robot token). */
  username: (robot: VdaSimRobotCredentials) => string;
  /** The topics' interface name (`uagv` by default in VDA 5050). */
  interfaceName: string;
  /** A state message at least this often (ms); the AGV also sends one on every change. */
  stateIntervalMs: number;
  /** A visualization message this often (ms); 0 sends none. */
  visualizationIntervalMs: number;
  /** The CA to trust for `mqtts://`. */
  ca?: Buffer;
  /** The virtual AGVs' driving speed in m/s (vda-5050-lib's default: 2). */
  speedMps?: number;
  log?: (line: string) => void;
}

export interface VdaSimFleetStats {
  robots: number;
  /** Robots whose MQTT connection is up. */
  online: number;
  /** Order messages the robots received. */
  orders: number;
  /** Instant actions the robots received (one message may carry several). */
  instantActions: number;
}

export interface VdaSimRobot {
  readonly robotId: string;
  readonly controller: AgvController;
  /** Whether the robot's MQTT connection is up. */
  online(): boolean;
}

export interface VdaSimFleet {
  readonly robots: readonly VdaSimRobot[];
  stats(): VdaSimFleetStats;
  /** Stops every robot (each publishes connection OFFLINE and disconnects). */
  stop(): Promise<void>;
}

// First connection retries: vda-5050-lib's start() fails when the broker is not up yet, and the robots
// must wait for a gateway that is still starting. After the first connection the client reconnects itself.
const START_RETRY_MS = 1000;

/** Starts the virtual robots; each connects in the background and keeps retrying until stop(). */
export async function runVdaSimFleet(opts: VdaSimFleetOptions): Promise<VdaSimFleet> {
  const lib = await import('vda-5050-lib');
  const log = opts.log ?? (() => {});
  let stopping = false;
  let orders = 0;
  let instantActions = 0;
  const robots = opts.robots.map((cred, i) => {
    let online = false;
    const controller = new lib.AgvController(
      { manufacturer: cred.manufacturer, serialNumber: cred.serialNumber },
      {
        interfaceName: opts.interfaceName,
        vdaVersion: '2.0.0',
        transport: {
          brokerUrl: opts.brokerUrl,
          username: opts.username(cred),
          password: cred.robotToken,
          ...(opts.ca !== undefined ? { tlsOptions: { ca: opts.ca } } : {}),
        },
      },
      { agvAdapterType: lib.VirtualAgvAdapter, publishStateInterval: opts.stateIntervalMs, publishVisualizationInterval: opts.visualizationIntervalMs },
      {
        // Spread out on a 10 m grid so the fleet is not one dot on a map.
        initialPosition: { mapId: 'local', x: (i % 10) * 10, y: Math.floor(i / 10) * 10, theta: 0, lastNodeId: 'start' },
        ...(opts.speedMps !== undefined ? { vehicleSpeed: opts.speedMps } : {}),
      },
    );
    controller.registerConnectionStateChange((state) => {
      const now = state === 'online';
      if (now !== online) log(`robot ${cred.robotId} (${cred.manufacturer}/${cred.serialNumber}) ${now ? 'connected' : 'disconnected'}`);
      online = now;
    });
    // After stop() the robot is offline whatever the client's last callback said.
    const robot: VdaSimRobot = { robotId: cred.robotId, controller, online: () => online && !stopping };
    return { robot, cred };
  });

  const startOne = async ({ robot, cred }: (typeof robots)[number]): Promise<void> => {
    while (!stopping) {
      try {
        await robot.controller.start();
        // A second subscription next to the controller's own: counts what arrived, whatever the AGV then does with it.
        await robot.controller.subscribe(lib.Topic.Order, (_o: Order) => void orders++);
        await robot.controller.subscribe(lib.Topic.InstantActions, (a: InstantActions) => void (instantActions += a.instantActions.length));
        return;
      } catch (err) {
        log(`robot ${cred.robotId}: cannot connect to ${opts.brokerUrl} (${err instanceof Error ? err.message : String(err)}); retrying`);
        await new Promise((r) => setTimeout(r, START_RETRY_MS));
      }
    }
  };
  const starting = Promise.all(robots.map((r) => startOne(r)));

  return {
    robots: robots.map((r) => r.robot),
    stats: () => ({ robots: robots.length, online: robots.filter((r) => r.robot.online()).length, orders, instantActions }),
    async stop() {
      stopping = true;
      await starting;
      await Promise.all(robots.map((r) => r.robot.controller.stop()));
    },
  };
}
