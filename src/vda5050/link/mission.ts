/**
 * A mission run's progress from the robot's state (docs/vda5050.md, "Mapping"): the run's order
 * (`orderId` = `mission:{runId}`) is `running` while nodes remain, `paused` while the robot is
 * paused, `completed` once every node is traversed and no node action is still going, `cancelled`
 * when a `cancelOrder` ends it early and `failed` when a node action fails or the robot reports a
 * FATAL error. Progress is the share of the order's nodes traversed; the step index is the step of the
 * last node reached. Both need the order (its node count and each node's step, `stepOfNode`): without
 * it (a run this gateway does not know) the node count is estimated from the first state's nodes left,
 * the step index from the nodes traversed since, and the mission id is empty.
 */
import { create } from '@bufbuild/protobuf';
import { MissionStatusSchema, type MissionStatus } from '../../gen/fleetgw/v1/robot_link_pb.js';
import type { VdaState } from './messages.js';
import { MISSION_ORDER_PREFIX, type MissionOrder } from './outbound.js';

/** How often a running mission's status is reported even without a change. */
export const MISSION_REPORT_EVERY_MS = 5_000;

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'aborted']);

/** The progress of one mission order on one robot. */
export class MissionProgress {
  /**
   * Node count including the start node: from the order (the one sent, or after a gateway restart the
   * one rebuilt from the run's MissionStart), else estimated from the nodes left in the first state.
   */
  private nodes: number;
  private lastKey = '';
  private lastAtMs = 0;
  /** cancelOrder actions the robot already showed when the run was first seen (not this run's end). */
  private readonly earlierCancels: Set<string> | null;
  private finished = false;

  constructor(readonly orderId: string, readonly order: MissionOrder | null, first: VdaState) {
    this.nodes = order?.stepOfNode.length ?? first.nodeStates.length + 1;
    this.earlierCancels = new Set(first.actionStates.filter((a) => a.actionType === 'cancelOrder').map((a) => a.actionId));
  }

  /** The run id of a mission order id, or null when the order is not a mission run's. */
  static runIdOf(orderId: string): string | null {
    return orderId.startsWith(MISSION_ORDER_PREFIX) ? orderId.slice(MISSION_ORDER_PREFIX.length) : null;
  }

  get runId(): string {
    return this.order?.runId ?? this.orderId.slice(MISSION_ORDER_PREFIX.length);
  }

  /** True once a terminal state was reported. */
  get done(): boolean {
    return this.finished;
  }

  /** The run's status in this state. */
  statusOf(state: VdaState, nowMs: number): MissionStatus {
    const remaining = state.orderId === this.orderId ? state.nodeStates.length : 0;
    this.nodes = Math.max(this.nodes, remaining + 1);
    const traversed = this.nodes - 1 - remaining;
    const legs = Math.max(1, this.nodes - 1);
    const stepIndex = this.order?.stepOfNode[traversed] ?? Math.max(0, traversed - 1);
    const ownActions = state.actionStates.filter((a) => a.actionId.includes(':') && !this.earlierCancels?.has(a.actionId) && a.actionType !== 'cancelOrder');
    const failedAction = ownActions.find((a) => a.actionStatus === 'FAILED');
    const fatal = state.errors.find((e) => e.errorLevel === 'FATAL');
    const cancelled = state.actionStates.some((a) => a.actionType === 'cancelOrder' && a.actionStatus === 'FINISHED' && !this.earlierCancels?.has(a.actionId));
    let st: string;
    let detail = '';
    if (state.orderId !== this.orderId || cancelled) st = 'cancelled';
    else if (failedAction) {
      st = 'failed';
      detail = `${failedAction.actionType}: ${failedAction.resultDescription || 'FAILED'}`;
    } else if (fatal) {
      st = 'failed';
      detail = `${fatal.errorType}: ${fatal.errorDescription}`;
    } else if (state.paused) st = 'paused';
    else if (remaining === 0 && !state.driving && !ownActions.some((a) => a.actionStatus !== 'FINISHED')) st = 'completed';
    else st = 'running';
    return create(MissionStatusSchema, {
      runId: this.runId,
      missionId: this.order?.missionId ?? '',
      state: st,
      progressPct: st === 'completed' ? 100 : (100 * Math.max(0, traversed)) / legs,
      stepIndex: Math.max(0, stepIndex),
      detail: detail.slice(0, 256),
      tsMs: BigInt(Math.trunc(state.timestampMs || nowMs)),
    });
  }

  /** The status to report now, or null when nothing changed and none is due. */
  report(state: VdaState, nowMs: number): MissionStatus | null {
    if (this.finished) return null;
    const status = this.statusOf(state, nowMs);
    const key = `${status.state}|${status.stepIndex}|${Math.round(status.progressPct)}|${status.detail}`;
    if (key === this.lastKey && nowMs - this.lastAtMs < MISSION_REPORT_EVERY_MS) return null;
    this.lastKey = key;
    this.lastAtMs = nowMs;
    if (TERMINAL.has(status.state)) this.finished = true;
    return status;
  }
}
