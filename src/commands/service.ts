/**
 * The command service: turns a request into a persisted command, puts it on the robot's stream or
 * keeps it for later, follows acknowledgements, resends what was not acknowledged, and lets HTTP
 * requests wait for the outcome.
 *
 * Delivery guarantee: at-least-once delivery (outbox + resends) with at-most-once application (the
 * agent applies each commandId once and acks duplicates again).
 *
 * Durability point: a new command's record, outbox entry and audit keys are written to LMDB
 * together, in one transaction, and the command is written to the robot's stream first: the writes
 * are issued at the end of the turn, after the gRPC frames have left (write-behind.ts). No answer
 * about a command leaves before that transaction has committed (`Submitted.persisted`), whatever the
 * answer says: `dispatched`, `deferred`, `timed_out`, and also `agent_received` / `agent_rejected`.
 * An ack proves the robot has the command, not that the gateway will still know of it after a crash;
 * a caller told `agent_received` must find the command and its audit entry after any restart.
 * Waiting for the commit before sending would put a commit (and on these machines a disk flush's
 * worth of CPU) in front of every stop; it stays behind the send, and only the answer waits for it.
 *
 * When the caller waits for the ack (`awaitingAck`), the first write may be held up to LAZY_MS (5 ms)
 * after the turn, so that an ack arriving meanwhile is stored with it: one record write and one
 * commit for many commands instead of two writes and two commits each. When the ack wait ends
 * (ack, rejection or time), a write still held goes out at the end of that turn, and the answer
 * leaves when it has committed: the price is one commit after the ack (well under a ms on an idle disk,
 * several ms on a busy one, where a commit waits for the previous one's flush: bench/README.md#command-latency;
 * bench/notes/command-latency.md, "Every answer waits for the command's commit").
 *
 * What a crash can still do: if the gateway process dies between the send and the commit (a few
 * milliseconds), the robot may act on a command the gateway then has no record or audit entry of,
 * and whose caller got no answer (they retry, with a new commandId). Its seq is not lost with it:
 * seqs are only sent once their reservation has committed (seq-counter.ts), so the next command
 * after a restart never reuses one. For a stop that is a harmless second halt; every other action
 * here is a set-to-value (mode, settings, go-to target, config write) except `invoke_action`, whose
 * advertised actions a robot should make idempotent or guard by time (documented in docs/commands.md).
 * The settled state of an acknowledged command is written lazily (nobody waits for it): lost in a
 * crash, the command is pending again after the restart, and the robot's Hello settles it (below).
 * "Committed" is lmdb-js's commit (visible, survives a process crash); with its default overlapping
 * sync the flush to the disk follows within milliseconds (an OS crash in that window loses it).
 */
import { pino, type Logger } from 'pino';
import { CommandAck_Status, type Command, type CommandAck, type CommandPolicy, type CommandResult } from '../gen/fleetgw/v1/robot_link_pb.js';
import { apiError } from '../errors/catalog.js';
import type { RobotLink } from '../protocol/robot-link.js';
import type { Store } from '../store/lmdb.js';
import { newCommandId } from './command-id.js';
import { settledByHello } from './applied-seq.js';
import { AuditIndex, DEFAULT_AUDIT_RETENTION } from './audit.js';
import { DigestCache } from './digest.js';
import { CommandOutbox, DEFAULT_OUTBOX_LIMITS, type OutboxLimits } from './outbox.js';
import { checkCommand } from './policy-check.js';
import { PolicyRegistry } from './policy-registry.js';
import { RecentSends } from './recent-sends.js';
import { parseResultPayload } from './result.js';
import { DEFAULT_RETRY_POLICY, retryDecision, type RetryPolicy } from './retry.js';
import {
  deliveryOf,
  expectsResult,
  isAcknowledged,
  isDeferrable,
  isUrgent,
  type AckSource,
  type ActionAndArgs,
  type CommandAction,
  type CommandRecord,
  type Delivery,
  type StoredDeliveryState,
} from './types.js';
import type { CommandExhaustionObserver, CommandObserver, CommandServiceOptions, ExhaustedCommand, CommandServiceStats, ResultWait, SubmitRequest, Submitted } from './service-types.js';
import { AckWaiters, DEFAULT_MAX_WAITERS, Waiters } from './waiters.js';
import { toWire } from './wire.js';
import { allRobotIds, cachedRobot } from '../store/identity-reads.js';

