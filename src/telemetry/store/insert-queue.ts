/**
 * Coalesces decode-worker row buffers into large INSERTs (an insert's fixed cost on the server is
 * far above a row's, so rows are only worth sending by the tens of thousands: bench/notes/telemetry-ingest.md), makes each one durable in the disk spool
 * before it is sent, keeps a bounded number in flight, and replays the spool when the store fails.
 *
 * The path of a block (telemetry/README.md, "Write path and its bounds"):
 * 1. Cut (rows, bytes or age bound), then written to the spool (spool.ts), one block at a time in
 *    order. Once written its robots' durable points are reported (receipts to the robots).
 * 2. Inserted from memory (chdb: from the spool file itself), at most `maxInFlight` at once, with
 *    the block's spool name as its deduplication token. On success the durable points go to the
 *    spool's checkpoint, then the block's files are removed.
 * 3. A failed insert releases the block's memory: it waits in the spool's backlog, and so does every
 *    later block (order is kept). One replayer inserts the backlog oldest first, retrying after
 *    100 ms, 200 ms, ... up to `maxDelayMs`, for as long as the store is down: no row is given up
 *    and nobody replays by hand. When the backlog is empty, blocks go straight to the store again
 *    and one line (`telemetry inserts recovered`) gives the outage, attempts and rows replayed.
 * 4. Spool full (`spool.maxBytes`): blocks wait in memory for room, their bytes count in
 *    {@link queuedBytes}, and the ingest's high-water mark pauses the robots' telemetry reads (robots
 *    are slowed; agents keep unacknowledged batches, bounded, see docs/robot-link.md). Nothing is
 *    dropped by the gateway.
 * 5. A block the spool could not take (disk error) is inserted from memory and retried there, and its
 *    durable points are reported only after the store has it. Points are reported in cut order
 *    (receipts are cumulative per robot): later blocks' points wait for it.
 * Duplicates: a block sent again (retry after an ambiguous failure, replay after a crash) carries the
 * same token; what the store does with it is `store.dedup` (README, "Duplicates"). On a store that
 * does not deduplicate (18.16), a replayed block is first looked for (row-probe.ts).
 */
import type { Logger } from 'pino';
import { mergePoints, type DurablePoint } from './ack-tracker.js';
import type { SampleStore } from './sample-store.js';
import { probeQuery } from './row-probe.js';
import type { SpooledBlock, TelemetrySpool } from './spool.js';

/**
 * Default {@link InsertQueueOptions.maxBytes}: 48 MiB (about 230,000 of the simulator's rows). Why
 * this large: at peak a block is cut by its size several times a second, and every block is a part
 * the store merges again; at peak into a ClickHouse 18.16 server on the same 2 cores, 16 MiB blocks
 * cost the server more CPU per row and the robots were often paused, 48 MiB blocks never paused them
 * (bench/notes/telemetry-ingest.md, "Target 1 on the Intel machine"). At light load blocks are far
 * smaller (cut by their age).
 */
export const DEFAULT_INSERT_MAX_BYTES = 48 * 1024 * 1024;
/** Default {@link InsertQueueOptions.maxRows} (with the default bytes bound, that one binds first for typical rows). */
export const DEFAULT_INSERT_MAX_ROWS = 250_000;

/**
 * While small blocks may wait (`minRows`), a block is cut once one robot has this many batches since
 * the previous cut. Receipts wait for the block, and an agent keeps 4,096 unacknowledged batches by
 * default (src/agent/agent.ts): a lone robot sending many one-sample batches (few rows, so a "small"
 * block) must not outrun that bound while its block waits for more rows.
 */
export const MAX_ROBOT_BATCHES_PER_BLOCK = 1_024;

