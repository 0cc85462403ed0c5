/**
 * The telemetry ingest (main thread): raw TelemetryBatch bytes in, rows in ClickHouse/chdb, latest
 * snapshots in LMDB, live messages out to stream subscribers. Frames are packed into transferable
 * buffers and decoded by the piscina pool; a frame of a fleet with live subscribers is also decoded
 * here as it arrives (live-decoder.ts) and published at once, so the live stream never waits for the
 * store's batching.
 *
 * Bounds and policy (docs/telemetry-stream.md and telemetry/README.md repeat them):
 * - A batch is posted when it holds `maxBatchFrames` frames or `maxBatchBytes` bytes, or when its
 *   first frame is `storeBatchAgeMs` old (only the store and the snapshots wait for it: live messages
 *   leave at push(), and fewer, larger tasks cost less).
 * - A batch cut by its age or a flush (light load), of at most `inlineDecodeMaxBytes`, with no
 *   Foxglove subscriber and a learned decode time within 1 ms, is decoded on the main thread
 *   (inline-decode.ts: cheaper than a thread hop). So is a batch cut when it reaches what one such
 *   decode may take (medium load), while no batch waits for the pool and inline decodes have used
 *   less than 5% of the current one-second window; every other batch goes to the pool.
 * - At most `maxTasksInFlight` batches are in the pool; further full batches wait in order.
 * - Queued bytes = batch being filled + waiting batches + batches in the pool + decoded rows parked
 *   until an earlier batch's result arrives + rows waiting for or in an insert. At `highWaterBytes`
 *   the backpressure callbacks get `true` (the gateway pauses robot reads: robots are slowed, nothing
 *   is dropped); under `lowWaterBytes` they get `false`.
 *   What robots already had in flight when paused is still accepted, so memory can exceed the high
 *   mark by roughly one HTTP/2 window per robot stream; that is the hard bound's slack.
 * - Results are applied in posting order (a small reorder map, at most `maxTasksInFlight` entries),
 *   so snapshots and acknowledgements follow arrival order.
 */
import { join } from 'node:path';
import { pino, type Logger } from 'pino';
import { type DecodePool, type DecoderKind, type DecodeResult, type PackedBatch, type PackerRobot, chooseDecoder, createDecodePool, FramePacker, FRAME_HEADER_BYTES, type TaskSlots } from '../decode/index.js';
import { AckTracker, mergePoints, type DurablePoint, type RobotAcks, InsertQueue, DEFAULT_INSERT_MAX_BYTES, RowArena, TelemetrySpool, type SampleStore, type SpoolRecovery, type StoreKind } from '../store/index.js';
import { WatermarkGate } from './backpressure.js';
import { BatchSeqReader } from './batch-seq.js';
import { BoundReport } from './bound-report.js';
import type { TelemetryIngest, TelemetryIngestOptions, TelemetryIngestStats } from './contract.js';
import { newIngestCounters, type IngestCounters } from './counters.js';
import { foxgloveMask } from './foxglove-mask.js';
import { DEFAULT_INLINE_DECODE_MAX_BYTES, InlineDecode } from './inline-decode.js';
import { LivePublisher } from './live-publisher.js';
import { createTaskSlots, DEFAULT_HIGH_WATER_BYTES, DEFAULT_MAX_BATCH_BYTES, ROW_ARENA_BUFFER_BYTES, rowArenaMaxSpares, rowArenaSpares } from './memory-budget.js';
import { openSampleStore, reportStoreSetUp } from './open-store.js';
import { ResultApplier } from './result-applier.js';
import { ResultOrder } from './result-order.js';
import { SnapshotWriter } from './snapshot-writer.js';

export type { TelemetryIngest, TelemetryIngestOptions, TelemetryIngestStats } from './contract.js';

/**
 * What push() keeps per robot, so a frame costs one Map lookup: its acknowledgement state, its index
 * in the batch being filled, and its durable point in that batch. One entry per robot that sent
 * telemetry to this process: bounded by the registered robots, like the AckTracker's.
 */