const SWEEP_INTERVAL_MS = 3600_000;
/**
 * Non-deferrable commands (start, motion, configuration) still unacknowledged this long after they were
 * created are not resent on reconnect: 30 s is the longest ack wait a caller can ask for.
 */
export const STALE_AFTER_MS = 30_000;
const FIRST_SWEEP_MS = 60_000;
/** Bound on concurrent result waits (config / onboard settings). */
const MAX_RESULT_WAITERS = 1000;
/** Sends remembered per robot for flagging after a link conflict (recent-sends.ts): the conflict window and a count bound. */
const RECENT_SENDS_MS = 30_000;
const RECENT_SENDS_PER_ROBOT = 256;

export type { CommandExhaustionObserver, CommandObserver, CommandServiceOptions, ExhaustedCommand, CommandServiceStats, ResultWait, SubmitRequest, Submitted } from './service-types.js';

export class CommandService {
  private readonly store: Store;
  private readonly link: RobotLink;
  private readonly now: () => number;
  private readonly policy: RetryPolicy;
  private readonly outbox: CommandOutbox;
  private readonly outboxLimits: OutboxLimits;
  private readonly waiters: AckWaiters;
  private readonly resultWaiters = new Waiters<ResultWait>(MAX_RESULT_WAITERS);
  /** What each robot advertised in its latest Hello. */
  readonly policies: PolicyRegistry;
  readonly audit: AuditIndex;
  private readonly unlisten: () => void;
  private readonly timer: NodeJS.Timeout;
  private sweepTimer: NodeJS.Timeout;
  private sweeping: Promise<unknown> = Promise.resolve();
  private foreignAcks = 0;
  private readonly digests = new DigestCache();
  /**
   * Each record's wire message, built once: a resend or reconnect flush sends the same commandId,
   * seq and args, so there is nothing to rebuild. Dropped with the record.
   */
  private readonly wire = new WeakMap<CommandRecord, Command>();
  private readonly recentSends = new RecentSends(RECENT_SENDS_MS, RECENT_SENDS_PER_ROBOT);
  private closed = false;
  /** Robots whose fleet is changing (src/fleet/robots/admin): every new command for them is refused. */
  private readonly held = new Map<string, number>();
  /** What each robot's link cannot carry (from its latest onOnline), refused as `policy_rejected`. */
  private readonly unsupported = new Map<string, Readonly<Record<string, string>>>();
  private readonly observer: CommandObserver | undefined;
  private readonly exhaustion: CommandExhaustionObserver | undefined;
  private readonly log: Logger;

