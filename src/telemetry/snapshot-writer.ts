/**
 * Writes each robot's latest snapshot to LMDB (`store.snapshots`), only when it is newer (robot clock)
 * than what this writer last wrote: two decode workers may finish out of order, and a robot may resend
 * an old batch after a reconnect.
 *
 * Memory bound: one number per robot that ever reported, i.e. bounded by the registered robots (the
 * robot link only accepts registered robots).
 */
import type { Database } from 'lmdb';
import type { TelemetrySnapshot } from './snapshot.js';

export class SnapshotWriter {
  private readonly lastTs = new Map<string, number>();
  private lastPut: Promise<unknown> = Promise.resolve();
  written = 0;
  skipped = 0;

  constructor(private readonly db: Database<unknown, string>) {}

  /** Stores `snap` unless an equal-or-newer sample of that robot was already written. */
  offer(snap: TelemetrySnapshot): void {
    let prev = this.lastTs.get(snap.robotId);
    if (prev === undefined) {
      // First sight since start: what an earlier run stored counts too (LMDB reads are cheap).
      const stored = this.db.get(snap.robotId) as Partial<TelemetrySnapshot> | undefined;
      prev = typeof stored?.tsMs === 'number' ? stored.tsMs : Number.NEGATIVE_INFINITY;
    }
    if (snap.tsMs <= prev) {
      this.lastTs.set(snap.robotId, prev);
      this.skipped++;
      return;
    }
    this.lastTs.set(snap.robotId, snap.tsMs);
    this.written++;
    // Async put: lmdb-js batches these into one transaction per event-loop turn.
    this.lastPut = this.db.put(snap.robotId, snap);
  }

  /** Resolves when every put issued so far is committed (lmdb commits async puts in order). */
  async flushed(): Promise<void> {
    await this.lastPut;
  }
}
