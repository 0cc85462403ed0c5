/**
 * Write-behind for the command outbox: LMDB writes asked for during an event turn are issued at the
 * end of that turn (a `setImmediate`), together, instead of where they are asked for.
 *
 * Why: a command's latency is the robot hop, and that hop starts only when the gRPC frame leaves,
 * which Node's HTTP/2 session does in a native immediate after the current callback and its
 * microtasks. Packing the record and queueing its five or so LMDB writes before that delayed every
 * command by their cost (and a 100-robot stop_all by a hundred times that; bench/notes/command-latency.md). Native
 * immediates run before JavaScript ones, so writes issued from a `setImmediate` queued during the turn
 * run after the frames are on the wire, while the robot is already working. On the ack side the same
 * deferral lets the HTTP answer leave before the settled record is packed.
 *
 * What does not change: writes still land in LMDB in the order asked (one list, run in order), the
 * writes of one turn are still one LMDB transaction (lmdb-js batches per event turn, and they are all
 * issued from one callback), and a caller still gets a promise that settles when its writes commit.
 * A record is packed when its write is issued, so it holds its latest state; a record asked to be
 * written twice in one turn is packed once.
 *
 * Lazy writes: a write that nobody waits for yet and that is safe to lose in a crash may wait up to
 * `LAZY_MS` for company: the settled state of an acknowledged command (lost, the command is pending
 * again after a restart and the robot's Hello settles it: applied-seq.ts), and the first write of a
 * command whose caller waits for the ack (nobody has been answered about it; {@link WriteBehind.hurry}
 * sends it out when that wait ends). It goes out with the next end-of-turn flush, or when that time is
 * up. Each commit costs the LMDB writer thread a disk flush, so 100 acks of a stop_all arriving over
 * 30 turns then cost one or two commits, not 30.
 *
 * Bound: the list holds the writes of at most `LAZY_MS` (lazy) or one turn; it is emptied then.
 */

/** Longest a lazy write waits for an end-of-turn flush to join. */
export const LAZY_MS = 5;

/** {@link WriteBehind.flushSoon} issues at most this many queued writes at once; more wait for the end of the turn. */
export const FLUSH_NOW_MAX = 16;

/** One deferred write: issues its LMDB operations and returns the promises of their commits. */
export type WriteOp = () => Promise<unknown> | readonly Promise<unknown>[] | void;

interface Entry {
  op: WriteOp;
  /** Present when the caller waits on this write: settled by this op's own commits. */
  resolve?: () => void;
  reject?: (err: unknown) => void;
}

export class WriteBehind {
  private entries: Entry[] = [];
  private immediate: NodeJS.Immediate | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** A write queued since the last flush must go out at the end of its turn. */
  private urgent = false;

  /**
   * Queues a write for the end of this turn (or, `lazy`, for the next flush within `LAZY_MS`).
   * Writes are issued in the order queued, whichever kind they are.
   * @returns a promise that settles when this write's own operations have committed (rejects with
   *   their failure, or with what the op threw); other writes of the same flush do not affect it.
   */
  defer(op: WriteOp, lazy = false): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.entries.push({ op, resolve, reject });
      this.schedule(lazy);
    });
  }

  /** {@link defer} for a write nobody waits on (its failure is counted by the op's own bookkeeping). */
  deferQuiet(op: WriteOp, lazy = false): void {
    this.entries.push({ op });
    this.schedule(lazy);
  }

  /** Whether writes are queued and not yet issued. */
  get queued(): boolean {
    return this.entries.length > 0;
  }

  /** Makes queued lazy writes go out at the end of this turn (someone now waits on one). */
  hurry(): void {
    if (this.entries.length > 0) this.schedule(false);
  }

  /**
   * Issues the queued writes now when they are few, else at the end of this turn. For an answer that
   * waits on their commit (an ack just arrived): lmdb-js closes a transaction in an immediate queued
   * by its first write, so writes issued from the end-of-turn immediate commit one loop iteration
   * later. A long queue (a bulk send of this turn, whose frames may not have left yet) still waits
   * for the end of the turn.
   */
  flushSoon(): void {
    if (this.entries.length === 0) return;
    if (this.entries.length <= FLUSH_NOW_MAX) this.flush();
    else this.schedule(false);
  }

  private schedule(lazy: boolean): void {
    if (!lazy) {
      this.urgent = true;
      this.immediate ??= setImmediate(() => this.endOfTurn());
    } else if (this.immediate === null && this.timer === null) {
      // The wait starts when the turn ends: a turn that sends 100 commands may itself take longer
      // than LAZY_MS, and their acks can only be read after it.
      this.immediate = setImmediate(() => this.endOfTurn());
    }
  }

  private endOfTurn(): void {
    this.immediate = null;
    if (this.urgent || this.entries.length === 0) {
      this.flush();
      return;
    }
    if (this.timer === null) {
      this.timer = setTimeout(() => this.flush(), LAZY_MS);
      // A pending lazy write must not keep a process alive; close() flushes it.
      this.timer.unref();
    }
  }

  /** Issues the queued writes now (the end-of-turn callback, and close, which must not wait a turn). */
  flush(): void {
    if (this.immediate !== null) clearImmediate(this.immediate);
    if (this.timer !== null) clearTimeout(this.timer);
    this.immediate = null;
    this.timer = null;
    this.urgent = false;
    const entries = this.entries;
    this.entries = [];
    for (const e of entries) {
      let r: ReturnType<WriteOp>;
      try {
        r = e.op();
      } catch (err: unknown) {
        // A write that throws at once (a value lmdb-js cannot encode) fails only its own caller;
        // the other writes are still issued.
        e.reject?.(err);
        continue;
      }
      const { resolve, reject } = e;
      if (resolve === undefined || reject === undefined) continue;
      if (r instanceof Promise) r.then(() => resolve(), reject);
      else if (r === undefined || r.length === 0) resolve();
      else Promise.all(r).then(() => resolve(), reject);
    }
  }
}