export interface InsertQueueOptions {
  /** Send when this many rows are pending. Default {@link DEFAULT_INSERT_MAX_ROWS}. */
  maxRows?: number;
  /** Send when this many bytes are pending. Default {@link DEFAULT_INSERT_MAX_BYTES}. */
  maxBytes?: number;
  /**
   * Send pending rows at the latest this long after the first one arrived. Default 1,000 ms (the
   * gateway sets it from FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS): fewer, larger inserts cost the store
   * less per row (fewer parts to write and merge). Live messages and snapshots do not wait for it
   * (they leave as soon as a batch is decoded); the robots' receipts and history rows do (a block is
   * spooled, so durable, when it is cut).
   */
  maxAgeMs?: number;
  /**
   * A block with fewer rows than this at `maxAgeMs` waits for more, up to `smallMaxAgeMs`. Default 0
   * (never waits; the gateway sets 20,000 from FLEETGW_TELEMETRY_INSERT_MIN_ROWS). Why: each insert is
   * a part, and a part's merge cost grows far slower than its rows (on chdb a 10,000-row part cost
   * 2.3x the merge CPU of a 1,000-row one: bench/notes/telemetry-ingest.md, "Merge selector base"), so a light load gets
   * fewer, larger parts and a heavy one keeps `maxAgeMs`.
   */
  minRows?: number;
  /** How long a block under `minRows` may wait. Default and lower bound: `maxAgeMs`. */
  smallMaxAgeMs?: number;
  /** Inserts running at once. Default 2. */
  maxInFlight?: number;
  baseDelayMs?: number;
  maxDelayMs?: number;
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
  /** 1 for the first try of a block. */
  attempt: number;
}

export interface InsertQueueStats {
  rowsWritten: number;
  /** Always 0 since the spool (kept for the stats shape: rows are never given up). */
  rowsFailed: number;
  inserts: number;
  insertErrors: number;
  insertsInFlight: number;
  queuedBytes: number;
  /** Rows of blocks that went to the spool's backlog (a failed insert, or behind one). */
  rowsSpooled: number;
  /** Rows inserted from the backlog (after an outage or a restart). */
  rowsReplayed: number;
  /** Bytes of spool files on disk (blocks waiting for or in an insert, and the backlog). */
  spoolBytes: number;
  /** Blocks in the backlog. */
  spoolBacklog: number;
  /** Spool writes that failed (disk error): their blocks were inserted from memory. */
  spoolWriteErrors: number;
  /** Times a block waited because the spool was full. */
  spoolFullWaits: number;
  /** Replayed blocks found already stored (stores without insert deduplication: row-probe.ts). */
  replaysFoundStored: number;
}

const NO_POINTS: ReadonlyMap<string, DurablePoint> = new Map();

interface Block {
  id: number;
  /** Row chunks while held in memory; null once only the spool has them. */
  chunks: Uint8Array[] | null;
  bytes: number;
  rows: number;
  points: Map<string, DurablePoint>;
  spooled: SpooledBlock | null;
  /** Spooled, or stored from memory: its points may be reported once every earlier block's are. */
  durable: boolean;
}

/**
 * Says whether one robot has `limit` or more batches after its point in `first` (the point it had at
 * the previous cut; its batch `seq` counts up by one per batch within an epoch), recording robots
 * `first` does not know yet.
 */
function robotBatchesAtLeast(first: Map<string, DurablePoint>, points: ReadonlyMap<string, DurablePoint>, limit: number): boolean {
  let reached = false;
  for (const [id, p] of points) {
    const f = first.get(id);
    // A robot not seen since start or since a new epoch counts from here: at most one decode task
    // (its batches in this `points`) is not counted, once per robot and epoch.
    if (f === undefined || f.epoch !== p.epoch) first.set(id, p);
    else if (p.seq - f.seq >= limit) reached = true;
  }
  return reached;
}

/** Failed attempts since inserts last succeeded, reported when the backlog is drained. */
interface Outage {
  sinceMs: number;
  failedAttempts: number;
  rowsReplayed: number;
  blocksReplayed: number;
}

