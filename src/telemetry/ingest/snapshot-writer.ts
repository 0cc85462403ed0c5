/**
 * Keeps each robot's latest snapshot (format: snapshot-codec.ts) and writes it to LMDB
 * (`store.snapshots`) at most once per `intervalMs` per robot, only when it is newer (robot clock)
 * than what was written: two decode workers may finish out of order, and a robot may resend an old
 * batch after a reconnect.
 *
 * Why an interval: at 1,000 robots x 10 Hz with one sample per message, a put per sample was about a
 * fifth of the gateway's main-thread time (profile in bench/notes/telemetry-ingest.md, "The telemetry core,
 * same-session runs"). The latest row is
 * copied into a per-robot buffer that is reused, so an offer allocates nothing (nor does a write, apart
 * from what lmdb-js allocates); dirty robots are put together when the interval ends. Trade-off: `GET /v1/robots` shows telemetry up to `intervalMs`
 * older than the live stream does (docs/telemetry-stream.md). `flushed()` writes what is pending at
 * once (flush, shutdown).
 *
 * Memory bound: one slot (about 200 bytes) per robot that ever reported, i.e. bounded by the
 * registered robots (the robot link only accepts registered robots).
 */
import type { Database } from 'lmdb';
import type { BackgroundWrites } from '../../store/background-writes.js';
import { SNAPSHOT_FORMAT, snapshotTsOf } from '../sample/index.js';

interface Slot {
  /** Robot clock of the newest row offered. */
  ts: number;
  /** Robot clock of what is in LMDB (or was there at first sight). */
  writtenTs: number;
  /** Format byte + row; `len` bytes in use. */
  value: Uint8Array;
  len: number;
  /** `value` up to `len`, kept while both stay (a view per write was most of what writing allocated). */
  view: Uint8Array;
  dirty: boolean;
}

export class SnapshotWriter {
  private readonly slots = new Map<string, Slot>();
  /** Robots with a row not yet written: the first `dirtyCount` entries (kept, not truncated, so the array is not regrown every interval). */
  private readonly dirty: string[] = [];
  private dirtyCount = 0;
  private timer: NodeJS.Timeout | null = null;
  private lastPut: Promise<unknown> = Promise.resolve();
  written = 0;
  skipped = 0;

  constructor(
    private readonly db: Database<unknown, string>,
    /**
     * Hears each put's failure (the gateway's log and `fleetgw_store_write_failures_total`): nobody
     * awaits a put but the last one. The robot's next newer row writes its snapshot again.
     */
    private readonly writes: Pick<BackgroundWrites, 'watch'>,
    private readonly intervalMs = 1_000,
    /**
     * Told of each snapshot as it is written (at most once per interval per robot, never per sample):
     * the alerts' e-stop and battery check and the usage meter. The bytes are the writer's reused
     * buffer: read them before returning. Must not throw.
     */
    private readonly onWritten?: (robotId: string, value: Uint8Array) => void,
  ) {}

  /**
   * Takes the row `rows[start..end)` (a RowBinary row of `robotId` at robot clock `tsMs`; copied, not
   * kept) unless an equal-or-newer one was offered. A range rather than a view: the ingest offers one
   * row per robot per batch, and a view each was a measurable part of what it allocated.
   */
  offer(robotId: string, tsMs: number, rows: Uint8Array, start: number, end: number): void {
    let slot = this.slots.get(robotId);
    const n = end - start;
    if (slot === undefined) {
      // First sight since start: what an earlier run stored counts too (LMDB reads are cheap).
      const stored = snapshotTsOf(this.db.get(robotId)) ?? Number.NEGATIVE_INFINITY;
      const value = new Uint8Array(Math.max(256, n + 1));
      slot = { ts: stored, writtenTs: stored, value, len: 0, view: value.subarray(0, 0), dirty: false };
      this.slots.set(robotId, slot);
    }
    if (tsMs <= slot.ts) {
      this.skipped++;
      return;
    }
    if (slot.value.length < n + 1) {
      slot.value = new Uint8Array(n * 2 + 1);
      // The kept view is of the old buffer: a later row of its length must not be written from there.
      slot.view = slot.value.subarray(0, 0);
    }
    const value = slot.value;
    value[0] = SNAPSHOT_FORMAT;
    // A loop, not set(subarray): rows are ~100-300 bytes, and the view set() needs is what this saves.
    for (let i = 0; i < n; i++) value[i + 1] = rows[start + i]!;
    slot.len = n + 1;
    slot.ts = tsMs;
    if (!slot.dirty) {
      slot.dirty = true;
      this.dirty[this.dirtyCount++] = robotId;
    }
    this.timer ??= setTimeout(() => this.writeDirty(), this.intervalMs);
  }

  /** Writes what is pending now and resolves when every put issued so far is committed. */
  async flushed(): Promise<void> {
    this.writeDirty();
    await this.lastPut;
  }

  private writeDirty(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const dirty = this.dirty;
    for (let i = 0; i < this.dirtyCount; i++) {
      const robotId = dirty[i]!;
      const slot = this.slots.get(robotId)!;
      slot.dirty = false;
      if (slot.ts <= slot.writtenTs) continue;
      slot.writtenTs = slot.ts;
      this.written++;
      // offer() drops the view when it replaces the buffer, so one of this length is of the current one.
      if (slot.view.length !== slot.len) slot.view = slot.value.subarray(0, slot.len);
      // Async put: lmdb-js encodes the value now (the slot may be overwritten right after, and the
      // same view is put again later) and commits all puts of this turn in one transaction. That
      // holds because the database has an encoder (msgpack, store/lmdb.ts): without one lmdb-js
      // would keep the caller's bytes until the commit.
      const put = this.db.put(robotId, slot.view);
      this.writes.watch(put, 'telemetry', 'snapshots');
      this.lastPut = put;
      this.onWritten?.(robotId, slot.view);
    }
    this.dirtyCount = 0;
  }
}
