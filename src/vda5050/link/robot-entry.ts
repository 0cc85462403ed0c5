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

/** The start of the outbound headerId clock ({@link headerIdSeed}): 2025-01-01T00:00:00Z. */
export const HEADER_ID_EPOCH_MS = Date.UTC(2025, 0, 1);
/** Outbound headerIds the seed moves ahead per second of wall clock. */
export const HEADER_IDS_PER_SECOND = 2;

/**
 * The first outbound `headerId` of a topic for a robot entry made at `nowMs`. VDA 5050 makes
 * `headerId` a uint32 that increases by one per message; master control keeps no storage for it, so
 * each start seeds it from the clock: {@link HEADER_IDS_PER_SECOND} per second since
 * {@link HEADER_ID_EPOCH_MS}. A later start so begins above every id an earlier one sent as long as
 * that run published fewer than 2 messages a second per robot and topic on average (stateRequests are
 * at most one per 2 s; commands far fewer) and the clock did not step back. 2^32 / 2 s is 68 years:
 * the seed stays in uint32 until 2093 (then it, and a counter that reaches 2^32, wrap to 0).
 */
export function headerIdSeed(nowMs: number): number {
  return Math.floor((Math.max(0, nowMs - HEADER_ID_EPOCH_MS) / 1000) * HEADER_IDS_PER_SECOND) % 2 ** 32;
}

/** The `headerId` after `id` (uint32: wraps to 0 past 2^32 - 1, as vda-5050-lib does). */
export function nextHeaderId(id: number): number {
  return id >= 2 ** 32 - 1 ? 0 : id + 1;
}

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
  pendingFactsheet: Uint8Array | null = null;
  /** The last factsheet read, as mapped (a new `onOnline` only when it differs). */
  factsheetSignature = '';
  /** Next `headerId` per topic master control publishes to this robot ({@link headerIdSeed}). */
  readonly headerIds: { order: number; instantActions: number };
  /**
   * The highest seq of a stop or mission pause (`startPause`) published to the robot or seen in its
   * state, this process's or kept from an earlier one (stop-marks.ts): a motion command issued before
   * it is not published after it (link.ts, send).
   */
  stopSeq = 0n;
  /** States of this robot read by this process: a publication is answered only by a state read after it (delivery.ts). */
  statesRead = 0;
  /** Moves whenever a message to the robot may have been lost (delivery.ts, `LinkPoint`). */
  epoch = 0;
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

  constructor(readonly robot: Vda5050Robot, nowMs = Date.now()) {
    const seed = headerIdSeed(nowMs);
    this.headerIds = { order: seed, instantActions: seed };
  }

  get robotId(): string {
    return this.robot.robotId;
  }

  rememberMission(orderId: string, order: MissionOrder): void {
    this.missionOrders.delete(orderId);
    this.missionOrders.set(orderId, order);
    if (this.missionOrders.size > MISSION_ORDERS_KEPT) this.missionOrders.delete(this.missionOrders.keys().next().value!);
  }
}
