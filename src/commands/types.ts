/**
 * Robot command records: what the outbox keeps in LMDB (`commands` db) and what the API reports as
 * the spec's delivery object. Plain msgpack-safe objects only (lmdb-js encodes them).
 */
import type { CommandAction, CommandArgsByAction } from './catalog/index.js';
import type { JsonObject } from './json.js';
import type { StoredRequester } from './requester.js';

export type { JsonObject, JsonValue } from './json.js';
export {
  COMMAND_ACTIONS,
  expectsResult,
  isDeferrable,
  isUrgent,
  type CommandAction,
  type CommandArgsByAction,
  type MissionControlVerb,
} from './catalog/index.js';

/** Arguments of any action. */
export type CommandArgs = CommandArgsByAction[CommandAction];

/** A command as submitted: the action and its arguments, typed together. */
export type ActionAndArgs = { [A in CommandAction]: { action: A; args: CommandArgsByAction[A] } }[CommandAction];

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

/** What a robot reported for a request/response command (CommandResult). */
export interface CommandResultRecord {
  success: boolean;
  /** Machine-readable reason when `success` is false (the robot's), '' otherwise. */
  error: string;
  /** The configuration or settings as the robot now has them; null when it sent none or not JSON. */
  payload: JsonObject | null;
  atMs: number;
}

/**
 * Where an acknowledged state came from: `agent`, the agent's CommandAck (or CommandResult);
 * `hello`, inferred when the robot reconnected and reported a higher last applied seq while no ack
 * had been recorded (applied-seq.ts).
 */
export type AckSource = 'agent' | 'hello';

export interface CommandRecord {
  /** UUID; the agent applies each id at most once, so resends are safe. */
  commandId: string;
  robotId: string;
  fleetId: string;
  orgId: string;
  action: CommandAction;
  args: CommandArgs;
  /** SHA-256 (hex) of the canonical JSON of `args` (audit). */
  argsDigest: string;
  /** Per-robot creation order, 1-based; also the outbox key suffix and the wire seq. */
  seq: number;
  /** Records of earlier versions hold the legacy shape: read it with `requesterOnRead`. */
  requestedBy: StoredRequester;
  createdAtMs: number;
  state: StoredDeliveryState;
  /** The agent's reason, set with `agent_rejected`. */
  rejectReason: string | null;
  /** Set with the acknowledged state (absent before; records of older versions lack it: `agent`). */
  ackSource?: AckSource;
  /** Every state change with its time; at most three entries (deferred, dispatched, ack). */
  history: HistoryEntry[];
  /** Times the command was written to the robot's stream (first send included). */
  attempts: number;
  lastSentAtMs: number | null;
  /** True once background resends stopped without an ack; the command then leaves the outbox. */
  retryBudgetExhausted: boolean;
  /** Request/response commands: the robot's report, once it arrived. */
  result: CommandResultRecord | null;
  /**
   * Set once the command was written to the robot's stream while the robot had a link conflict (two
   * processes with its credentials): whatever the robot acked came from one of them, which may not be
   * the intended machine (docs/robot-link.md, "Link conflicts"). Absent otherwise.
   */
  linkConflict?: true;
}

/** The spec's Delivery object as the API returns it. */
export interface Delivery {
  state: DeliveryState;
  commandId: string;
  retryBudgetExhausted: boolean;
  /** Present with `agent_rejected`: why the agent refused. */
  rejectReason?: string;
  /** Present (true) when the command was sent during a link conflict: see CommandRecord.linkConflict. */
  linkConflict?: true;
}

/** The delivery view of a record, or of an HTTP wait that elapsed (`timedOut`). */
export function deliveryOf(rec: CommandRecord, timedOut = false): Delivery {
  const d: Delivery = {
    state: timedOut ? 'timed_out' : rec.state,
    commandId: rec.commandId,
    retryBudgetExhausted: rec.retryBudgetExhausted,
  };
  if (!timedOut && rec.state === 'agent_rejected') d.rejectReason = rec.rejectReason ?? '';
  if (rec.linkConflict === true) d.linkConflict = true;
  return d;
}
