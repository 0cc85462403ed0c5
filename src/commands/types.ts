/**
 * Robot command records: what the outbox keeps in LMDB (`commands` db) and what the API reports as
 * the spec's delivery object. Plain msgpack-safe objects only (lmdb-js encodes them).
 */

/** Actions the gateway can put on a robot's stream today (one `Command.action` case each). */
export type CommandAction = 'stop';

/** Arguments of each action; digested into the audit entry, copied onto the wire message. */
export interface CommandArgsByAction {
  stop: { reason: string };
}

export type CommandArgs = CommandArgsByAction[CommandAction];

/**
 * Actions that jump ahead of everything else queued for a robot (spec: stop and pause must not wait
 * behind a backlog). `pause` joins when it exists on the wire.
 */
export const URGENT_ACTIONS: ReadonlySet<CommandAction> = new Set<CommandAction>(['stop']);

/**
 * States a record can be in. `timed_out` is not among them: the spec makes it an observation of one
 * HTTP wait ("not proof of failure"), so it is reported by {@link Delivery} but never stored.
 */
export type StoredDeliveryState = 'deferred' | 'dispatched' | 'agent_received' | 'agent_rejected';

/** The spec's delivery states (Delivery object, `state`). */
export type DeliveryState = StoredDeliveryState | 'timed_out';

/** Robot-acknowledged states: the command left the gateway's responsibility. */
export function isAcknowledged(state: DeliveryState): state is 'agent_received' | 'agent_rejected' {
  return state === 'agent_received' || state === 'agent_rejected';
}

export interface HistoryEntry {
  state: StoredDeliveryState;
  atMs: number;
}

export interface CommandRecord {
  /** UUID; the agent applies each id at most once, so resends are safe. */
  commandId: string;
  robotId: string;
  fleetId: string;
  orgId: string;
  action: CommandAction;
  args: CommandArgs;
  /** Per-robot creation order, 1-based; also the outbox key suffix. */
  seq: number;
  requestedBy: { apiKeyId: string };
  createdAtMs: number;
  state: StoredDeliveryState;
  /** The agent's reason, set with `agent_rejected`. */
  rejectReason: string | null;
  /** Every state change with its time; at most three entries (deferred, dispatched, ack). */
  history: HistoryEntry[];
  /** Times the command was written to the robot's stream (first send included). */
  attempts: number;
  lastSentAtMs: number | null;
  /** True once background resends stopped without an ack; the command then leaves the outbox. */
  retryBudgetExhausted: boolean;
}

/** The spec's Delivery object as the API returns it. */
export interface Delivery {
  state: DeliveryState;
  commandId: string;
  retryBudgetExhausted: boolean;
  /** Present with `agent_rejected`: why the agent refused. */
  rejectReason?: string;
}

/** The delivery view of a record, or of an HTTP wait that elapsed (`timedOut`). */
export function deliveryOf(rec: CommandRecord, timedOut = false): Delivery {
  const d: Delivery = {
    state: timedOut ? 'timed_out' : rec.state,
    commandId: rec.commandId,
    retryBudgetExhausted: rec.retryBudgetExhausted,
  };
  if (!timedOut && rec.state === 'agent_rejected') d.rejectReason = rec.rejectReason ?? '';
  return d;
}