  /** Loads the persisted backlog, subscribes to the link and delivers to robots already online. */
  constructor(opts: CommandServiceOptions) {
    this.store = opts.store;
    this.link = opts.link;
    this.now = opts.now ?? ((): number => Date.now());
    this.observer = opts.observer;
    this.exhaustion = opts.exhaustion;
    this.log = opts.log ?? pino({ enabled: false });
    this.policies = new PolicyRegistry(this.log);
    this.policy = { ...DEFAULT_RETRY_POLICY, ...opts.retry };
    this.outboxLimits = { ...DEFAULT_OUTBOX_LIMITS, ...opts.outbox };
    this.outbox = new CommandOutbox(this.store, this.outboxLimits);
    this.waiters = new AckWaiters(opts.maxWaiters ?? DEFAULT_MAX_WAITERS);
    this.audit = new AuditIndex(this.store, { ...DEFAULT_AUDIT_RETENTION, ...opts.audit });
    this.outbox.load();
    this.unlisten = this.link.listen({
      onOnline: (robotId, info) => {
        if (info.unsupported === undefined) this.unsupported.delete(robotId);
        else this.unsupported.set(robotId, info.unsupported);
        this.onOnline(robotId, info.lastAppliedSeq, info.policy);
      },
      onAck: (robotId, ack) => this.onAck(robotId, ack),
      onCommandResult: (robotId, result) => this.onCommandResult(robotId, result),
      onLinkConflict: (robotId, report) => this.flagSentDuringConflict(robotId, report.suspectSinceMs),
    });
    for (const robotId of [...this.outbox.robotsWithPending()]) {
      if (this.link.isOnline(robotId)) this.flush(robotId);
    }
    // Seq reservations ahead for every registered robot (one write), so that the first command to a
    // robot after a start, even a stop_all to robots that are offline, does not commit one itself.
    for (const robotId of allRobotIds(this.store)) this.outbox.prepareSeq(robotId);
    this.timer = setInterval(() => this.retryTick(), this.policy.tickMs);
    this.timer.unref();
    this.sweepTimer = setTimeout(() => this.sweep(), FIRST_SWEEP_MS);
    this.sweepTimer.unref();
  }

  /**
   * Checks a command against the robot's state and advertised policy, persists it, and sends it now
   * if the robot is connected (`dispatched`); a stop / pause / cancel / abort for an offline robot is
   * kept for its reconnect (`deferred`).
   * @throws ApiError `robot_not_found` (no such robot in `fleetId`), `robot_offline` (offline and
   *   the action is not kept for later), `robot_inactive`, `policy_rejected`,
   *   `remote_config_not_enabled`, `outbox_full`. Nothing is stored or sent when it throws.
   */
  submit<A extends CommandAction>(req: SubmitRequest<A>): Submitted {
    return this.submitAs(req, null);
  }

  /**
   * {@link submit} under a caller-chosen, deterministic `commandId`, exactly once: when a command with
   * that id already exists (live or committed, e.g. submitted before a crash whose caller never
   * recorded it), nothing new is created or sent and that command is returned; its delivery goes on
   * as for any command (outbox, resends with the same id, which the agent applies once). For
   * callers that resume work after a restart (scheduled fires). The id must be a UUID unique to
   * that one command (robot and occurrence).
   * @throws as {@link submit} (only when no such command exists)
   */
  submitOnce<A extends CommandAction>(commandId: string, req: SubmitRequest<A>): Submitted {
    const existing = this.outbox.get(commandId);
    if (existing) return { commandId, delivery: deliveryOf(existing), persisted: this.outbox.storedOf(existing) };
    return this.submitAs(req, commandId);
  }

  private submitAs<A extends CommandAction>(req: SubmitRequest<A>, chosenId: string | null): Submitted {
    if (this.closed) throw apiError('shutting_down');
    const robotId = req.robotId;
    if (this.held.has(robotId)) throw apiError('robot_transferring', { robotId });
    const robot = cachedRobot(this.store, robotId);
    if (!robot || robot.fleetId !== req.fleetId) throw apiError('robot_not_found', { robotId });
    const c = { action: req.action, args: req.args } as ActionAndArgs;
    const deferrable = isDeferrable(c);
    if (!deferrable && !this.link.isOnline(robotId)) throw apiError('robot_offline', { robotId, action: req.action });
    // Two processes share this robot's credentials: anything but bringing it to rest could move the wrong machine.
    if (!deferrable && this.link.linkConflict(robotId)) throw apiError('robot_link_conflict', { robotId, action: req.action });
    const unsupported = this.unsupported.get(robotId)?.[c.action];
    if (unsupported !== undefined) throw apiError('policy_rejected', { robotId, reason: unsupported });
    checkCommand(robot, this.policies.get(robotId), c);
    const at = this.now();
    const folded = isUrgent(c) ? this.foldUrgent(robotId, c, at) : null;
    if (folded !== null) return folded;
    const fields = {
      commandId: chosenId ?? newCommandId(at),
      robotId,
      fleetId: req.fleetId,
      orgId: req.orgId,
      action: c.action,
      args: c.args,
      argsDigest: this.digests.of(c.args),
      requestedBy: { ...req.requestedBy },
      createdAtMs: at,
      state: 'deferred' as const,
      rejectReason: null,
      history: [],
      attempts: 0,
      lastSentAtMs: null,
      retryBudgetExhausted: false,
      result: null,
    };
    let sent = false;
    const { record, persisted } = this.outbox.add(
      fields,
      (rec) => {
        // Sent before the write commits: see the durability note at the top.
        if (this.link.isOnline(robotId) && this.sendNow(rec, at)) {
          sent = true;
          return;
        }
        if (!deferrable) throw apiError('robot_offline', { robotId, action: req.action });
        rec.history.push({ state: 'deferred', atMs: at });
        this.observer?.state(rec.action, 'deferred');
      },
      (rec) => this.audit.index(rec),
      // A deferred command is answered on its commit: that write is never held.
      () => sent && req.awaitingAck === true,
    );
    return { commandId: record.commandId, delivery: deliveryOf(record), persisted };
  }

