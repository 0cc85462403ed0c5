/**
 * Delivery of field rule sets over the robot link. A robot receives its fleet's current set right
 * after its Welcome, before any command (the link's `onLinkOpening`, which runs before the outbox
 * resend of `onOnline`), and every online robot of a fleet receives the new set when its rules
 * change. Each robot answers with the version it applied; {@link FieldRuleDelivery.publish} waits a
 * bounded time for those answers and reports each online robot's outcome.
 *
 * Bounds: at most `maxWaiters` robot answers are awaited at once over all calls (default 10,000);
 * a robot beyond that is reported `timed_out` at once, without waiting (its set is still sent).
 * The last answer of each online robot is kept in memory only (forgotten when it goes offline: it
 * receives the set again when it returns).
 */
import type { Logger } from 'pino';
import type { FieldRuleSet, FieldRuleSetAck } from '../../../gen/fleetgw/v1/robot_link_pb.js';
import type { RobotLink } from '../../../protocol/robot-link.js';
import { fleetRobotIds } from '../../../store/identity.js';
import type { Store } from '../../../store/lmdb.js';
import { currentRuleSet } from './rule-set.js';

/**
 * What became of a set sent to one online robot: `applied` (it acknowledged this version or a newer
 * one), `rejected` (it answered that it could not apply it; `error` says why), `timed_out` (no answer
 * in time, e.g. an agent without field rule support), `disconnected` (its link ended before it answered).
 */
export type FieldRuleDeliveryOutcome = 'applied' | 'rejected' | 'timed_out' | 'disconnected';

export interface RobotRuleDelivery {
  robotId: string;
  outcome: FieldRuleDeliveryOutcome;
  /** The robot's error text when `rejected`; null otherwise. */
  error: string | null;
}

/** The outcome of publishing one rule set version to the fleet's online robots. */
export interface RuleSetDeliveryReport {
  ruleSetVersion: number;
  /** One entry per robot of the fleet that was online when the set was sent, by robot id. */
  robots: RobotRuleDelivery[];
}

/** The robots of a report that did not apply the set. */
export function unacknowledged(report: RuleSetDeliveryReport): RobotRuleDelivery[] {
  return report.robots.filter((r) => r.outcome !== 'applied');
}

/** A robot's last answer to a rule set. */
export interface RobotRuleSetState {
  version: number;
  applied: boolean;
  error: string;
}

interface Waiter {
  version: number;
  done(outcome: FieldRuleDeliveryOutcome, error: string | null): void;
}

export interface FieldRuleDeliveryOptions {
  store: Store;
  link: RobotLink;
  /** How long publish waits for the robots' answers (default 5000 ms). */
  ackTimeoutMs?: number;
  /** Robot answers awaited at once over all calls (default 10,000). */
  maxWaiters?: number;
  log?: Logger;
}

export class FieldRuleDelivery {
  private readonly states = new Map<string, RobotRuleSetState>();
  private readonly waiters = new Map<string, Set<Waiter>>();
  private waiting = 0;
  private readonly ackTimeoutMs: number;
  private readonly maxWaiters: number;
  private readonly unlisten: () => void;

  constructor(private readonly opts: FieldRuleDeliveryOptions) {
    this.ackTimeoutMs = opts.ackTimeoutMs ?? 5000;
    this.maxWaiters = opts.maxWaiters ?? 10_000;
    this.unlisten = opts.link.listen({
      onLinkOpening: (robotId, fleetId) => {
        this.sendCurrentSet(robotId, fleetId);
      },
      onFieldRuleAck: (robotId, ack) => this.onAck(robotId, ack),
      onOffline: (robotId) => this.onOffline(robotId),
    });
  }

  /** The robot's last answer while it is online, or null (none yet, or offline). */
  stateOf(robotId: string): RobotRuleSetState | null {
    return this.states.get(robotId) ?? null;
  }

  /**
   * Sends the fleet's current set to each of its online robots and waits (up to the ack timeout)
   * for their answers.
   */
  async publish(fleetId: string): Promise<RuleSetDeliveryReport> {
    const set = currentRuleSet(this.opts.store, fleetId);
    const version = Number(set.version);
    const online = fleetRobotIds(this.opts.store, fleetId).filter((id) => this.opts.link.isOnline(id));
    const outcomes = online.map((robotId) => this.sendAndWait(robotId, set));
    const robots = await Promise.all(outcomes);
    return { ruleSetVersion: version, robots };
  }

  /** Stops listening and ends every wait as `timed_out`. */
  close(): void {
    this.unlisten();
    for (const set of this.waiters.values()) for (const w of [...set]) w.done('timed_out', null);
  }

  /**
   * Sends `fleetId`'s current set to one robot now, forgetting its previous answer (its fleet, and so
   * its versions, may have changed). Runs for every robot at link opening; a move of an online robot
   * to another fleet calls it too, before any command of the new fleet is sent to the robot.
   * @returns false when the robot is not connected (nothing was sent)
   */
  sendCurrentSet(robotId: string, fleetId: string): boolean {
    this.states.delete(robotId);
    const set = currentRuleSet(this.opts.store, fleetId);
    const sent = this.opts.link.sendFieldRules(robotId, set);
    if (!sent) this.opts.log?.warn({ robotId }, `robot ${robotId}: field rule set ${set.version} not sent (link not writable)`);
    return sent;
  }

  private sendAndWait(robotId: string, set: FieldRuleSet): Promise<RobotRuleDelivery> {
    const version = Number(set.version);
    const sent = this.opts.link.sendFieldRules(robotId, set);
    if (!sent) return Promise.resolve({ robotId, outcome: 'disconnected', error: null });
    const state = this.states.get(robotId);
    if (state !== undefined && state.applied && state.version >= version) return Promise.resolve({ robotId, outcome: 'applied', error: null });
    if (this.waiting >= this.maxWaiters) return Promise.resolve({ robotId, outcome: 'timed_out', error: null });
    return new Promise((resolve) => {
      let set = this.waiters.get(robotId);
      if (set === undefined) this.waiters.set(robotId, (set = new Set()));
      const mine = set;
      const timer = setTimeout(() => waiter.done('timed_out', null), this.ackTimeoutMs);
      const waiter: Waiter = {
        version,
        done: (outcome, error) => {
          if (!mine.delete(waiter)) return;
          clearTimeout(timer);
          this.waiting--;
          if (mine.size === 0 && this.waiters.get(robotId) === mine) this.waiters.delete(robotId);
          resolve({ robotId, outcome, error });
        },
      };
      mine.add(waiter);
      this.waiting++;
    });
  }

  private onAck(robotId: string, ack: FieldRuleSetAck): void {
    const version = Number(ack.version);
    const prev = this.states.get(robotId);
    // An answer to an older set (sent before a newer one) must not replace the newer answer.
    if (prev === undefined || version >= prev.version) this.states.set(robotId, { version, applied: ack.applied, error: ack.error });
    if (!ack.applied) this.opts.log?.warn({ robotId, version, error: ack.error }, `robot ${robotId}: could not apply field rule set ${version}`);
    const set = this.waiters.get(robotId);
    if (set === undefined) return;
    for (const w of [...set]) {
      if (ack.applied && w.version <= version) w.done('applied', null);
      else if (!ack.applied && w.version === version) w.done('rejected', ack.error || 'rejected without a reason');
    }
  }

  private onOffline(robotId: string): void {
    this.states.delete(robotId);
    const set = this.waiters.get(robotId);
    if (set !== undefined) for (const w of [...set]) w.done('disconnected', null);
  }
}
