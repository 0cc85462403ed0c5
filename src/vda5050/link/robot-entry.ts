/**
 * What master control keeps about one VDA 5050 robot while the gateway runs: its connection and
 * latest state, the ids it still has to show, its mission order, and its inbound messages waiting to
 * be read. All in memory: after a restart the robot's retained connection message and its first state
 * rebuild it (docs/vda5050.md, "Delivery"), and the mission order its state shows is rebuilt from the
 * run's MissionStart (docs/vda5050.md, "Orders across a restart").
 */
import type { Vda5050Robot } from '../contracts.js';
import { AwaitedIds } from './delivery.js';
import type { ConnectionState, VdaFactsheet, VdaState } from './messages.js';
import type { MissionProgress } from './mission.js';
import type { MissionOrder } from './outbound.js';

/** Mission orders remembered per robot (the latest ones sent or rebuilt; an older one is rebuilt again when its run is known). */
export const MISSION_ORDERS_KEPT = 8;

export class RobotEntry {
  connection: ConnectionState | null = null;
  online = false;
  state: VdaState | null = null;
  factsheet: VdaFactsheet | null = null;
  readonly awaited = new AwaitedIds();
  /** The robot's newest unread `state` and `visualization` (full snapshots: a newer one replaces an unread older one). */
  pendingState: Uint8Array | null = null;
  pendingVisualization: Uint8Array | null = null;
  /** Next `headerId` per topic master control publishes to this robot. */
  readonly headerIds = { order: 0, instantActions: 0 };
  readonly missionOrders = new Map<string, MissionOrder>();
  mission: MissionProgress | null = null;
  /** The last mission order id the robot ran whose run was not known (logged once). */
  unknownMissionOrder = '';
  /** When master control last got a message on any of the robot's topics (its clock). */
  lastHeardMs = 0;
  unknownMissionLoggedAtMs = -Infinity;
  /** When master control last asked for the robot's state (stateRequest). */
  stateRequestedAtMs = -Infinity;
  healthSignature = '';
  healthAtMs = 0;
  /** Telemetry sinks for the listener array they were made for. */
  sinks: { listeners: readonly unknown[]; sinks: Array<(batch: Uint8Array) => boolean | void> } | null = null;

  constructor(readonly robot: Vda5050Robot) {}

  get robotId(): string {
    return this.robot.robotId;
  }

  rememberMission(orderId: string, order: MissionOrder): void {
    this.missionOrders.delete(orderId);
    this.missionOrders.set(orderId, order);
    if (this.missionOrders.size > MISSION_ORDERS_KEPT) this.missionOrders.delete(this.missionOrders.keys().next().value!);
  }
}