  /**
   * Past `maxUrgentPerRobot` pending urgent commands for one robot (e.g. repeated stop_all while it
   * is offline), a new one of the same kind is folded into the newest pending one instead of growing
   * the backlog: that command is (re)sent now if the robot is online and its delivery is returned.
   * Stopping twice adds nothing; the bound keeps the outbox finite. Returns null when not folded.
   */
  private foldUrgent(robotId: string, c: ActionAndArgs, at: number): Submitted | null {
    const urgent = this.outbox.pendingFor(robotId).filter((r) => isUrgent(r));
    if (urgent.length < this.outboxLimits.maxUrgentPerRobot) return null;
    const same = [...urgent].reverse().find((r) => r.action === c.action && JSON.stringify(r.args) === JSON.stringify(c.args))
      ?? [...urgent].reverse().find((r) => r.action === c.action);
    if (same === undefined) return null;
    if (this.link.isOnline(robotId) && this.sendNow(same, at)) this.outbox.save(same);
    // The command folded into may itself still be on its way to LMDB: the answer waits for it.
    return { commandId: same.commandId, delivery: deliveryOf(same), persisted: this.outbox.storedOf(same) };
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
    if (isAcknowledged(rec.state)) {
      this.outbox.hurry(rec);
      return Promise.resolve(deliveryOf(rec));
    }
    // The answer waits for the command's first write next (`Submitted.persisted`): no more holding it.
    return this.waiters.add(commandId, ms, signal, () => this.expiredDelivery(commandId, rec), () => this.outbox.release([rec]));
  }

  /** What a wait that ended without an ack reports. */
  private expiredDelivery(commandId: string, fallback?: CommandRecord): Delivery {
    const now = this.outbox.get(commandId) ?? fallback;
    if (!now) throw new Error(`unknown command ${commandId}`);
    // A command still waiting for an offline robot is reported as `deferred` (kept, sent on
    // reconnect): that tells the caller more than `timed_out`, which is for a sent, unanswered one.
    return isAcknowledged(now.state) || now.state === 'deferred' ? deliveryOf(now) : deliveryOf(now, true);
  }

  /**
   * {@link waitForAck} for many commands at once (one bulk request): one timer and one abort
   * listener for the whole group; the answers come in the order of `commandIds`.
   * @throws ApiError `ack_waiters_full` when the waits do not fit; Error for an unknown commandId.
   */
  waitForAcks(commandIds: readonly string[], ms: number, signal?: AbortSignal): Promise<Delivery[]> {
    const answers = new Array<Delivery | undefined>(commandIds.length);
    const records: CommandRecord[] = [];
    const open: string[] = [];
    const openAt: number[] = [];
    commandIds.forEach((commandId, i) => {
      const rec = this.outbox.get(commandId);
      if (!rec) throw new Error(`unknown command ${commandId}`);
      records.push(rec);
      if (isAcknowledged(rec.state)) answers[i] = deliveryOf(rec);
      else {
        open.push(commandId);
        openAt.push(i);
      }
    });
    // Held first writes go out once the whole group is answered (not at its first ack), so the
    // acks that arrive meanwhile are still stored with them; in the turn of the last ack.
    if (open.length === 0) {
      for (const rec of records) this.outbox.hurry(rec);
      return Promise.resolve(answers as Delivery[]);
    }
    return this.waiters.addMany(open, ms, signal, (commandId) => this.expiredDelivery(commandId), () => this.outbox.release(records)).then((got) => {
      got.forEach((d, j) => {
        answers[openAt[j] as number] = d;
      });
      return answers as Delivery[];
    });
  }

