/**
 * The command service: turns a request into a persisted command, puts it on the robot's stream or
 * keeps it for later, follows acknowledgements, resends what was not acknowledged, and lets HTTP
 * requests wait for the outcome.
 *
 * Delivery guarantee: at-least-once delivery (outbox + resends) with at-most-once application (the
 * agent applies each commandId once and acks duplicates again).
 *
 * Durability point: a new command's record, outbox entry and seq counter are queued as one LMDB
 * transaction, and the command is written to the robot's stream in the same event turn, without
 * waiting for the commit. The HTTP answer is held until the command is safe: either the agent
 * acknowledged it (it is the robot's now) or the transaction committed (the gateway will deliver it,
 * also after a crash). Measured on this 2-core machine (gateway + agent in one process, gRPC on
 * loopback): stop + ack wait p50 0.15-0.21 ms / p99 0.34 ms this way, against p50 0.57-0.67 ms /
 * p99 1.1 ms when the commit is also awaited, so "persisted before sent" (commit, then send, then
 * ack, in series) cannot meet the 0.5 ms p50 target. The cost: if the gateway process dies between
 * the send and the commit, the robot may act on a command the gateway has no record (or audit entry)
 * of, and the caller, who got no answer, retries it. For a stop that is a harmless second halt;
 * non-idempotent actions (next issue) must be weighed against this before they reuse the path.
 * "Committed" is lmdb-js's commit (visible, survives a process crash); with its default overlapping
 * sync the flush to the disk follows within milliseconds (an OS crash in that window loses it).
 */
import { randomUUID } from 'node:crypto';
import { CommandAck_Status, type CommandAck } from '../gen/fleetgw/v1/robot_link_pb.js';
import type { RobotLink } from '../robotlink/types.js';
import type { Store } from '../store/lmdb.js';
import { CommandOutbox, DEFAULT_OUTBOX_LIMITS, type OutboxLimits } from './outbox.js';
import { DEFAULT_RETRY_POLICY, retryDecision, type RetryPolicy } from './retry.js';
import {
  deliveryOf,
  isAcknowledged,
  URGENT_ACTIONS,
  type CommandAction,
  type CommandArgsByAction,
  type CommandRecord,
  type Delivery,
  type StoredDeliveryState,
} from './types.js';
import { AckWaiters, DEFAULT_MAX_WAITERS } from './waiters.js';
import { toWire } from './wire.js';

export interface CommandServiceOptions {
  store: Store;
  link: RobotLink;
  /** Wall clock in ms (tests pass their own). */
  now?: () => number;
  retry?: Partial<RetryPolicy>;
  outbox?: Partial<OutboxLimits>;
  /** Bound on concurrent ack waits (see waiters.ts). */
  maxWaiters?: number;
}

export interface SubmitRequest<A extends CommandAction = CommandAction> {
  robotId: string;
  fleetId: string;
  orgId: string;
  action: A;
  args: CommandArgsByAction[A];
  requestedBy: { apiKeyId: string };
}

export interface Submitted {
  commandId: string;
  /** `dispatched` or `deferred` at the moment of submission. */
  delivery: Delivery;
  /**
   * Settles when the command is committed to LMDB; rejects when the write failed. Callers answer
   * HTTP only after it (unless the robot already acknowledged).
   */
  persisted: Promise<void>;
}

export interface CommandServiceStats {
  pending: number;
  waiters: number;
  writeErrors: number;
  /** Acks naming a command that belongs to another robot, or to no known command (ignored). */
  foreignAcks: number;
}

export class CommandService {
  private readonly store: Store;
  private readonly link: RobotLink;
  private readonly now: () => number;
  private readonly policy: RetryPolicy;
  private readonly outbox: CommandOutbox;
  private readonly waiters: AckWaiters;
  private readonly unlisten: () => void;
  private readonly timer: NodeJS.Timeout;
  private foreignAcks = 0;
  private closed = false;