interface IngestRobot extends PackerRobot {
  acks: RobotAcks;
  /** The durable point of this robot in the batch being filled, valid while `pointGen` is the packer's generation. */
  point: DurablePoint | null;
  pointGen: number;
}

interface Waiting {
  seq: number;
  batch: PackedBatch;
  /** May be decoded on the main thread (cut by its age, a flush or the inline cut size): post() decides, by the Foxglove mask and the 5% share. */
  inline: boolean;
  /** Per robot, the last sequenced batch in this task (null: none). */
  points: Map<string, DurablePoint> | null;
}

/**
 * Opens the store (chdb unless `clickhouseUrl`), starts the decode pool, returns the ingest.
 * Call from the process main thread (chdb).
 */
export async function createTelemetryIngest(opts: TelemetryIngestOptions): Promise<TelemetryIngest> {
  const ownsStore = opts.sampleStore === undefined;
  const sampleStore = opts.sampleStore ?? await openSampleStore(opts);
  reportStoreSetUp(opts.log, sampleStore);
  const maxTasks = opts.maxTasksInFlight ?? 4;
  const slots = createTaskSlots(maxTasks, opts.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES);
  let pool: DecodePool;
  let spool: { spool: TelemetrySpool; recovery: SpoolRecovery };
  try {
    spool = await TelemetrySpool.open(join(opts.dataDir, 'telemetry-spool'), opts.spoolMaxBytes ?? 1024 * 1024 * 1024);
    pool = createDecodePool({ maxTasks, slots: slots.forWorkers, ...(opts.threads !== undefined ? { threads: opts.threads } : {}) });
  } catch (e) {
    if (ownsStore) await sampleStore.close();
    throw e;
  }
  return new Ingest(opts, sampleStore, ownsStore, pool, maxTasks, spool.spool, spool.recovery, slots);
}

class Ingest implements TelemetryIngest {
  readonly storeKind: StoreKind;
  readonly decoder: DecoderKind;
  readonly decoderStatus: string;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly maxBatchFrames: number;
  private readonly maxBatchBytes: number;
  private readonly maxBatchAgeMs: number;
  private readonly storeBatchAgeMs: number;
  private readonly packer: FramePacker;
  private readonly gate: WatermarkGate;
  private readonly inserts: InsertQueue;
  private readonly snapshots: SnapshotWriter;
  private readonly waiting: Waiting[] = [];
  /** Finished tasks waiting for earlier ones: results are applied in posting order. */
  private readonly order = new ResultOrder();
  private ageTimer: NodeJS.Timeout | null = null;
  private readonly inline: InlineDecode;
  /** post() is running: an inline result settles synchronously and must not re-enter it. */
  private posting = false;
  private seq = 0;
  private waitingBytes = 0;
  private inFlight = 0;
  private inFlightBytes = 0;
  private closing = false;
  private closed: Promise<void> | null = null;
  private readonly bounds: BoundReport;
  /** Rows copied out of the task slots, held until their insert is done. */
  private readonly rowArena: RowArena;
  /** Gives row buffers an idle gateway no longer needs back to the GC (RowArena.trim). */
  private readonly arenaTrimTimer: NodeJS.Timeout;
  /** Row buffers allocated at once at peak load (rowArenaSpares()). */
  private readonly rowArenaSpares: number;
  /** setPeakLoad(): spares are allocated at once and kept. */
  private peakLoad = false;
  private readonly s: IngestCounters = newIngestCounters();
  private readonly live: LivePublisher;
  private readonly results: ResultApplier;
  private readonly seqReader = new BatchSeqReader();
  private readonly acks = new AckTracker();
  private readonly robots = new Map<string, IngestRobot>();
  /** Durable points of the batch being filled (moved to its Waiting entry at cut()). */
  private points: Map<string, DurablePoint> | null = null;