  /**
   * Waits up to `ms` for the result of a request/response command (config, onboard settings): ends
   * when the robot reports it, when the agent rejects the command, or when the time elapses (the
   * command carries on; a later result is still recorded and readable by commandId).
   * @throws ApiError `ack_waiters_full` at the waiter bound; Error for an unknown commandId.
   */
  waitForResult(commandId: string, ms: number, signal?: AbortSignal): Promise<ResultWait> {
    const rec = this.outbox.get(commandId);
    if (!rec) throw new Error(`unknown command ${commandId}`);
    if (rec.result || rec.state === 'agent_rejected') return Promise.resolve({ record: structuredClone(rec), timedOut: false });
    return this.resultWaiters.add(commandId, ms, signal, () => ({ record: structuredClone(this.outbox.get(commandId) ?? rec), timedOut: true }));
  }

  /**
   * Reserves seq numbers for a bulk request's targets in one LMDB commit when any lack a committed
   * reservation (seq-counter.ts); best effort, called before the first submit.
   */
  prepareTargets(robotIds: readonly string[]): void {
    if (!this.closed) this.outbox.ensureSeqs(robotIds);
  }

  /**
   * Refuses every new command for the robot until the returned release is called: a robot moving to
   * another fleet takes no command while its fleet of record changes, so none can be accepted for the
   * old fleet and reach it afterwards (docs/robot-admin.md). Holds nest.
   */
  hold(robotId: string): () => void {
    this.held.set(robotId, (this.held.get(robotId) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.held.get(robotId) ?? 1) - 1;
      if (n <= 0) this.held.delete(robotId);
      else this.held.set(robotId, n);
    };
  }

  /** Commands for the robot not yet acknowledged by it (deferred or sent and awaiting the ack). */
  undeliveredCount(robotId: string): number {
    return this.outbox.pendingFor(robotId).length;
  }

  /** Free waiter slots; the route refuses a request that needs more before dispatching anything. */
  waiterRoom(): number {
    return this.waiters.room();
  }

  /** Free result-waiter slots (request/response commands), checked the same way. */
  resultWaiterRoom(): number {
    return this.resultWaiters.room();
  }

  /** A copy of the command's record (live or from LMDB), or undefined. */
  get(commandId: string): CommandRecord | undefined {
    const rec = this.outbox.get(commandId);
    return rec ? structuredClone(rec) : undefined;
  }

  stats(): CommandServiceStats {
    return {
      pending: this.outbox.pendingCount,
      waiters: this.waiters.size + this.resultWaiters.size,
      writeErrors: this.outbox.writeErrors,
      foreignAcks: this.foreignAcks,
      policiesCompiled: this.policies.compiled,
    };
  }

  /** Runs one audit retention sweep now (also runs hourly by itself); resolves with entries removed. */
  sweepAudit(): Promise<number> {
    const run = this.audit.sweep(this.now(), (id) => this.outbox.isPending(id));
    // close() awaits the sweep, never its outcome: the caller of sweepAudit (and the timer) sees that.
    this.sweeping = run.catch(() => undefined);
    return run;
  }

