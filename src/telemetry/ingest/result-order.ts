/**
 * Decode results in posting order: tasks finish out of order (several pool threads, inline decodes
 * settled at once), and their results are parked here until every earlier one has arrived, so
 * snapshots and acknowledgements follow arrival order. Bounded by the tasks in flight (at most
 * `maxTasksInFlight` entries wait).
 */
import type { DecodeResult } from '../decode/index.js';
import type { DurablePoint } from '../store/index.js';
import { rowsLength } from './result-applier.js';

/** One finished task: its result (null: the task was lost), robot ids, durable points and slot. */
export interface Finished {
  r: DecodeResult | null;
  robotIds: string[];
  points: Map<string, DurablePoint> | null;
  slot: number;
}

/** The reorder map of finished tasks, and the waiters of flush(). */
export class ResultOrder {
  /** Results waiting for earlier ones, by task seq. */
  private readonly done = new Map<number, Finished>();
  /** Row bytes of results parked here (decoded, waiting for an earlier seq): still queued memory. */
  parkedBytes = 0;
  /** Seq of the last task handed out by next(). */
  delivered = 0;
  private drainWaiters: { upTo: number; resolve: () => void }[] = [];

  /** Parks a finished task until its turn. */
  park(seq: number, finished: Finished): void {
    this.done.set(seq, finished);
    this.parkedBytes += finished.r === null ? 0 : rowsLength(finished.r);
  }

  /** The next task in posting order if it has finished (it leaves the map), else undefined. */
  next(): Finished | undefined {
    const next = this.delivered + 1;
    const f = this.done.get(next);
    if (f === undefined) return undefined;
    this.done.delete(next);
    this.delivered = next;
    if (f.r) this.parkedBytes -= rowsLength(f.r);
    return f;
  }

  /** Resolves once every task up to `upTo` (not yet {@link delivered}) has been handed out. */
  drained(upTo: number): Promise<void> {
    return new Promise<void>((resolve) => this.drainWaiters.push({ upTo, resolve }));
  }

  /** Resolves the waiters whose tasks have all been handed out. */
  wakeDrained(): void {
    if (this.drainWaiters.length > 0) {
      const still = this.drainWaiters.filter((w) => w.upTo > this.delivered);
      for (const w of this.drainWaiters) if (w.upTo <= this.delivered) w.resolve();
      this.drainWaiters = still;
    }
  }
}
