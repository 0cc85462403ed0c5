/**
 * Coalesces decode-worker row buffers into large INSERTs (a 1-row insert costs ~11 ms on the server,
 * so rows are only worth sending by the tens of thousands), keeps a bounded number in flight, and
 * retries failures with exponential backoff.
 *
 * Policy when things go wrong:
 * - A failed insert keeps its slot and its bytes (still counted in {@link queuedBytes}, so the ingest's
 *   high-water mark pauses the robots) and is retried after 100 ms, 200 ms, ... up to maxDelayMs.
 * - After `maxAttempts` the batch is declared permanently failed: counted in `rowsFailed`, logged, and,
 *   when `deadLetterDir` is set, written there as a RowBinary file (replayable with
 *   `INSERT ... FORMAT RowBinary`), so no row silently disappears.
 * Delivery is at-least-once: an insert that committed but whose response was lost is sent again.
 *
 * Recovery is logged, not only the failure: once every batch that failed has been written on a
 * retry (or dead-lettered) and an insert succeeded, one line (`telemetry inserts recovered`) gives
 * how long inserts failed, how many attempts failed, and how many batches and rows were written on
 * a retry or dead-lettered meanwhile.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SampleStore } from './sample-store.js';
import type { Logger } from 'pino';

export interface InsertQueueOptions {
  /** Send when this many rows are pending. Default 100,000. */
  maxRows?: number;
  /** Send when this many bytes are pending. Default 16 MiB. */
  maxBytes?: number;
  /**
   * Send pending rows at the latest this long after the first one arrived. Default 1,000 ms: fewer,
   * larger inserts cost the store less per row (fewer parts to write and merge); nothing else waits
   * for them (live messages and snapshots leave as soon as a batch is decoded).
   */
  maxAgeMs?: number;
  /** Inserts running at once. Default 2. */
  maxInFlight?: number;
  /** Attempts per batch before it is declared failed. Default 10 (about 20 s of retrying with the default delays). */
  maxAttempts?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
  /** Where permanently failed batches are written. Default: none (counted and logged only). */
  deadLetterDir?: string;
  /** Called after every insert attempt (metrics, store health); must not throw. */
  onInsert?: (attempt: InsertAttempt) => void;
  /** Clock for durations (ms). Default: performance.now. */
  now?: () => number;
}

/** One insert attempt as {@link InsertQueueOptions.onInsert} sees it. */
export interface InsertAttempt {
  ok: boolean;
  rows: number;
  bytes: number;
  durationMs: number;
  /** 1 for the first try of a batch. */
  attempt: number;
}

/** Failed attempts since inserts last succeeded, reported when they succeed again. */
interface Outage {
  sinceMs: number;
  failedAttempts: number;
  /** Batches with a failed attempt that are not written or dead-lettered yet. */
  retrying: number;
  batchesRetried: number;
  rowsRetried: number;
  rowsDeadLettered: number;
}

export interface InsertQueueStats {
  rowsWritten: number;
  rowsFailed: number;
  inserts: number;
  insertErrors: number;
  insertsInFlight: number;
  queuedBytes: number;
}

interface Batch {
  id: number;
  chunks: Uint8Array[];
  bytes: number;
  rows: number;
}

export class InsertQueue {
  private readonly maxRows: number;
  private readonly maxBytes: number;
  private readonly maxAgeMs: number;
  private readonly maxInFlight: number;
  private readonly maxAttempts: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private pending: Batch;
  private readonly ready: Batch[] = [];
  private readonly unsettled = new Set<number>();
  private waiters: { upTo: number; resolve: () => void }[] = [];
  private timer: NodeJS.Timeout | null = null;
  private nextId = 1;
  private inFlight = 0;
  private bytes = 0;
  private closed = false;
  private readonly s = { rowsWritten: 0, rowsFailed: 0, inserts: 0, insertErrors: 0 };
  private outage: Outage | null = null;
  private readonly now: () => number;

  constructor(
    private readonly store: SampleStore,
    private readonly log: Logger,
    private readonly opts: InsertQueueOptions = {},
    /** Called whenever {@link queuedBytes} changes (the ingest re-checks its water marks). */
    private readonly onBytesChange: () => void = () => {},
    /** Gets each batch's row chunks once they are written or dead-lettered (nothing reads them after). */
    private readonly onRelease: (chunks: readonly Uint8Array[]) => void = () => {},
  ) {
    this.maxRows = opts.maxRows ?? 100_000;
    this.maxBytes = opts.maxBytes ?? 16 * 1024 * 1024;
    this.maxAgeMs = opts.maxAgeMs ?? 1_000;
    this.maxInFlight = opts.maxInFlight ?? 2;
    this.maxAttempts = opts.maxAttempts ?? 10;
    this.baseDelayMs = opts.baseDelayMs ?? 100;
    this.maxDelayMs = opts.maxDelayMs ?? 5_000;
    this.pending = this.newBatch();
    this.now = opts.now ?? (() => performance.now());
  }

  /** Bytes held: pending, waiting for a slot, and in flight (including batches being retried). */
  get queuedBytes(): number {
    return this.bytes;
  }

