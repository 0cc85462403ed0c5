/**
 * The command service's request and result shapes (service.ts is the service itself).
 */
import type { Logger } from 'pino';
import type { Store } from '../store/lmdb.js';
import type { RobotLink } from '../protocol/robot-link.js';
import type { AuditRetention } from './audit.js';
import type { OutboxLimits } from './outbox.js';
import type { RetryPolicy } from './retry.js';
import type { CommandAction, CommandArgsByAction, CommandRecord, Delivery, StoredDeliveryState } from './types.js';

export interface CommandServiceOptions {
  store: Store;
  link: RobotLink;
  /** Wall clock in ms (tests pass their own). */
  now?: () => number;
  retry?: Partial<RetryPolicy>;
  outbox?: Partial<OutboxLimits>;
  /** Bound on concurrent ack waits (see waiters.ts). */
  maxWaiters?: number;
  audit?: Partial<AuditRetention>;
  /** Operator log (robot policies the gateway refused in part). */
  log?: Logger;
  /** Told of every delivery state change and robot ack (the gateway's metrics); must not throw. */
  observer?: CommandObserver;
  /** Told when a command's retry budget runs out, and when such a command is acknowledged after all (alerts); must not throw. */
  exhaustion?: CommandExhaustionObserver;
}

/** The facts of a command whose retry budget ran out. */
export interface ExhaustedCommand {
  commandId: string;
  robotId: string;
  fleetId: string;
  orgId: string;
  action: CommandAction;
  attempts: number;
  createdAtMs: number;
  lastSentAtMs: number | null;
}

/**
 * Commands whose retry budget ran out (docs/commands.md): they left the outbox and are never sent
 * again, so a person should look. A later ack (the robot got it after all) is reported too.
 */
export interface CommandExhaustionObserver {
  retryBudgetExhausted(cmd: ExhaustedCommand): void;
  acknowledgedAfterExhaustion(cmd: ExhaustedCommand, state: 'agent_received' | 'agent_rejected'): void;
}

/** What the command service reports as it goes (counts only: no ids). */
export interface CommandObserver {
  /** A command entered a delivery state. */
  state(action: CommandAction, state: StoredDeliveryState): void;
  /** The robot itself acknowledged a command `latencyMs` after the command was first sent. */
  acked(outcome: 'received' | 'rejected', latencyMs: number): void;
}

/**
 * One command to submit. `action` and `args` go together as in {@link CommandArgsByAction}; any
 * action kind goes through the same path (policy check, outbox, delivery states, audit).
 */
export interface SubmitRequest<A extends CommandAction = CommandAction> {
  robotId: string;
  fleetId: string;
  orgId: string;
  action: A;
  args: CommandArgsByAction[A];
  requestedBy: { apiKeyId: string };
  /**
   * The caller waits for the ack before answering (and then, like every caller, for the commit of
   * the command's first write). A command sent at once may then have that write held up to LAZY_MS
   * (write-behind.ts), until the ack wait ends, so that an ack arriving meanwhile is stored in the
   * same write: one record write instead of two, and no outbox entry to add and remove. Not for
   * commands answered without an ack wait.
   */
  awaitingAck?: boolean;
}

export interface Submitted {
  commandId: string;
  /** `dispatched` or `deferred` at the moment of submission. */
  delivery: Delivery;
  /**
   * Settles when the command's record, outbox entry and audit keys are committed to LMDB; rejects
   * when the write failed. Every answer about the command waits for it, an ack-based one too (the
   * service's durability point: service.ts).
   */
  persisted: Promise<void>;
}

/** How a wait for a request/response command's result ended. */
export interface ResultWait {
  /** A copy of the record at the end of the wait (`result` set when the robot reported). */
  record: CommandRecord;
  /** True when the wait elapsed (or was aborted) before the robot reported or rejected. */
  timedOut: boolean;
}

export interface CommandServiceStats {
  pending: number;
  waiters: number;
  writeErrors: number;
  /** Acks or results naming a command that belongs to another robot, or to no known command (ignored). */
  foreignAcks: number;
  /** Distinct command policies compiled since start. */
  policiesCompiled: number;
}