  /** Loads the persisted backlog, subscribes to the link and delivers to robots already online. */
  constructor(opts: CommandServiceOptions) {
    this.store = opts.store;
    this.link = opts.link;
    this.now = opts.now ?? ((): number => Date.now());
    this.policy = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
    this.outbox = new CommandOutbox(this.store, { ...DEFAULT_OUTBOX_LIMITS, ...opts.outbox });
    this.waiters = new AckWaiters(opts.maxWaiters ?? DEFAULT_MAX_WAITERS);
    this.outbox.load();
    this.unlisten = this.link.listen({
      onOnline: (robotId, info) => this.onOnline(robotId, info.lastAppliedSeq),
      onAck: (robotId, ack) => this.onAck(robotId, ack),
    });
    for (const robotId of [...this.outbox.robotsWithPending()]) {
      if (this.link.isOnline(robotId)) this.flush(robotId);
    }
    this.timer = setInterval(() => this.retryTick(), this.policy.tickMs);
    this.timer.unref();
  }

  /**
   * Persists a command and sends it now if the robot is connected (`dispatched`), otherwise keeps it
   * for the robot's reconnect (`deferred`).
   * @throws ApiError `outbox_full` when the robot's backlog is at its bound (nothing stored or sent).
   */
  submit<A extends CommandAction>(req: SubmitRequest<A>): Submitted {
    if (this.closed) throw new Error('command service is closed');
    const at = this.now();
    const fields = {
      commandId: randomUUID(),
      robotId: req.robotId,
      fleetId: req.fleetId,
      orgId: req.orgId,
      action: req.action,
      args: req.args,
      requestedBy: { apiKeyId: req.requestedBy.apiKeyId },
      createdAtMs: at,
      state: 'deferred' as const,
      rejectReason: null,
      history: [],
      attempts: 0,
      lastSentAtMs: null,
      retryBudgetExhausted: false,
    };
    const { record, persisted } = this.outbox.add(fields, (rec) => {
      // Sent before the write commits: see the durability note at the top.
      if (!(this.link.isOnline(rec.robotId) && this.sendNow(rec, at))) rec.history.push({ state: 'deferred', atMs: at });
    });
    return { commandId: record.commandId, delivery: deliveryOf(record), persisted };
  }

  /**
   * Waits up to `ms` for the robot's ack. Resolves with `agent_received` / `agent_rejected`, or
   * `timed_out` when the time elapses or `signal` aborts (the command itself carries on), or
   * `deferred` when the robot stayed offline for the whole wait.
   * @throws ApiError `ack_waiters_full` at the waiter bound; Error for an unknown commandId.
   */
  waitForAck(commandId: string, ms: number, signal?: AbortSignal): Promise<Delivery> {
    const rec = this.outbox.get(commandId);
    if (!rec) throw new Error(`unknown command ${commandId}`);
    if (isAcknowledged(rec.state)) return Promise.resolve(deliveryOf(rec));
    return this.waiters.add(commandId, ms, signal, () => {
      const now = this.outbox.get(commandId) ?? rec;
      // A command still waiting for an offline robot is reported as `deferred` (kept, sent on
      // reconnect): that tells the caller more than `timed_out`, which is for a sent, unanswered one.
      return isAcknowledged(now.state) || now.state === 'deferred' ? deliveryOf(now) : deliveryOf(now, true);
    });
  }

  /** Free waiter slots; the route refuses a request that needs more before dispatching anything. */
  waiterRoom(): number {
    return this.waiters.room();
  }

  /** A copy of the command's record (live or from LMDB), or undefined. */
  get(commandId: string): CommandRecord | undefined {
    const rec = this.outbox.get(commandId);
    return rec ? structuredClone(rec) : undefined;
  }

  stats(): CommandServiceStats {
    return {
      pending: this.outbox.pendingCount,
      waiters: this.waiters.size,
      writeErrors: this.outbox.writeErrors,
      foreignAcks: this.foreignAcks,
    };
  }