  constructor(
    private readonly opts: TelemetryIngestOptions,
    readonly sampleStore: SampleStore,
    private readonly ownsStore: boolean,
    private readonly pool: DecodePool,
    private readonly maxTasks: number,
    spool: TelemetrySpool,
    recovery: SpoolRecovery,
    private readonly slots: TaskSlots,
  ) {
    // Slots are the rule; a private buffer (no slot free) starts small and sizes itself like the
    // previous batch.
    this.packer = new FramePacker(32 * 1024, slots);
    this.storeKind = sampleStore.kind;
    this.log = opts.log ?? pino({ enabled: false });
    // Reported, and run here for small batches (inline-decode.ts); the workers get this thread's decoder setting (decode/decode-pool.ts).
    const decoder = chooseDecoder();
    this.decoder = decoder.kind;
    this.decoderStatus = decoder.nativeStatus;
    if (decoder.kind !== 'native') this.log.warn({ reason: decoder.nativeStatus }, 'telemetry decoder addon not used, the JavaScript reader runs');
    this.now = opts.now ?? Date.now;
    this.bounds = new BoundReport(this.log, this.now);
    this.live = new LivePublisher(this.s, this.log, this.now);
    this.maxBatchFrames = opts.maxBatchFrames ?? 2_000;
    this.maxBatchBytes = opts.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES;
    this.maxBatchAgeMs = opts.maxBatchAgeMs ?? 20;
    this.storeBatchAgeMs = Math.max(this.maxBatchAgeMs, opts.storeBatchAgeMs ?? 250);
    this.inline = new InlineDecode(slots, { maxBytes: opts.inlineDecodeMaxBytes ?? DEFAULT_INLINE_DECODE_MAX_BYTES, budgetMs: opts.inlineDecodeBudgetMs, decoder });
    const highWaterBytes = opts.highWaterBytes ?? DEFAULT_HIGH_WATER_BYTES;
    this.gate = new WatermarkGate(highWaterBytes, opts.lowWaterBytes ?? Math.floor(highWaterBytes / 4));
    this.rowArenaSpares = rowArenaSpares(highWaterBytes);
    this.rowArena = new RowArena({ maxSpare: rowArenaMaxSpares(highWaterBytes), bufferBytes: ROW_ARENA_BUFFER_BYTES });
    this.arenaTrimTimer = setInterval(() => {
      if (!this.peakLoad) this.rowArena.trim();
    }, opts.rowArenaTrimMs ?? 10_000);
    this.arenaTrimTimer.unref();
    // What was durable before a restart: the checkpoint, then every block still in the spool.
    const restored = new Map(recovery.checkpoint);
    for (const b of recovery.blocks) mergePoints(restored, b.points);
    this.acks.restore(restored);
    if (recovery.removedPartial > 0) this.log.warn({ files: recovery.removedPartial }, 'telemetry spool: removed blocks whose write a crash cut short (never acknowledged to a robot)');
    this.inserts = new InsertQueue(
      sampleStore,
      this.log,
      spool,
      // Rows waiting for the insert age should not be what pauses the robots: a block is cut at a
      // quarter of the high-water mark (it may pass it by the one decoded batch that crossed it),
      // so a flow the store keeps up with normally stays under the mark.
      { ...opts.insert, maxBytes: Math.min(opts.insert?.maxBytes ?? DEFAULT_INSERT_MAX_BYTES, Math.max(64 * 1024, Math.floor(highWaterBytes / 4))) },
      () => this.gate.update(this.queueBytes()),
      (chunks) => this.rowArena.release(chunks),
      (points) => this.acks.markDurable(points),
      () => this.acks.snapshot(),
    );
    this.inserts.recover(recovery.blocks);
    // Paused: what is queued goes on towards the store at once, so the reads resume as soon as the
    // store has taken it (not when the next insert's or batch's timer fires). The open batch is cut
    // by a zero timer, never from inside the update that paused (it may run in settle()).
    this.gate.onChange((paused) => {
      this.inserts.setUrgent(paused);
      if (paused && this.ageTimer !== null) {
        clearTimeout(this.ageTimer);
        this.ageTimer = setTimeout(this.onAge, 0);
      }
    });
    this.snapshots = new SnapshotWriter(opts.store.snapshots, opts.store.writes, opts.snapshotIntervalMs ?? 1_000, opts.onSnapshot);
    this.results = new ResultApplier(this.s, slots, this.rowArena, this.inserts, this.snapshots, opts.foxglove, this.bounds, this.log, this.now);
  }

