/**
 * The agent's memory of commands it has decided on, so each command id is applied at most once,
 * also across reconnects (the gateway resends commands whose ack it did not get).
 *
 * Memory is bounded: the last `capacity` decisions by command id, plus the highest seq decided.
 * A command whose id was forgotten but whose seq is not above that high-water mark is older than
 * everything remembered; it is never applied and is acked REJECTED "stale_seq" (the gateway sends
 * commands in seq order, so this only happens after more than `capacity` newer commands).
 * Commands with seq 0 are unsequenced and rely on the id memory alone.
 */
import { CommandAck_Status } from '../gen/fleetgw/v1/robot_link_pb.js';

export interface Decision {
  status: CommandAck_Status.RECEIVED | CommandAck_Status.REJECTED;
  reason: string;
}

export type LedgerEntry = { state: 'pending' } | { state: 'decided'; decision: Decision };

export class CommandLedger {
  private readonly entries = new Map<string, LedgerEntry>();
  private highestDecidedSeq: bigint;
  private highestAppliedSeq: bigint;

  /** `lastAppliedSeq`: restored from the robot's own persistent state, if it keeps one. */
  constructor(
    private readonly capacity = 1024,
    lastAppliedSeq = 0n,
  ) {
    this.highestDecidedSeq = lastAppliedSeq;
    this.highestAppliedSeq = lastAppliedSeq;
  }

  /** Highest seq of a command the handler accepted; sent in Hello. */
  get lastAppliedSeq(): bigint {
    return this.highestAppliedSeq;
  }

  get(commandId: string): LedgerEntry | undefined {
    return this.entries.get(commandId);
  }

  /** True when a sequenced command is not newer than the latest one decided. */
  isStale(seq: bigint): boolean {
    return seq > 0n && seq <= this.highestDecidedSeq;
  }

  /** Marks a command as being handled (a duplicate arriving meanwhile is not applied again). */
  begin(commandId: string): void {
    this.remember(commandId, { state: 'pending' });
  }

  /** Records the decision on a command. */
  decide(commandId: string, seq: bigint, decision: Decision): void {
    this.remember(commandId, { state: 'decided', decision });
    if (seq > this.highestDecidedSeq) this.highestDecidedSeq = seq;
    if (decision.status === CommandAck_Status.RECEIVED && seq > this.highestAppliedSeq) this.highestAppliedSeq = seq;
  }

  private remember(commandId: string, entry: LedgerEntry): void {
    this.entries.delete(commandId);
    this.entries.set(commandId, entry);
    // Map iteration is insertion order: the first key is the oldest decision.
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
  }
}