  /** Stops resends and link handling, ends open waits as `timed_out`, and waits for LMDB writes. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    clearTimeout(this.sweepTimer);
    this.policies.close();
    this.unlisten();
    this.waiters.expireAll();
    this.resultWaiters.expireAll();
    await this.sweeping;
    await this.outbox.drain();
  }

  private sweep(): void {
    if (this.closed) return;
    this.sweepAudit().catch((err: unknown) => this.log.error({ err }, 'command audit retention sweep failed; the next sweep tries again'));
    this.sweepTimer = setTimeout(() => this.sweep(), SWEEP_INTERVAL_MS);
    this.sweepTimer.unref();
  }

  /** Writes one record to the stream; false when the robot is not connected. */
  private sendNow(rec: CommandRecord, at: number): boolean {
    let wire = this.wire.get(rec);
    if (!wire) {
      wire = toWire(rec);
      this.wire.set(rec, wire);
    }
    if (!this.link.send(rec.robotId, wire)) return false;
    // Whatever acks it now may be one of two machines: the delivery says so from here on.
    if (this.link.linkConflict(rec.robotId)) rec.linkConflict = true;
    else this.recentSends.note(rec.robotId, rec.commandId, at);
    rec.attempts++;
    rec.lastSentAtMs = at;
    if (rec.state === 'deferred') this.transition(rec, 'dispatched', at);
    return true;
  }

  /**
   * A (re)connected robot. Its Hello carries its command policy (replacing the previous one) and
   * the highest seq its agent applied: every command it has decided at or below that seq is settled
   * instead of resent, even if its ack was lost with the old stream or its settled state with a
   * crashed gateway (which pending commands that covers, and how they are recorded: applied-seq.ts).
   * The rest of the backlog is resent; an agent that still remembers a command id answers the resend
   * with its earlier decision.
   */
  private onOnline(robotId: string, lastAppliedSeq: bigint | undefined, policy: CommandPolicy | undefined): void {
    if (this.closed) return;
    this.policies.set(robotId, policy);
    const applied = lastAppliedSeq !== undefined && lastAppliedSeq <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(lastAppliedSeq) : 0;
    if (applied > 0) {
      this.outbox.raiseSeq(robotId, applied);
      for (const rec of settledByHello(this.outbox.pendingFor(robotId), applied)) this.acknowledge(rec, 'agent_received', '', 'hello');
    }
    this.outbox.prepareSeq(robotId);
    this.flush(robotId);
  }

  /**
   * A link conflict was detected: commands written to the robot's stream since the takeover that
   * began it may have reached either process. Their records (and so their audit entries and
   * `GET /v1/robot-commands/{id}`) get `linkConflict: true` after the fact; an answer already given
   * to a caller could not carry it (docs/robot-link.md, "Link conflicts").
   */
  private flagSentDuringConflict(robotId: string, sinceMs: number): void {
    if (this.closed) return;
    for (const commandId of this.recentSends.since(robotId, sinceMs)) {
      const rec = this.outbox.getForUpdate(commandId);
      if (!rec || rec.robotId !== robotId || rec.linkConflict === true) continue;
      rec.linkConflict = true;
      this.outbox.save(rec);
    }
  }

  /**
   * Sends a robot's backlog: urgent commands (stop, mission pause) first, then the rest, each group
   * in seq order. Already-dispatched commands go again too: their stream is gone, so they may never
   * have arrived. The agent does not apply a motion command older than a stop it already applied
   * (`superseded_by_stop`), so a stop that jumps ahead is never undone by an older start.
   */
  private flush(robotId: string): void {
    if (this.closed) return;
    const backlog = this.outbox.pendingFor(robotId);
    const at = this.now();
    // A motion or configuration command that was sent but never acknowledged is not delivered after
    // a long absence: once it is older than the longest ack wait a caller can ask for, nobody is
    // waiting on it any more and a robot acting on it later could surprise the people near it.
    for (const rec of [...backlog]) {
      if (!isDeferrable(rec) && at - rec.createdAtMs > STALE_AFTER_MS) {
        rec.retryBudgetExhausted = true;
        this.outbox.settle(rec);
        this.reportExhausted(rec);
      }
    }
    const remaining = this.outbox.pendingFor(robotId);
    const ordered = [...remaining.filter((r) => isUrgent(r)), ...remaining.filter((r) => !isUrgent(r))];
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
    // A duplicate ack of a resend; but the agent's own word replaces a state inferred from a Hello.
    if (isAcknowledged(rec.state) && rec.ackSource !== 'hello') return;
    this.acknowledge(rec, state, ack.reason, 'agent');
  }