  push(robotId: string, fleetId: string, bytes: Uint8Array): void {
    if (this.closing) {
      this.s.framesRejected++;
      return;
    }
    this.pushFor(this.robots.get(robotId) ?? this.addRobot(robotId, fleetId), fleetId, bytes);
  }

  sinkFor(robotId: string, fleetId: string): (bytes: Uint8Array) => boolean {
    const robot = this.robots.get(robotId) ?? this.addRobot(robotId, fleetId);
    return (bytes) => this.pushFor(robot, fleetId, bytes);
  }

  private addRobot(robotId: string, fleetId: string): IngestRobot {
    const robot: IngestRobot = { robotId, fleetId, gen: -1, index: 0, acks: this.acks.entry(robotId), point: null, pointGen: -1 };
    this.robots.set(robotId, robot);
    return robot;
  }

  /** Returns whether the batch carries a `seq` (the robot link then does not look for it again). */
  private pushFor(robot: IngestRobot, fleetId: string, bytes: Uint8Array): boolean {
    if (this.closing) {
      this.s.framesRejected++;
      return false;
    }
    this.s.framesIn++;
    this.s.bytesIn += bytes.length;
    // The batch holds as much as one inline decode may take (inline-decode.ts): it is cut before this
    // frame joins it, and before this frame's durable point is recorded (a point travels with the
    // batch that holds its frame), so it is decoded here, not filled on into a full one for the pool.
    // Not when the batch is already past the cut (one frame larger than the cut: it fills on, into one
    // pool task, instead of one task per frame), nor while batches wait for the pool (they would pile
    // up as inline batches, all decoded in one turn when the pool answers).
    const cutAt = this.inline.cutBytes;
    const filled = this.packer.byteLength;
    if (this.packer.frameCount > 0 && filled <= cutAt && filled + FRAME_HEADER_BYTES + bytes.length > cutAt
      && this.waiting.length === 0 && this.inFlight < this.maxTasks && this.inline.hasRoom() && this.opts.foxglove?.anyWatched() !== true) {
      this.cut(true);
    }
    if (robot.fleetId !== fleetId) {
      // Moved to another fleet: its next rows carry the new fleet (a batch index of its own).
      robot.fleetId = fleetId;
      robot.gen = -1;
    }
    const robotId = robot.robotId;
    // Acknowledged delivery: a few byte reads per batch, never per sample.
    const r = this.seqReader;
    const sequenced = r.read(bytes);
    if (sequenced) {
      if (!this.acks.admitEntry(robot.acks, robotId, r.epoch, r.seq)) return true;
      this.s.sequencedBatches++;
      const gen = this.packer.generation;
      if (robot.point !== null && robot.pointGen === gen) {
        robot.point.epoch = r.epoch;
        robot.point.seq = r.seq;
      } else {
        robot.point = { epoch: r.epoch, seq: r.seq };
        robot.pointGen = gen;
        (this.points ??= new Map<string, DurablePoint>()).set(robotId, robot.point);
      }
    }
    const receivedAtMs = this.now();
    this.packer.addFor(robot, bytes, receivedAtMs);
    if (this.packer.frameCount >= this.maxBatchFrames || this.packer.byteLength >= this.maxBatchBytes) {
      this.cut(false);
    } else if (this.ageTimer === null) {
      // Live samples are published at push(); Foxglove frames come from the decode workers, so a watched
      // Foxglove channel keeps the short batch age.
      // While reads are paused, frames read before the pause took effect do not wait 250 ms either.
      const fast = this.opts.foxglove?.anyWatched() === true || this.gate.isPaused;
      this.ageTimer = setTimeout(this.onAge, fast ? this.maxBatchAgeMs : this.storeBatchAgeMs);
    }
    this.gate.update(this.queueBytes());
    const live = this.opts.live;
    if (live?.hasSubscribers(fleetId) === true) this.live.publish(live, robotId, fleetId, bytes, receivedAtMs);
    return sequenced;
  }