  stats(): InsertQueueStats {
    return { ...this.s, insertsInFlight: this.inFlight, queuedBytes: this.bytes };
  }

  /** Takes ownership of `rows` (a transferred worker buffer; never mutated). */
  enqueue(rows: Uint8Array, rowCount: number): void {
    if (rowCount === 0) return;
    if (this.closed) throw new Error('insert queue is closed');
    const b = this.pending;
    b.chunks.push(rows);
    b.bytes += rows.length;
    b.rows += rowCount;
    this.bytes += rows.length;
    this.onBytesChange();
    if (b.rows >= this.maxRows || b.bytes >= this.maxBytes) this.cut();
    else this.timer ??= setTimeout(() => this.cut(), this.maxAgeMs);
  }

  /** Resolves when every row enqueued so far is written or declared failed. */
  flush(): Promise<void> {
    this.cut();
    const upTo = this.nextId - 1;
    if (this.settledUpTo(upTo)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ upTo, resolve }));
  }

  /** Flushes, then refuses further rows. Does not close the store (the ingest owns it). */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
  }

  private newBatch(): Batch {
    return { id: 0, chunks: [], bytes: 0, rows: 0 };
  }

  /** Moves the pending rows into the ready list and starts inserts while slots are free. */
  private cut(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.pending.rows > 0) {
      const b = this.pending;
      b.id = this.nextId++;
      this.unsettled.add(b.id);
      this.ready.push(b);
      this.pending = this.newBatch();
    }
    this.pump();
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.ready.length > 0) {
      const b = this.ready.shift()!;
      this.inFlight++;
      void this.run(b);
    }
  }

  private async run(b: Batch): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const startedAt = this.now();
      try {
        await this.store.insert(b.chunks, b.bytes, b.rows);
        this.s.inserts++;
        this.s.rowsWritten += b.rows;
        this.opts.onInsert?.({ ok: true, rows: b.rows, bytes: b.bytes, durationMs: this.now() - startedAt, attempt });
        this.noteOutcome(b, attempt, true);
        break;
      } catch (e) {
        this.s.insertErrors++;
        this.opts.onInsert?.({ ok: false, rows: b.rows, bytes: b.bytes, durationMs: this.now() - startedAt, attempt });
        this.outage ??= { sinceMs: Date.now(), failedAttempts: 0, retrying: 0, batchesRetried: 0, rowsRetried: 0, rowsDeadLettered: 0 };
        this.outage.failedAttempts++;
        if (attempt === 1) this.outage.retrying++;
        const msg = e instanceof Error ? e.message : String(e);
        if (attempt >= this.maxAttempts) {
          this.s.rowsFailed += b.rows;
          this.noteOutcome(b, attempt, false);
          this.log.error({ err: e, rows: b.rows, attempts: attempt }, 'telemetry insert failed permanently');
          await this.deadLetter(b);
          break;
        }
        const delay = Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1));
        this.log.warn({ rows: b.rows, attempt, delayMs: delay, error: msg }, 'telemetry insert failed, retrying');
        await new Promise((r) => setTimeout(r, delay));
      }
    }
    this.inFlight--;
    this.bytes -= b.bytes;
    this.onRelease(b.chunks);
    this.unsettled.delete(b.id);
    this.onBytesChange();
    this.resolveWaiters();
    this.pump();
  }

  /**
   * A batch settled (written, or dead-lettered when `written` is false) during an outage. The outage
   * ends, and is logged, at a write that leaves no failed batch still retrying.
   */
  private noteOutcome(b: Batch, attempt: number, written: boolean): void {
    const o = this.outage;
    if (o === null) return;
    if (attempt > 1 || !written) {
      o.retrying--;
      if (written) {
        o.batchesRetried++;
        o.rowsRetried += b.rows;
      } else {
        o.rowsDeadLettered += b.rows;
      }
    }
    if (!written || o.retrying > 0) return;
    this.outage = null;
    this.log.info({
      outageMs: Date.now() - o.sinceMs,
      failedAttempts: o.failedAttempts,
      batchesRetried: o.batchesRetried,
      rowsRetried: o.rowsRetried,
      rowsDeadLettered: o.rowsDeadLettered,
    }, 'telemetry inserts recovered');
  }

  private async deadLetter(b: Batch): Promise<void> {
    const dir = this.opts.deadLetterDir;
    if (dir === undefined) return;
    const file = join(dir, `telemetry-${Date.now()}-${b.id}.rowbinary`);
    try {
      await mkdir(dir, { recursive: true });
      await writeFile(file, b.chunks);
      this.log.error({ file, rows: b.rows }, 'telemetry batch written to dead-letter file');
    } catch (e) {
      this.log.error({ err: e, file }, 'telemetry dead-letter write failed');
    }
  }

  private settledUpTo(upTo: number): boolean {
    for (const id of this.unsettled) if (id <= upTo) return false;
    return true;
  }

  private resolveWaiters(): void {
    if (this.waiters.length === 0) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (this.settledUpTo(w.upTo)) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }
}