  /** Stops resends and link handling, ends open waits as `timed_out`, and waits for LMDB writes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    this.unlisten();
    this.waiters.expireAll();
    await this.outbox.drain();
  }

  /** Writes one record to the stream; false when the robot is not connected. */
  private sendNow(rec: CommandRecord, at: number): boolean {
    if (!this.link.send(rec.robotId, toWire(rec))) return false;
    rec.attempts++;
    rec.lastSentAtMs = at;
    if (rec.state === 'deferred') this.transition(rec, 'dispatched', at);
    return true;
  }

  /**
   * A (re)connected robot. Its Hello reports the highest seq its agent applied: that command was
   * received even if the ack was lost with the old stream, so it is settled instead of resent (an
   * agent restarted since would otherwise refuse the resend as stale). The rest of the backlog is
   * resent; an agent that still remembers a command id answers the resend with its earlier decision.
   */
  private onOnline(robotId: string, lastAppliedSeq: bigint | undefined): void {
    if (this.closed) return;
    const applied = lastAppliedSeq !== undefined && lastAppliedSeq <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(lastAppliedSeq) : 0;
    if (applied > 0) {
      this.outbox.raiseSeq(robotId, applied);
      const rec = this.outbox.pendingFor(robotId).find((r) => r.seq === applied);
      if (rec) this.acknowledge(rec, 'agent_received', '');
    }
    this.flush(robotId);
  }

  /**
   * Sends a robot's backlog: urgent actions (stop) first, then the rest, each group in seq order.
   * Already-dispatched commands go again too: their stream is gone, so they may never have arrived.
   */
  private flush(robotId: string): void {
    if (this.closed) return;
    const backlog = this.outbox.pendingFor(robotId);
    const ordered = [
      ...backlog.filter((r) => URGENT_ACTIONS.has(r.action)),
      ...backlog.filter((r) => !URGENT_ACTIONS.has(r.action)),
    ];
    const at = this.now();
    for (const rec of ordered) {
      if (!this.sendNow(rec, at)) return;
      this.outbox.save(rec);
    }
  }

  private onAck(robotId: string, ack: CommandAck): void {
    if (this.closed) return;
    const state: StoredDeliveryState | null =
      ack.status === CommandAck_Status.RECEIVED ? 'agent_received'
        : ack.status === CommandAck_Status.REJECTED ? 'agent_rejected' : null;
    const rec = state ? this.outbox.getForUpdate(ack.commandId) : undefined;
    // A robot may only acknowledge its own commands.
    if (!state || !rec || rec.robotId !== robotId) {
      this.foreignAcks++;
      return;
    }
    if (isAcknowledged(rec.state)) return; // duplicate ack of a resend
    this.acknowledge(rec, state, ack.reason);
  }

  private acknowledge(rec: CommandRecord, state: 'agent_received' | 'agent_rejected', reason: string): void {
    if (state === 'agent_rejected') rec.rejectReason = reason;
    this.transition(rec, state, this.now());
    this.outbox.settle(rec);
    this.waiters.settle(rec.commandId, deliveryOf(rec));
  }

  private retryTick(): void {
    if (this.closed) return;
    const at = this.now();
    for (const robotId of [...this.outbox.robotsWithPending()]) {
      if (!this.link.isOnline(robotId)) continue;
      for (const rec of [...this.outbox.pendingFor(robotId)]) {
        if (rec.lastSentAtMs === null) {
          // Deferred while the robot was online: its flush was cut short by a failed send.
          if (this.sendNow(rec, at)) this.outbox.save(rec);
          continue;
        }
        const decision = retryDecision(this.policy, rec.attempts, rec.lastSentAtMs, at);
        if (decision === 'resend') {
          if (this.sendNow(rec, at)) this.outbox.save(rec);
        } else if (decision === 'exhausted') {
          rec.retryBudgetExhausted = true;
          this.outbox.settle(rec);
        }
      }
    }
  }

  private transition(rec: CommandRecord, state: StoredDeliveryState, at: number): void {
    rec.state = state;
    rec.history.push({ state, atMs: at });
  }
}

/** Creates and starts a {@link CommandService}. */
export function createCommandService(opts: CommandServiceOptions): CommandService {
  return new CommandService(opts);
}
