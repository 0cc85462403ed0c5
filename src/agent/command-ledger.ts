/**
 * The agent's memory of commands it has decided on, so each command id is applied at most once,
 * also across reconnects (the gateway resends commands whose ack it did not get).
 *
 * Memory is bounded: the last `capacity` decisions by command id, plus the highest seq decided.
 * A command whose id was forgotten but whose seq is not above that high-water mark is older than
 * everything remembered; it is never applied and is acked REJECTED "stale_seq" (the gateway sends
 * commands in seq order, so this only happens after more than `capacity` newer commands).
 * Commands with seq 0 are unsequenced and rely on the id memory alone.
 *
 * Urgent commands (stop, mission pause) may overtake older ones: the gateway sends them first when
 * it flushes a backlog, and the agent runs them ahead of its queue. So they neither take part in the
 * stale check nor move its mark (an older command arriving after them is not stale).
 * Instead they set a stop mark as soon as they arrive: a motion command with a seq below the highest
 * urgent seq received was issued before that stop and is rejected "superseded_by_stop" rather than
 * undoing it (also when the stop itself is still being applied, or was refused: erring towards rest).
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
  private highestUrgentSeq = 0n;

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

  /** Records an arriving stop / pause (see the header). */
  noteUrgent(seq: bigint): void {
    if (seq > this.highestUrgentSeq) this.highestUrgentSeq = seq;
  }

  /** True when a stop / pause with a higher seq has arrived (see the header). */
  isSuperseded(seq: bigint): boolean {
    return seq > 0n && seq < this.highestUrgentSeq;
  }

  /** Marks a command as being handled (a duplicate arriving meanwhile is not applied again). */
  begin(commandId: string): void {
    this.remember(commandId, { state: 'pending' });
  }

  /**
   * Records the decision on a command. An urgent one does not move the stale mark (older commands it
   * overtook must still be applied) but does count as applied, so the Hello reports it and the
   * gateway settles it instead of resending it.
   */
  decide(commandId: string, seq: bigint, decision: Decision, urgent = false): void {
    this.remember(commandId, { state: 'decided', decision });
    if (!urgent && seq > this.highestDecidedSeq) this.highestDecidedSeq = seq;
    if (decision.status === CommandAck_Status.RECEIVED && seq > this.highestAppliedSeq) this.highestAppliedSeq = seq;
  }

  private remember(commandId: string, entry: LedgerEntry): void {
    this.entries.delete(commandId);
    this.entries.set(commandId, entry);
    // Map iteration is insertion order: the first decided key is the oldest decision. Entries still
    // pending are never evicted (a duplicate arriving meanwhile must still be recognised); the
    // processor bounds how many can be pending.
    if (this.entries.size <= this.capacity) return;
    for (const [id, e] of this.entries) {
      if (this.entries.size <= this.capacity) break;
      if (e.state === 'decided') this.entries.delete(id);
    }
  }
}
