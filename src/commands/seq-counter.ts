/**
 * Per-robot command sequence numbers, never handed out twice, also across a crash.
 *
 * The agent orders commands by seq and refuses a non-urgent one at or below the last it applied
 * (`stale_seq`); a robot's Hello reports that last applied seq, and the gateway settles the pending
 * command with that number as received. So a seq reused after a restart would get a new command
 * refused, or worse, marked received without being sent. Hence the rule: a seq is sent only once a
 * reservation covering it has COMMITTED in LMDB (`meta` key `commandSeq/<robotId>`, the highest seq
 * reserved). After a restart numbering continues past the stored reservation; the gap is harmless.
 *
 * Cost: reservations cover SEQ_BLOCK seqs and the next block is reserved ahead (an ordinary async
 * write, queued when half of the current block is used, and when the robot connects), so commands
 * normally find their seq already covered. When none covers it (the first command to a robot that
 * has not connected since the start, or a burst that outruns the prefetch) the reservation is
 * committed synchronously before the command is sent: one LMDB commit on the event loop per such
 * case (one for all targets of a bulk request), at most once per SEQ_BLOCK commands of a robot. At
 * start every registered robot gets its reservation ahead in one ordinary write.
 *
 * A value stored by an older version (the last seq used, written with each command) reads as a
 * reservation: numbering continues after it.
 */
import { apiError } from '../errors/catalog.js';
import type { Store } from '../store/lmdb.js';
import { seqMetaKey } from './keys.js';
import type { WriteBehind } from './write-behind.js';

/** How many seqs one reservation covers. */
export const SEQ_BLOCK = 1024;

export class SeqCounter {
  /** robotId -> last seq handed out (or the agent's last applied one, if higher). */
  private readonly last = new Map<string, number>();
  /** robotId -> highest seq covered by a committed reservation. */
  private readonly committed = new Map<string, number>();
  /** robotId -> highest reservation written or queued (reservations only grow). */
  private readonly target = new Map<string, number>();
  /** Robots with a reservation write queued or in flight. */
  private readonly reserving = new Set<string>();

  /**
   * @param pendingSeqs seqs of a robot's commands loaded from the outbox (never below the counter)
   * @param track bookkeeping for an issued write (error counting); returns its settled promise
   */
  constructor(
    private readonly store: Store,
    private readonly writes: WriteBehind,
    private readonly pendingSeqs: (robotId: string) => Iterable<number>,
    private readonly track: (p: Promise<unknown>) => Promise<void>,
  ) {}

  /** The last seq handed out for the robot (0 for none). */
  current(robotId: string): number {
    let last = this.last.get(robotId);
    if (last === undefined) {
      const stored = this.store.meta.get(seqMetaKey(robotId));
      const reserved = typeof stored === 'number' && Number.isSafeInteger(stored) && stored > 0 ? stored : 0;
      this.committed.set(robotId, reserved);
      this.target.set(robotId, Math.max(reserved, this.target.get(robotId) ?? 0));
      // Seqs up to the reservation may have been used by the previous process.
      last = reserved;
      for (const seq of this.pendingSeqs(robotId)) last = Math.max(last, seq);
      this.last.set(robotId, last);
    }
    return last;
  }

  /**
   * The seq the robot's next command gets, covered by a committed reservation before it returns.
   * Nothing is handed out yet: call {@link use} once the command is accepted.
   * @throws ApiError `unavailable` when the reservation cannot be written (nothing is sent; in a bulk
   *   request that target alone fails)
   */
  next(robotId: string): number {
    this.ensure([robotId]);
    return this.current(robotId) + 1;
  }

  /**
   * Makes each robot's next seq covered by a committed reservation, with one synchronous LMDB commit
   * for all robots that need one (none when the reservations made ahead suffice): a bulk request
   * calls this once for its targets instead of paying a commit per robot.
   * @throws ApiError `unavailable` when the reservations cannot be written
   */
  ensure(robotIds: Iterable<string>): void {
    const need: { robotId: string; upTo: number }[] = [];
    for (const robotId of robotIds) {
      const seq = this.current(robotId) + 1;
      if (seq <= (this.committed.get(robotId) ?? 0)) continue;
      const upTo = Math.max(seq + SEQ_BLOCK - 1, this.target.get(robotId) ?? 0);
      this.target.set(robotId, upTo);
      need.push({ robotId, upTo });
    }
    if (need.length === 0) return;
    try {
      this.store.root.transactionSync(() => {
        // Never below what is stored: reservations only grow, whoever wrote last.
        for (const n of need) n.upTo = this.raiseStored(n.robotId, n.upTo);
      });
    } catch {
      throw apiError('unavailable', { what: 'Command storage' });
    }
    for (const { robotId, upTo } of need) this.committed.set(robotId, upTo);
  }

  /** Marks `seq` (from {@link next}) as handed out; reserves the next block ahead when due. */
  use(robotId: string, seq: number): void {
    if (seq > this.current(robotId)) this.last.set(robotId, seq);
    this.prepare(robotId);
  }

  /**
   * Moves the counter past `seq` (the agent reported applying it): a gateway whose counter fell
   * behind (data dir restored from an older backup) must not hand out numbers the agent refuses.
   */
  raise(robotId: string, seq: number): void {
    if (seq > this.current(robotId)) this.last.set(robotId, seq);
    this.prepare(robotId);
  }

  /** Inside a write transaction: stores max(stored, upTo) as the robot's reservation; returns it. */
  private raiseStored(robotId: string, upTo: number): number {
    const stored = this.store.meta.get(seqMetaKey(robotId));
    const value = typeof stored === 'number' && stored > upTo ? stored : upTo;
    if (value !== stored) this.store.meta.putSync(seqMetaKey(robotId), value);
    return value;
  }

  /** Queues the next block's reservation when less than half a block is left (robot connected, seq used). */
  prepare(robotId: string): void {
    const last = this.current(robotId);
    const committed = this.committed.get(robotId) ?? 0;
    if (committed - last >= SEQ_BLOCK / 2 || this.reserving.has(robotId)) return;
    this.reserving.add(robotId);
    const wanted = Math.max(last, committed) + SEQ_BLOCK;
    this.target.set(robotId, Math.max(wanted, this.target.get(robotId) ?? 0));
    let written = 0;
    // Lazy: nobody waits on it, so it rides along with the next flush of command writes. A
    // transaction that reads before it writes: a synchronous reservation may commit between this
    // write being issued and lmdb-js running it, and the stored value must not go back down.
    this.writes.defer(() => this.track(this.store.root.transaction(() => {
      written = this.raiseStored(robotId, this.target.get(robotId) ?? wanted);
    })), true).then(
      () => {
        this.reserving.delete(robotId);
        if (written > (this.committed.get(robotId) ?? 0)) this.committed.set(robotId, written);
      },
      () => {
        // Not committed: the next command that needs it reserves synchronously (and fails if the
        // disk still refuses).
        this.reserving.delete(robotId);
      },
    );
  }
}
