/**
 * Writes each robot's latest snapshot to LMDB (`store.snapshots`, format: snapshot-codec.ts), only
 * when it is newer (robot clock) than what this writer last wrote: two decode workers may finish out
 * of order, and a robot may resend an old batch after a reconnect.
 *
 * Memory bound: one number per robot that ever reported, i.e. bounded by the registered robots (the
 * robot link only accepts registered robots).
 */
import type { Database } from 'lmdb';
import { snapshotTsOf, snapshotValue } from './snapshot-codec.js';

export class SnapshotWriter {
  private readonly lastTs = new Map<string, number>();
  private lastPut: Promise<unknown> = Promise.resolve();
  written = 0;
  skipped = 0;

  constructor(private readonly db: Database<unknown, string>) {}

  /** Stores `row` (a RowBinary row of `robotId` at robot clock `tsMs`) unless an equal-or-newer one was written. */
  offer(robotId: string, tsMs: number, row: Uint8Array): void {
    let prev = this.lastTs.get(robotId);
    if (prev === undefined) {
      // First sight since start: what an earlier run stored counts too (LMDB reads are cheap).
      prev = snapshotTsOf(this.db.get(robotId)) ?? Number.NEGATIVE_INFINITY;
    }
    if (tsMs <= prev) {
      this.lastTs.set(robotId, prev);
      this.skipped++;
      return;
    }
    this.lastTs.set(robotId, tsMs);
    this.written++;
    // Async put: lmdb-js batches these into one transaction per event-loop turn.
    this.lastPut = this.db.put(robotId, snapshotValue(row));
  }

  /** Resolves when every put issued so far is committed (lmdb commits async puts in order). */
  async flushed(): Promise<void> {
    await this.lastPut;
  }
}