  onBackpressure(cb: (paused: boolean) => void): void {
    this.gate.onChange(cb);
  }

  onDurable(cb: (robotId: string, epoch: number, seq: number) => void): void {
    this.acks.onDurable(cb);
  }

  durableOf(robotId: string): DurablePoint | undefined {
    return this.acks.durableOf(robotId);
  }

  spoolAccepting(): boolean {
    return this.inserts.spoolAccepting;
  }

  setPeakLoad(peak: boolean): void {
    this.peakLoad = peak;
    if (peak) this.rowArena.prefill(this.rowArenaSpares);
  }

  async flush(): Promise<void> {
    this.cut(true);
    const upTo = this.seq;
    if (this.order.delivered < upTo) await this.order.drained(upTo);
    await this.inserts.flush();
    await this.snapshots.flushed();
  }

  close(): Promise<void> {
    this.closed ??= (async () => {
      this.closing = true;
      clearInterval(this.arenaTrimTimer);
      await this.flush();
      await this.pool.close();
      this.packer.dispose();
      await this.inserts.close();
      if (this.ownsStore) await this.sampleStore.close();
    })();
    return this.closed;
  }

  stats(): TelemetryIngestStats {
    const q = this.inserts.stats();
    return {
      ...this.s,
      rowsWritten: q.rowsWritten,
      rowsFailed: q.rowsFailed,
      rowsSpooled: q.rowsSpooled,
      rowsReplayed: q.rowsReplayed,
      spoolBytes: q.spoolBytes,
      spoolBacklog: q.spoolBacklog,
      spoolFullWaits: q.spoolFullWaits,
      spoolWriteErrors: q.spoolWriteErrors,
      replaysFoundStored: q.replaysFoundStored,
      duplicateBatches: this.acks.duplicateBatches,
      tasksInFlight: this.inFlight,
      queueBytes: this.queueBytes(),
      inserts: q.inserts,
      insertsInFlight: q.insertsInFlight,
      insertErrors: q.insertErrors,
      snapshotsWritten: this.snapshots.written,
      paused: this.gate.isPaused,
      taskSlotsInUse: this.slots.size - this.slots.freeCount,
      rowArenaBuffers: this.rowArena.buffers,
      rowArenaAllocated: this.rowArena.allocated,
      decodeThreadIds: [...this.results.decodeThreadIds],
      boundedValues: [...this.bounds.totals],
      inlineDecodeNsPerByte: this.inline.estimateNsPerByte,
    };
  }

  private queueBytes(): number {
    return this.packer.byteLength + this.waitingBytes + this.inFlightBytes + this.order.parkedBytes + this.inserts.queuedBytes;
  }

  /**
   * The age timer fired: it is done, so cut() need not clear it (clearTimeout of the fired timer showed
   * in a perf profile at 100 robots: bench/notes/telemetry-ingest.md, "Fixed costs at light load").
   */
  private readonly onAge = (): void => {
    this.ageTimer = null;
    this.cut(true);
  };

  /**
   * Closes the batch being filled (if any) and posts what the in-flight bound allows. `small`: the
   * batch was not filled (its age timer, flush(), or the inline decode's size), so it may be decoded here.
   */
  private cut(small: boolean): void {
    if (this.ageTimer) {
      clearTimeout(this.ageTimer);
      this.ageTimer = null;
    }
    if (this.packer.frameCount > 0) {
      const batch = this.packer.take();
      const inline = small && this.inline.accepts(batch);
      this.waiting.push({ seq: ++this.seq, batch, inline, points: this.points });
      this.points = null;
      this.waitingBytes += batch.byteLength;
    }
    this.post();
  }