  /** A request/response command's outcome. It implies the ack if that was lost. */
  private onCommandResult(robotId: string, result: CommandResult): void {
    if (this.closed) return;
    const rec = this.outbox.getForUpdate(result.commandId);
    if (!rec || rec.robotId !== robotId || !expectsResult(rec.action)) {
      this.foreignAcks++;
      return;
    }
    if (rec.result || rec.state === 'agent_rejected') return; // duplicate report
    rec.result = { success: result.success, error: result.error, payload: parseResultPayload(result.payloadJson), atMs: this.now() };
    if (isAcknowledged(rec.state) && rec.ackSource !== 'hello') this.outbox.save(rec);
    else this.acknowledge(rec, 'agent_received', '', 'agent');
    this.resultWaiters.settle(rec.commandId, { record: structuredClone(rec), timedOut: false });
  }

  private acknowledge(rec: CommandRecord, state: 'agent_received' | 'agent_rejected', reason: string, source: AckSource): void {
    rec.rejectReason = state === 'agent_rejected' ? reason : null;
    // A correction of an inferred state replaces its history entry (history stays bounded at 3).
    if (rec.ackSource === 'hello' && isAcknowledged(rec.state)) rec.history.pop();
    rec.ackSource = source;
    const at = this.now();
    if (source === 'agent' && this.observer !== undefined) {
      const firstSent = rec.history.find((h) => h.state === 'dispatched')?.atMs;
      if (firstSent !== undefined) this.observer.acked(state === 'agent_received' ? 'received' : 'rejected', at - firstSent);
    }
    this.transition(rec, state, at);
    this.outbox.settle(rec);
    if (rec.retryBudgetExhausted) this.reportExhausted(rec, state);
    this.waiters.settle(rec.commandId, deliveryOf(rec));
    if (state === 'agent_rejected') this.resultWaiters.settle(rec.commandId, { record: structuredClone(rec), timedOut: false });
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
        } else if (decision === 'exhausted' && isUrgent(rec)) {
          // A stop or pause is never given up: it is resent at the longest interval until the robot
          // acknowledges it (a flapping link may swallow any number of sends).
          if (this.sendNow(rec, at)) this.outbox.save(rec);
        } else if (decision === 'exhausted') {
          rec.retryBudgetExhausted = true;
          this.outbox.settle(rec);
          this.reportExhausted(rec);
        }
      }
    }
  }

  /** Tells the exhaustion observer: the budget ran out, or (with `acked`) the robot acknowledged it after all. */
  private reportExhausted(rec: CommandRecord, acked?: 'agent_received' | 'agent_rejected'): void {
    try {
      if (acked === undefined) this.exhaustion?.retryBudgetExhausted(exhaustedFacts(rec));
      else this.exhaustion?.acknowledgedAfterExhaustion(exhaustedFacts(rec), acked);
    } catch (err) {
      this.log.error({ err, commandId: rec.commandId }, 'the retry-exhaustion observer failed');
    }
  }

  private transition(rec: CommandRecord, state: StoredDeliveryState, at: number): void {
    rec.state = state;
    rec.history.push({ state, atMs: at });
    this.observer?.state(rec.action, state);
  }
}

function exhaustedFacts(rec: CommandRecord): ExhaustedCommand {
  return {
    commandId: rec.commandId, robotId: rec.robotId, fleetId: rec.fleetId, orgId: rec.orgId, action: rec.action,
    attempts: rec.attempts, createdAtMs: rec.createdAtMs, lastSentAtMs: rec.lastSentAtMs,
  };
}

/** Creates and starts a {@link CommandService}. */
export function createCommandService(opts: CommandServiceOptions): CommandService {
  return new CommandService(opts);
}