export class InsertQueue {
  private readonly maxRows: number;
  private readonly maxBytes: number;
  private readonly maxAgeMs: number;
  private readonly minRows: number;
  private readonly smallMaxAgeMs: number;
  private readonly maxInFlight: number;
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private pending: Block;
  /** Cut, waiting for the spool write (in order, one at a time). */
  private readonly toSpool: Block[] = [];
  private spoolWriting = false;
  /** Spooled (or unspoolable), waiting for a direct insert slot. */
  private readonly ready: Block[] = [];
  /** Spooled blocks whose insert failed or that arrived behind one, oldest first. */
  private readonly backlog: SpooledBlock[] = [];
  private replaying = false;
  private readonly unsettled = new Set<number>();
  /**
   * Cut blocks whose durable points are not reported yet, in cut order. Receipts are cumulative per
   * robot, so a block's points wait for every earlier block's: a block whose spool write failed is
   * only in memory until stored, and a later block of the same robot must not acknowledge it.
   * Durable neighbours are merged into one entry, so it holds at most about twice as many entries
   * as there are blocks not yet durable (those are bounded by the high-water mark).
   */
  private readonly unreported: Block[] = [];
  private waiters: { upTo: number; resolve: () => void }[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** The pending block is past `maxAgeMs` and waits only for `minRows` (or `smallMaxAgeMs`). */
  private agePassed = false;
  /**
   * Each robot's point at the last cut, kept only while small blocks may wait (the per-robot batch
   * bound, {@link MAX_ROBOT_BATCHES_PER_BLOCK}): one entry per robot seen, like the ack tracker's.
   */
  private readonly cutPoints: Map<string, DurablePoint> | null;
  private roomTimer: NodeJS.Timeout | null = null;
  private nextId = 1;
  private inFlight = 0;
  private bytes = 0;
  private closed = false;
  private stopping = false;
  /** Memory is short (the ingest paused the robots' reads): pending rows go as soon as the store is free, see {@link setUrgent}. */
  private urgent = false;
  private checkpointChain: Promise<void> = Promise.resolve();
  private readonly s = {
    rowsWritten: 0, inserts: 0, insertErrors: 0, rowsSpooled: 0, rowsReplayed: 0, spoolWriteErrors: 0, spoolFullWaits: 0,
    replaysFoundStored: 0,
  };
  private outage: Outage | null = null;
  private lastSpoolErrorLogMs = 0;
  private readonly now: () => number;

  constructor(
    private readonly store: SampleStore,
    private readonly log: Logger,
    private readonly spool: TelemetrySpool,
    private readonly opts: InsertQueueOptions = {},
    /** Called whenever {@link queuedBytes} changes (the ingest re-checks its water marks). */
    private readonly onBytesChange: () => void = () => {},
    /** Gets each block's row chunks once nothing reads them any more. */
    private readonly onRelease: (chunks: readonly Uint8Array[]) => void = () => {},
    /** Robots' batches up to these points are durable (spooled or stored). */
    private readonly onDurable: (points: ReadonlyMap<string, DurablePoint>) => void = () => {},
    /** Every robot's durable point, for the spool checkpoint. */
    private readonly durablePoints: () => ReadonlyMap<string, DurablePoint> = () => new Map(),
  ) {
    this.maxRows = opts.maxRows ?? DEFAULT_INSERT_MAX_ROWS;
    this.maxBytes = opts.maxBytes ?? DEFAULT_INSERT_MAX_BYTES;
    this.maxAgeMs = opts.maxAgeMs ?? 1_000;
    this.minRows = opts.minRows ?? 0;
    this.smallMaxAgeMs = Math.max(this.maxAgeMs, opts.smallMaxAgeMs ?? 0);
    this.cutPoints = this.minRows > 1 && this.smallMaxAgeMs > this.maxAgeMs ? new Map() : null;
    this.maxInFlight = opts.maxInFlight ?? 2;
    this.baseDelayMs = opts.baseDelayMs ?? 100;
    this.maxDelayMs = opts.maxDelayMs ?? 5_000;
    this.pending = this.newBlock();
    this.now = opts.now ?? (() => performance.now());
  }

  /** False while a block waits for room in a full spool (readiness: the store is then neither reachable nor spooling). */
  get spoolAccepting(): boolean {
    const next = this.toSpool[0];
    return next === undefined || this.spool.hasRoom(next.bytes);
  }

  /** Bytes held in memory: pending, waiting for the spool or a slot, and in flight. */
  get queuedBytes(): number {
    return this.bytes;
  }

  stats(): InsertQueueStats {
    return {
      ...this.s,
      rowsFailed: 0,
      insertsInFlight: this.inFlight,
      queuedBytes: this.bytes,
      spoolBytes: this.spool.bytes,
      spoolBacklog: this.backlog.length,
    };
  }

  /**
   * Blocks a previous process left in the spool (start-up): replayed before anything newer, with
   * their own tokens, so a block that was inserted just before the crash is not stored twice (on
   * stores that deduplicate: `store.dedup`).
   */
  recover(blocks: readonly SpooledBlock[]): void {
    if (blocks.length === 0) return;
    let rows = 0;
    for (const b of blocks) rows += b.rows;
    this.log.info({ blocks: blocks.length, rows }, 'telemetry spool: replaying blocks left by the previous run');
    this.outage = { sinceMs: Date.now(), failedAttempts: 0, rowsReplayed: 0, blocksReplayed: 0 };
    this.backlog.push(...blocks);
    this.replay();
  }

  /**
   * Takes ownership of `rows` (a transferred worker buffer; never mutated) and the durable points of
   * the batches they came from (reported once the block holding them is spooled, or stored when the
   * spool could not take it, and every earlier block's points are reported).
   */
  enqueue(rows: Uint8Array, rowCount: number, points: ReadonlyMap<string, DurablePoint> | null): void {
    if (this.closed) throw new Error('insert queue is closed');
    const b = this.pending;
    let manyBatches = false;
    if (points !== null) {
      mergePoints(b.points, points);
      if (this.cutPoints !== null) manyBatches = robotBatchesAtLeast(this.cutPoints, points, MAX_ROBOT_BATCHES_PER_BLOCK);
    }
    if (rowCount === 0) {
      // Nothing to store (every frame corrupt): still a point to acknowledge, with the next block.
      if (manyBatches) this.cut();
      else if (points !== null && b.rows === 0) {
        if (this.urgent) this.cut();
        else if (this.timer === null) this.armAge();
      }
      return;
    }
    b.chunks!.push(rows);
    b.bytes += rows.length;
    b.rows += rowCount;
    this.bytes += rows.length;
    if ((this.urgent && this.downstreamIdle()) || b.rows >= this.maxRows || b.bytes >= this.maxBytes || (this.agePassed && b.rows >= this.minRows) || manyBatches) this.cut();
    else if (this.timer === null) this.armAge();
    // Last: the ingest's gate may call setUrgent() from here.
    this.onBytesChange();
  }

  /**
   * While `on`, rows do not wait for `maxAgeMs`: they are cut into a block as soon as the spool writer
   * and an insert slot are free (or at the size bounds), and turning it on cuts the pending rows at
   * once. The ingest sets it while its high-water mark has paused the robots' reads: memory is short,
   * and rows waiting for a timer would keep the reads paused for that long.
   *
   * Why not a block per enqueue: the store is then the bottleneck (a paused gateway is one the store
   * does not keep up with), and a block per decoded batch made it slower still: small blocks cost a
   * ClickHouse server more CPU per row. Rows that arrive while both insert slots are busy join one block instead (group commit), so the
   * blocks grow with the store's delay, up to `maxBytes`/`maxRows` (bench/notes/telemetry-ingest.md,
   * "Target 1 on the Intel machine").
   */
  setUrgent(on: boolean): void {
    if (this.urgent === on) return;
    this.urgent = on;
    if (on && !this.closed) this.cut();
  }

  /** Resolves when every row enqueued so far is in the store or in the spool's backlog. */
  flush(): Promise<void> {
    this.cut();
    const upTo = this.nextId - 1;
    if (this.settledUpTo(upTo)) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ upTo, resolve }));
  }

  /**
   * Flushes, stops replaying (the backlog stays on disk for the next start), then refuses further
   * rows. Does not close the store (the ingest owns it).
   */
  async close(): Promise<void> {
    await this.flush();
    this.stopping = true;
    this.closed = true;
    if (this.roomTimer) clearTimeout(this.roomTimer);
    await this.checkpointChain;
  }

  private newBlock(): Block {
    return { id: 0, chunks: [], bytes: 0, rows: 0, points: new Map(), spooled: null, durable: false };
  }

  /** Starts the pending block's age: cut at `maxAgeMs`, or later while it is under `minRows`. */
  private armAge(): void {
    this.agePassed = false;
    this.timer = setTimeout(this.onAge, this.maxAgeMs);
  }

  private readonly onAge = (): void => {
    this.timer = null;
    // Only acknowledgements (rows 0): waiting would save no part, so they go at the age.
    const rows = this.pending.rows;
    if (rows === 0 || rows >= this.minRows || this.smallMaxAgeMs === this.maxAgeMs) {
      this.cut();
      return;
    }
    // A small block: the next enqueue that brings it to minRows cuts it, or this timer does.
    this.agePassed = true;
    this.timer = setTimeout(() => this.cut(), this.smallMaxAgeMs - this.maxAgeMs);
  };

  /** Moves the pending rows on to the spool writer. */
  private cut(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    this.agePassed = false;
    const b = this.pending;
    if (this.cutPoints !== null) mergePoints(this.cutPoints, b.points);
    if (b.rows > 0) {
      b.id = this.nextId++;
      this.unsettled.add(b.id);
      this.toSpool.push(b);
      this.unreported.push(b);
      this.pending = this.newBlock();
    } else if (b.points.size > 0) {
      // Only acknowledgements (corrupt frames, a lost task): durable as they are, reported after
      // the blocks ahead of them.
      const last = this.unreported.at(-1);
      if (last?.durable === true) {
        mergePoints(last.points, b.points);
        b.points = new Map();
      } else {
        b.durable = true;
        b.chunks = null;
        this.unreported.push(b);
        this.pending = this.newBlock();
      }
      this.reportDurable();
    }
    this.writeNext();
  }

  /** Marks a block durable and reports the points of every durable block at the head, in cut order. */
  private markDurable(b: Block): void {
    b.durable = true;
    const u = this.unreported;
    const i = u.indexOf(b);
    if (i > 0) {
      // Waiting behind a block that is not durable: merged with its durable neighbours (later
      // points into earlier maps, so a later epoch wins), which keeps the list short however long
      // the head waits.
      const next = u[i + 1];
      if (next?.durable === true) {
        mergePoints(b.points, next.points);
        u.splice(i + 1, 1);
      }
      const prev = u[i - 1]!;
      if (prev.durable) {
        mergePoints(prev.points, b.points);
        u.splice(i, 1);
      }
    }
    this.reportDurable();
  }

  private reportDurable(): void {
    while (this.unreported.length > 0 && this.unreported[0]!.durable) this.onDurable(this.unreported.shift()!.points);
  }

  /** Writes the oldest cut block to the spool (one at a time, so durable points advance in order). */
  private writeNext(): void {
    if (this.spoolWriting || this.toSpool.length === 0 || this.stopping) return;
    const b = this.toSpool[0]!;
    if (!this.spool.hasRoom(b.bytes)) {
      // Full: wait for the replayer to free room (checked again on every removal, and by a timer).
      this.s.spoolFullWaits++;
      this.roomTimer ??= setTimeout(() => {
        this.roomTimer = null;
        this.writeNext();
      }, 200);
      return;
    }
    this.spoolWriting = true;
    this.toSpool.shift();
    // Behind a block only memory holds (its spool write failed; not stored yet), this block's points
    // stay out of its spool file: restored after a crash they would cover the lost block's batches,
    // and the robot's resends of them would be refused as duplicates. Without them a crash costs
    // resent batches stored twice, never a loss.
    const head = this.unreported[0];
    const spoolPoints = head !== undefined && head !== b && !head.durable ? NO_POINTS : b.points;
    this.spool.write(b.chunks!, b.bytes, b.rows, spoolPoints).then(
      (spooled) => {
        b.spooled = spooled;
        this.markDurable(b);
        this.spoolWriting = false;
        if (this.backlog.length > 0 || this.replaying) this.toBacklog(b);
        else this.ready.push(b);
        this.pump();
        this.writeNext();
      },
      (e: unknown) => {
        this.s.spoolWriteErrors++;
        const t = Date.now();
        if (t - this.lastSpoolErrorLogMs >= 1_000) {
          this.lastSpoolErrorLogMs = t;
          this.log.error({ err: e, rows: b.rows }, 'telemetry spool write failed: the block is inserted from memory and acknowledged once stored');
        }
        this.spoolWriting = false;
        this.ready.push(b);
        this.pump();
        this.writeNext();
      },
    );
  }

  private pump(): void {
    while (this.inFlight < this.maxInFlight && this.ready.length > 0) {
      const b = this.ready.shift()!;
      this.inFlight++;
      void this.direct(b);
    }
    // Urgent rows that waited for the store to be free go now (see setUrgent).
    if (this.urgent && this.pending.rows > 0 && this.downstreamIdle() && !this.closed) this.cut();
  }

  /**
   * Nothing waits for the spool writer or an insert slot, a slot is free, and no backlog is being
   * replayed (blocks cut then go to the backlog, each a replayed insert of its own: urgent rows wait
   * for a size bound or the age instead): a block cut now goes straight on.
   */
  private downstreamIdle(): boolean {
    return !this.spoolWriting && this.toSpool.length === 0 && this.ready.length === 0 && this.inFlight < this.maxInFlight
      && this.backlog.length === 0 && !this.replaying;
  }

  /** One insert of a block held in memory; a spooled block that fails goes to the backlog. */
  private async direct(b: Block): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const ok = await this.attempt(b.spooled, b.chunks, b.bytes, b.rows, attempt);
      if (ok) {
        this.s.rowsWritten += b.rows;
        if (b.spooled) await this.retire(b.spooled);
        else this.markDurable(b);
        break;
      }
      if (b.spooled) {
        this.toBacklog(b);
        break;
      }
      // Not spooled (disk error): only memory holds it; retry here, its bytes keep counting.
      await sleep(this.delay(attempt));
    }
    this.inFlight--;
    if (b.chunks) this.release(b);
    this.unsettled.delete(b.id);
    this.resolveWaiters();
    this.pump();
  }

  /** Moves a spooled block to the backlog (kept in id order), frees its memory, starts the replayer. */
  private toBacklog(b: Block): void {
    const s = b.spooled!;
    let i = this.backlog.length;
    while (i > 0 && this.backlog[i - 1]!.name > s.name) i--;
    this.backlog.splice(i, 0, s);
    this.s.rowsSpooled += b.rows;
    if (b.chunks) this.release(b);
    this.unsettled.delete(b.id);
    this.resolveWaiters();
    this.replay();
  }

  private release(b: Block): void {
    const chunks = b.chunks!;
    b.chunks = null;
    this.bytes -= b.bytes;
    this.onRelease(chunks);
    this.onBytesChange();
  }

  /** Inserts the backlog oldest first, retrying each block until the store takes it. */
  private replay(): void {
    if (this.replaying || this.backlog.length === 0 || this.stopping) return;
    this.replaying = true;
    void (async () => {
      let attempt = 1;
      while (this.backlog.length > 0 && !this.stopping) {
        const s = this.backlog[0]!;
        const ok = await this.attempt(s, null, s.bytes, s.rows, attempt);
        if (!ok) {
          await sleep(this.delay(attempt));
          attempt++;
          continue;
        }
        attempt = 1;
        // By identity, not shift(): while this insert ran, an older block whose direct insert failed
        // may have been placed ahead of it (the backlog is kept in block order). Removing the head
        // would drop that block from the backlog and keep this one, whose files retire() deletes, to
        // be read again forever.
        const at = this.backlog.indexOf(s);
        if (at >= 0) this.backlog.splice(at, 1);
        this.s.rowsWritten += s.rows;
        this.s.rowsReplayed += s.rows;
        if (this.outage) {
          this.outage.rowsReplayed += s.rows;
          this.outage.blocksReplayed++;
        }
        await this.retire(s);
      }
      this.replaying = false;
      const o = this.outage;
      if (o !== null && this.backlog.length === 0) {
        this.outage = null;
        this.log.info({
          outageMs: Date.now() - o.sinceMs,
          failedAttempts: o.failedAttempts,
          blocksReplayed: o.blocksReplayed,
          rowsReplayed: o.rowsReplayed,
        }, 'telemetry inserts recovered: spool drained');
      }
      // Blocks spooled while the last replay finished went to ready or the backlog: nothing waits.
      this.writeNext();
    })();
  }

  /** One insert attempt (from memory, from the spool file, or reading it back); true on success. */
  private async attempt(spooled: SpooledBlock | null, chunks: readonly Uint8Array[] | null, bytes: number, rows: number, attempt: number): Promise<boolean> {
    const startedAt = this.now();
    try {
      const token = spooled?.name;
      if (spooled && this.store.insertFile !== null) await this.store.insertFile(spooled.rowsPath, rows, token);
      else if (chunks) await this.store.insert(chunks, bytes, rows, token);
      else {
        const data = await this.spool.read(spooled!);
        // A replay may follow a failure that came after the commit: on a store that would store it
        // twice, look for it first (row-probe.ts). The set-up runs first: before it `dedup` says
        // `none` on every server, and a probe on a server that deduplicates by token would skip a
        // block of which only one part (one daily partition of two) was stored.
        await this.store.ensureSetUp();
        if (!(this.store.dedup === 'none' && await this.alreadyStored(data))) await this.store.insert([data], bytes, rows, token);
      }
      this.s.inserts++;
      this.opts.onInsert?.({ ok: true, rows, bytes, durationMs: this.now() - startedAt, attempt });
      return true;
    } catch (e) {
      this.s.insertErrors++;
      this.opts.onInsert?.({ ok: false, rows, bytes, durationMs: this.now() - startedAt, attempt });
      this.outage ??= { sinceMs: Date.now(), failedAttempts: 0, rowsReplayed: 0, blocksReplayed: 0 };
      this.outage.failedAttempts++;
      // One line per failed attempt of the oldest block: at most one per retry delay.
      this.log.warn({ rows, attempt, backlog: this.backlog.length, spoolBytes: this.spool.bytes, error: e instanceof Error ? e.message : String(e) },
        'telemetry insert failed; the block waits in the disk spool and is retried');
      return false;
    }
  }

  private async alreadyStored(rows: Uint8Array): Promise<boolean> {
    const q = probeQuery(rows);
    if (q === null) return false;
    const found = Number((await this.store.queryText(q)).trim()) > 0;
    if (found) {
      this.s.replaysFoundStored++;
      this.log.info({ rows: rows.length }, 'telemetry spool: a replayed block was already in the store (its earlier insert committed before failing); not inserted again');
    }
    return found;
  }

  /** The store has the block: checkpoint the durable points, then remove its files. */
  private async retire(s: SpooledBlock): Promise<void> {
    this.checkpointChain = this.checkpointChain.then(() => this.spool.checkpoint(this.durablePoints())).catch((e: unknown) => {
      this.log.error({ err: e }, 'telemetry spool checkpoint failed');
    });
    await this.checkpointChain;
    await this.spool.remove(s);
    if (this.toSpool.length > 0) this.writeNext();
  }

  private delay(attempt: number): number {
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** (attempt - 1));
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

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