  private post(): void {
    // An inline result settles (and so calls post()) before its turn of this loop ends.
    if (this.posting) return;
    this.posting = true;
    try {
      while (this.inFlight < this.maxTasks && this.waiting.length > 0) {
        const { seq, batch, inline, points } = this.waiting.shift()!;
        this.waitingBytes -= batch.byteLength;
        this.inFlightBytes += batch.byteLength;
        this.inFlight++;
        const foxglove = foxgloveMask(this.opts.foxglove, batch.robotIds);
        const bytes = batch.byteLength;
        const robotIds = batch.robotIds;
        // Foxglove frames cost several times the decode (docs/foxglove.md): a watched batch stays
        // off the event loop. The share is asked again: a batch that waited behind a full pool may
        // find this second's share used up.
        if (inline && foxglove === null && this.inline.hasRoom()) {
          this.s.batchesInline++;
          this.settleInline(seq, batch, points);
          continue;
        }
        this.s.batches++;
        // Before batch.slot is read below: a batch packed while every slot was busy takes one freed since.
        this.packer.toSlot(batch);
        const slot = batch.slot;
        if (slot === -1) this.s.batchesWithoutSlot++;
        const frames = batch.frameCount;
        this.pool
          // Workers write rows and snapshots (and Foxglove frames): live messages were published at push().
          .run({ live: null, ...(foxglove ? { foxglove } : {}), ...batch })
          .then(
            (r) => this.settle(seq, bytes, r, robotIds, points, slot),
            (e: unknown) => {
              // Only a crashed worker gets here (bad input is answered, not thrown).
              this.decodeFailed(e, frames);
              this.settle(seq, bytes, null, robotIds, points, slot);
            },
          );
      }
    } finally {
      this.posting = false;
    }
  }

  /**
   * Decodes a small batch here and settles it like a pool task's answer (parked behind earlier
   * tasks). A throw from the decoder is handled as a crashed worker is. A throw while applying the
   * result is a bug: it ends the process (serve.ts), as it did when every result arrived in a promise
   * callback, instead of reaching whoever called push() (the robot link would log it as its own).
   */
  private settleInline(seq: number, batch: PackedBatch, points: Map<string, DurablePoint> | null): void {
    let result: DecodeResult | null = null;
    try {
      // Rows straight into the row arena: no copy out of the slot at apply().
      result = this.inline.decode(batch, null, this.rowArena);
    } catch (e) {
      this.decodeFailed(e, batch.frameCount);
    }
    try {
      this.settle(seq, batch.byteLength, result, batch.robotIds, points, batch.slot);
    } catch (e) {
      queueMicrotask(() => {
        throw e;
      });
    }
  }

  /** A task whose frames are gone (its slot is released in order at settle): a bug to fix, not a policy, so counted and logged. */
  private decodeFailed(e: unknown, frames: number): void {
    this.s.workerErrors++;
    this.s.framesLost += frames;
    this.log.error({ err: e, frames }, 'telemetry decode task failed');
  }

  /** Records a finished task and applies every result that is next in posting order. */
  private settle(seq: number, bytes: number, result: DecodeResult | null, robotIds: string[], points: Map<string, DurablePoint> | null, slot: number): void {
    if (result?.spare) this.packer.recycle(result.spare);
    this.inFlight--;
    this.inFlightBytes -= bytes;
    this.order.park(seq, { r: result, robotIds, points, slot });
    for (let f = this.order.next(); f !== undefined; f = this.order.next()) {
      const { r, robotIds: ids, points: pts, slot: s } = f;
      if (r) this.results.apply(r, ids, pts, s);
      // The rows are copied out (or the task was lost): the slot takes the next batch.
      if (s !== -1) this.slots.release(s);
      if (r === null && pts !== null) {
        // A lost task's frames are counted in framesLost; acknowledging them keeps the robot's
        // receipts moving (resending them would not help: the loss was the gateway's).
        this.inserts.enqueue(new Uint8Array(0), 0, pts);
      }
    }
    this.post();
    this.gate.update(this.queueBytes());
    this.order.wakeDrained();
  }
}
