/**
 * What a decoded task becomes, once the ingest applies it in posting order: its rows copied out of
 * the task's slot into the row arena and queued for the insert with the durable points they carry,
 * each robot's newest row offered to the snapshot writer, its Foxglove frames handed to their hub,
 * and the counts (and throttled log lines) of skipped frames and bounded robot strings.
 */
import type { Logger } from 'pino';
import type { DecodeResult, TaskSlots } from '../decode/index.js';
import type { FoxgloveSink } from '../live/index.js';
import type { DurablePoint, InsertQueue, RowArena } from '../store/index.js';
import type { BoundReport } from './bound-report.js';
import type { IngestCounters } from './counters.js';
import type { SnapshotWriter } from './snapshot-writer.js';

/** Applies decoded results to the insert queue, the snapshots and the Foxglove hub. */
export class ResultApplier {
  /** Linux thread ids of the decode workers seen so far (at most 64): CPU per thread from /proc. */
  readonly decodeThreadIds = new Set<number>();
  private lastErrorLogMs = 0;

  constructor(
    private readonly s: IngestCounters,
    private readonly slots: TaskSlots,
    private readonly rowArena: RowArena,
    private readonly inserts: InsertQueue,
    private readonly snapshots: SnapshotWriter,
    private readonly foxglove: FoxgloveSink | undefined,
    private readonly bounds: BoundReport,
    private readonly log: Logger,
    private readonly now: () => number,
  ) {}

  /** Applies one task's result; its rows in `slot` (-1: none) are copied out before the slot is reused. */
  apply(r: DecodeResult, robotIds: string[], points: Map<string, DurablePoint> | null, slot: number): void {
    // Bounded: replaced workers add ids; past 64 the list is only a sample.
    if (r.threadId !== 0 && this.decodeThreadIds.size < 64) this.decodeThreadIds.add(r.threadId);
    this.s.samplesIn += r.rowCount;
    this.s.corruptFrames += r.corruptFrames;
    if (r.bounded) this.bounds.record(r.bounded, robotIds);
    // Rows in the task's slot are copied out before the slot is reused; rows in a buffer of their
    // own (no slot, or too large for it) are kept as they are. (Tasks without a slot: none in the
    // measured peak runs, bursts after a pause included: `batchesWithoutSlot`.)
    const rows = r.rowsInSlot !== undefined && slot !== -1 ? this.rowArena.copy(this.slots.rows(slot, r.rowsInSlot)) : r.rows;
    this.inserts.enqueue(rows, r.rowCount, points);
    const snaps = r.snapshots;
    for (let i = 0, k = 0; i < snaps.length; i += 3, k++) {
      // A range of the rows: the writer copies it into the LMDB value at once.
      this.snapshots.offer(robotIds[snaps[i]!]!, r.snapshotTs[k]!, rows, snaps[i + 1]!, snaps[i + 2]!);
    }
    if (r.foxglove && this.foxglove) this.foxglove.publishFoxglove(r.foxglove);
    if (r.errors.length > 0) {
      // At most one line per second: a robot sending garbage must not flood the log.
      const t = this.now();
      if (t - this.lastErrorLogMs >= 1_000) {
        this.lastErrorLogMs = t;
        this.log.warn({ corruptFramesTotal: this.s.corruptFrames, first: r.errors[0] }, 'telemetry frames skipped');
      }
    }
  }
}

/** Bytes of a result's rows, wherever they are. */
export function rowsLength(r: DecodeResult): number {
  return r.rowsInSlot ?? r.rows.byteLength;
}
