/**
 * Third-party VDA 5050 AGVs for tests: vda-5050-lib's AgvController with its VirtualAgvAdapter (the
 * library's own AGV stack, VDA 5050 2.0 over MQTT), logged in to a broker with a robot's credentials.
 * Each AGV records what it received, by action id and order id, beside what the controller does with
 * it, so a test can count that every command arrived exactly once.
 */
import { AgvController, Topic, VirtualAgvAdapter, type Headerless, type InstantActions, type Order, type State } from 'vda-5050-lib';
import { until } from './until.js';

export interface VirtualAgvOptions {
  brokerUrl: string;
  username: string;
  password: string;
  manufacturer: string;
  serialNumber: string;
  /** Topic interface name (default `uagv`). */
  interfaceName?: string;
  /** A state message at least this often (default 1000 ms), and on every change. */
  stateMs?: number;
  /** A visualization message this often (default 200 ms; 0: none). */
  visualizationMs?: number;
  /** Driving speed, m/s (default 2). */
  speedMps?: number;
  /** Initial position (default 0, 0 on map `local`, last node `start`). */
  position?: { x: number; y: number; mapId?: string; lastNodeId?: string };
  /** MQTT reconnect period after a lost connection (default 1000 ms; the library's default). */
  reconnectMs?: number;
}

export interface ReceivedInstantAction {
  actionId: string;
  actionType: string;
  /** Date.now() when the message arrived. */
  atMs: number;
}

export interface VirtualAgv {
  readonly options: VirtualAgvOptions;
  readonly controller: AgvController;
  /** Every instant action received, in order of arrival (a duplicate appears twice). */
  readonly instantActions: ReceivedInstantAction[];
  /** Every order message received, in order of arrival. */
  readonly orders: Order[];
  /** How many times each action id arrived. */
  countsByActionId(): Map<string, number>;
  /** Whether the MQTT connection is up. */
  online(): boolean;
  /** The state the AGV reports (the controller's current state). */
  state(): Headerless<State>;
  /** Publishes connection OFFLINE and disconnects (the orderly way out). */
  stop(): Promise<void>;
}

/** A virtual AGV could not connect within its time; the message has the last connection error. */
export class AgvConnectError extends Error {}

/**
 * Starts one virtual AGV and resolves once it is connected and subscribed. Retries the first
 * connection until `timeoutMs` (a broker may still be starting; a refused login is retried too, since
 * a robot's binding may land a moment after the AGV starts).
 */
export async function startVirtualAgv(opts: VirtualAgvOptions, timeoutMs = 30_000): Promise<VirtualAgv> {
  const controller = new AgvController(
    { manufacturer: opts.manufacturer, serialNumber: opts.serialNumber },
    {
      interfaceName: opts.interfaceName ?? 'uagv',
      vdaVersion: '2.0.0',
      transport: { brokerUrl: opts.brokerUrl, username: opts.username, password: opts.password, reconnectPeriod: opts.reconnectMs ?? 1000, connectTimeout: 10_000 },
    },
    { agvAdapterType: VirtualAgvAdapter, publishStateInterval: opts.stateMs ?? 1000, publishVisualizationInterval: opts.visualizationMs ?? 200 },
    {
      initialPosition: { mapId: opts.position?.mapId ?? 'local', x: opts.position?.x ?? 0, y: opts.position?.y ?? 0, theta: 0, lastNodeId: opts.position?.lastNodeId ?? 'start' },
      ...(opts.speedMps !== undefined ? { vehicleSpeed: opts.speedMps } : {}),
    },
  );
  let online = false;
  controller.registerConnectionStateChange((s) => (online = s === 'online'));
  const instantActions: ReceivedInstantAction[] = [];
  const orders: Order[] = [];
  let lastError: unknown;
  await until(async () => {
    try {
      await controller.start();
      return true;
    } catch (e) {
      lastError = e;
      return false;
    }
  }, timeoutMs, `AGV ${opts.manufacturer}/${opts.serialNumber} connected to ${opts.brokerUrl}`, 500).catch((e: unknown) => {
    throw new AgvConnectError(`${(e as Error).message}: ${lastError instanceof Error ? lastError.message : String(lastError)}`);
  });
  // Beside the controller's own subscriptions: what arrived, whatever the controller then does with it.
  await controller.subscribe(Topic.InstantActions, (m: InstantActions) => {
    const atMs = Date.now();
    for (const a of m.instantActions) instantActions.push({ actionId: a.actionId, actionType: a.actionType, atMs });
  });
  await controller.subscribe(Topic.Order, (o: Order) => void orders.push(o));
  return {
    options: opts,
    controller,
    instantActions,
    orders,
    countsByActionId() {
      const counts = new Map<string, number>();
      for (const a of instantActions) counts.set(a.actionId, (counts.get(a.actionId) ?? 0) + 1);
      return counts;
    },
    online: () => online,
    state: () => controller.currentState,
    stop: () => controller.stop(),
  };
}

/** Starts several AGVs, a few at a time (a loaded 2-core machine connects hundreds slowly, not all at once). */
export async function startVirtualAgvs(list: VirtualAgvOptions[], concurrency = 20, timeoutMs = 60_000): Promise<VirtualAgv[]> {
  const out: VirtualAgv[] = new Array<VirtualAgv>(list.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < list.length) {
      const i = next++;
      out[i] = await startVirtualAgv(list[i]!, timeoutMs);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, list.length) }, worker));
  return out;
}
