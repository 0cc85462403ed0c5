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
import type { Store } from '../store/lmdb.js';
import { AckTracker, mergePoints, type DurablePoint, type RobotAcks } from './ack-tracker.js';
import { BatchSeqReader } from './batch-seq.js';
import { WatermarkGate } from './backpressure.js';
import { openChdbStore } from './chdb-store.js';
import { openClickHouseClusterStore } from './clickhouse-cluster-store.js';
import { openClickHouseStore, type ClickHouseSampleStore } from './clickhouse-store.js';
import { createDecodePool, type DecodePool } from './decode-pool.js';
import { chooseDecoder, type DecoderKind } from './decode/select.js';
import { FramePacker, type PackedBatch, type PackerRobot } from './frame-packer.js';
import { DEFAULT_INLINE_DECODE_MAX_BYTES, InlineDecode } from './inline-decode.js';
import { DEFAULT_INSERT_MAX_BYTES, InsertQueue, type InsertQueueOptions } from './insert-queue.js';
import type { FoxgloveSink, LiveSink } from './live-sink.js';
import { LiveDecoder } from './live-decoder.js';
import { pino, type Logger } from 'pino';
import type { SampleStore, StoreKind } from './sample-store.js';
import { RowArena } from './row-arena.js';
import { SnapshotWriter } from './snapshot-writer.js';
import { TaskSlots } from './task-slots.js';
import { BoundReport } from './bound-report.js';
import { TelemetrySpool, type SpoolRecovery } from './spool.js';
import { FRAME_HEADER_BYTES, type DecodeResult } from './worker-protocol.js';

/**
 * Default {@link TelemetryIngestOptions.highWaterBytes}: 256 MiB. Above the steady queue at peak: at
 * 400,000 samples/s a 48 MiB insert block pending, one being spooled and two in the store's inserts
 * are ~190 MiB of rows (plus batches being filled and decoded), so a store that keeps up normally does
 * not pause the robots: the margin is ~60 MiB, under a second of rows at that rate. With 64 MiB and
 * 16 MiB blocks it did, and the smaller blocks kept the store from catching up (bench/README.md,
 * stop 29). Memory at that peak: 407-528 MiB RSS.
 */
export const DEFAULT_HIGH_WATER_BYTES = 256 * 1024 * 1024;

/** Size of one row buffer (row-arena.ts). */
const ROW_ARENA_BUFFER_BYTES = 4 * 1024 * 1024;
/**
 * Row buffers allocated at once at peak load: what the high-water mark lets wait (256 MiB, the
 * default: 64), at least 4, at most 64 (setPeakLoad, RowArena.prefill).
 */
const MAX_ROW_ARENA_PREFILL = 64;
/** Most empty row buffers kept, whatever the high-water mark (rowArenaMaxSpares). */
const MAX_ROW_ARENA_SPARES = 96;

/**
 * Row buffers the arena allocates at once at peak load for a high-water mark: what that mark lets
 * wait, in buffers (at least 4, at most {@link MAX_ROW_ARENA_PREFILL}). Two 48 MiB inserts finishing
 * together free 24 buffers, which the next blocks' rows take.
 */
export function rowArenaSpares(highWaterBytes: number): number {
  return Math.min(MAX_ROW_ARENA_PREFILL, Math.max(4, Math.ceil(highWaterBytes / ROW_ARENA_BUFFER_BYTES)));
}

/**
 * Most empty row buffers the arena keeps for a high-water mark: 1.5x what the mark lets wait (96 at
 * the 256 MiB default), at least 4. Why past the mark: the rows held overshoot it (what robots had in
 * flight when paused, rows of tasks in the pool: 79-81 buffers in use at the 256 MiB mark, 38 at 100
 * MiB), and every buffer in use past the spares bound was dropped when its insert finished and
 * allocated again at the next burst. When the store fell behind that was 160 buffers (640 MiB) in
 * 45 s at the 100 MiB mark, old-generation garbage that started a full GC every 1-2 s (bench/README.md,
 * stop 33). The arena never keeps more buffers than were in use at once, and gives back those nobody
 * took for 10-20 s below peak load (RowArena.trim). At most 96 (384 MiB), whatever the mark.
 */
export function rowArenaMaxSpares(highWaterBytes: number): number {
  return Math.min(MAX_ROW_ARENA_SPARES, Math.max(4, Math.ceil((highWaterBytes * 1.5) / ROW_ARENA_BUFFER_BYTES)));
}

export interface TelemetryIngestOptions {
  /** LMDB store; snapshots go to `store.snapshots`. */
  store: Store;
  /** Gateway data dir: chdb lives in `<dataDir>/chdb`, the disk spool in `<dataDir>/telemetry-spool`. */
  dataDir: string;
  /**
   * Bound of the disk spool (rows files): blocks waiting for or in an insert, and the backlog of a
   * store outage. When full the robots are slowed by backpressure. Default 1 GiB.
   */
  spoolMaxBytes?: number;
  /** When set, rows go to this ClickHouse server instead of the embedded chdb. */
  clickhouseUrl?: string;
  clickhouseDatabase?: string;
  /**
   * With `clickhouseUrl`: write to this ClickHouse cluster's shards (docs/scale-out.md); the URL
   * then names the database and the shard reads go to first.
   */
  clickhouseCluster?: { name: string; shardUrls: string[] };
  /** ClickHouse user and password (read from a file or the environment by the CLI; never logged). */
  clickhouseAuth?: { username?: string; password?: string };
  /** How inserts into a single ClickHouse server are encoded (native-insert.ts). Default `auto`. */
  clickhouseInsertFormat?: 'auto' | 'native' | 'rowbinary';
  /** TTL of rows on modern engines (chdb, ClickHouse 21+). Default 90 days. */
  retentionDays?: number;
  /** Live stream hub; without it no live JSON is produced. */
  live?: LiveSink;
  /** Foxglove endpoint; without it (or while nobody subscribes there) no Foxglove frames are produced. */
  foxglove?: FoxgloveSink;
  log?: Logger;
  /** Decode threads. Default: cores - 1, at least 1. */
  threads?: number;
  /** Default 2,000 frames. */
  maxBatchFrames?: number;
  /** Default 1 MiB. */
  maxBatchBytes?: number;
  /**
   * Batch age while a Foxglove channel is subscribed (its frames come from the decode workers) or
   * while reads are paused (memory is short), and the lower bound of `storeBatchAgeMs`; live stream
   * messages leave at push() and never wait for a batch. Default 20 ms.
   */
  maxBatchAgeMs?: number;
  /**
   * Batch age: rows and snapshots wait at most this long for a fuller batch. Default 250 ms. Rows then
   * wait for the insert (`maxAgeMs`: 1 s by default, FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS in the gateway;
   * the gateway lets a block under 20,000 rows wait up to 5 s: `minRows`, `smallMaxAgeMs`)
   * and snapshots for the snapshot writer (1 s) anyway, so with the defaults stored rows, snapshots,
   * receipts to the robots and alerts (docs/alerts.md) come at most 150 ms later than with 100 ms
   * (about 1.25 s instead of 1.1 s after the sample; at light load, when small blocks wait up to 5 s,
   * stored rows and receipts about 5.25 s); the live stream does not wait for it.
   * At 100 robots x 10 Hz four cuts a second instead of ten took ~5-9% off the main thread's CPU
   * (bench/README.md, "Batch age and inline cuts").
   */
  storeBatchAgeMs?: number;
  /** Default 4 (two per thread on a 2-core machine keeps a worker busy while results travel). */
  maxTasksInFlight?: number;
  /**
   * A batch cut by its age, a flush or the inline cut size (not full), of at most this many bytes,
   * with no Foxglove subscriber, a decode time (learned per byte) within 1 ms and room in the 5% share
   * of the event loop, is decoded on the main thread instead of in the pool (inline-decode.ts).
   * Default 256 KiB; 0: every batch goes to the pool.
   */
  inlineDecodeMaxBytes?: number;
  /** Time one decode on the main thread may take, by the learned cost per byte (inline-decode.ts). Default 1 ms. */
  inlineDecodeBudgetMs?: number;
  /** Default {@link DEFAULT_HIGH_WATER_BYTES} (256 MiB). */
  highWaterBytes?: number;
  /** Default a quarter of the high-water mark (64 MiB with its default). */
  lowWaterBytes?: number;
  /** How often row buffers unused since the last time are given back below peak load (RowArena.trim). Default 10,000 ms. */
  rowArenaTrimMs?: number;
  /** A robot's snapshot is written to LMDB at most this often (the newest sample of the interval). Default 1,000 ms. */
  snapshotIntervalMs?: number;
  /**
   * Told of each snapshot as it is written (at most once per `snapshotIntervalMs` per robot; the
   * bytes are a reused buffer, read before returning): the alerts' e-stop and battery check.
   */
  onSnapshot?: (robotId: string, value: Uint8Array) => void;
  /** Insert coalescing and retry. `maxBytes` is capped at a quarter of `highWaterBytes` (at least 64 KiB). */
  insert?: InsertQueueOptions;
  /** Use this store instead of opening chdb/ClickHouse (the caller keeps ownership: close() leaves it open). */
  sampleStore?: SampleStore;
  now?: () => number;
}

export interface TelemetryIngestStats {
  framesIn: number;
  bytesIn: number;
  /** Samples decoded from valid frames (each becomes one row). */
  samplesIn: number;
  rowsWritten: number;
  /** Rows given up (always 0: failed inserts wait in the disk spool; kept for the stats shape). */
  rowsFailed: number;
  /** Rows that went to the spool's backlog (their insert failed, or waited behind one that did). */
  rowsSpooled: number;
  /** Rows inserted from the spool's backlog (after an outage, or left by the previous run). */
  rowsReplayed: number;
  /** Bytes of spool files on disk. */
  spoolBytes: number;
  /** Blocks in the spool's backlog. */
  spoolBacklog: number;
  /** Times a block waited for room in a full spool (robots are then slowed by backpressure). */
  spoolFullWaits: number;
  /** Spool writes that failed (disk error). */
  spoolWriteErrors: number;
  /** Replayed blocks found already stored (a store without insert deduplication; row-probe.ts). */
  replaysFoundStored: number;
  /** Sequenced batches dropped because the gateway already held them (resends after a reconnect). */
  duplicateBatches: number;
  /** Sequenced batches received (each acknowledged to its robot once durable). */
  sequencedBatches: number;
  /** Tasks posted to the decode pool. */
  batches: number;
  /** Small batches cut by their age (or a flush) and decoded on the main thread (inline-decode.ts). */
  batchesInline: number;
  /**
   * Of `batches`, those posted without a shared task slot (every slot was busy): their frames and
   * rows cross to and from the worker in buffers of their own, a cost the slots avoid.
   */
  batchesWithoutSlot: number;
  /** The main thread's learned decode time per frames byte, in ns (what bounds an inline decode). */
  inlineDecodeNsPerByte: number;
  tasksInFlight: number;
  queueBytes: number;
  inserts: number;
  insertsInFlight: number;
  insertErrors: number;
  corruptFrames: number;
  /** Robot strings cut to their bound (sample-table.ts `bound`), by reason (BOUND_REASONS order). */
  boundedValues: number[];
  /** Tasks lost to a crashed worker thread or a decoder that threw (a bug; their frames are counted in `framesLost`). */
  workerErrors: number;
  framesLost: number;
  /** Frames pushed after close() began (the robot link should be stopped first). */
  framesRejected: number;
  snapshotsWritten: number;
  liveMessages: number;
  /** Frames whose live decode or publish threw (a bug; their rows are stored all the same). */
  liveErrors: number;
  paused: boolean;
  /** Shared task slots held now: by the batch being filled, batches waiting for the pool, tasks in it, results not yet applied. */
  taskSlotsInUse: number;
  /** Buffers the decoded rows wait in (row-arena.ts: in use and spare, 4 MiB each). */
  rowArenaBuffers: number;
  /** Row buffers allocated since start: flat under a steady load (each one is garbage for V8 to collect later). */
  rowArenaAllocated: number;
  /** Linux thread ids of the decode workers seen so far (at most 64): CPU per thread from /proc. */
  decodeThreadIds: number[];
}

export interface TelemetryIngest {
  readonly storeKind: StoreKind;
  /** The decoder the workers run: the C++ addon, or the JS reader when it is not built or is disabled. */
  readonly decoder: DecoderKind;
  /** Why the addon is not used ('loaded' when it is). */
  readonly decoderStatus: string;
  /** Takes a robot's raw TelemetryBatch bytes; copies them (a view into a gRPC buffer is fine). */
  push(robotId: string, fleetId: string, bytes: Uint8Array): void;
  /**
   * push() bound to one robot and fleet, for its telemetry stream: the same effect per batch without
   * the lookup by robot id (a hash lookup over every robot that sent telemetry, 3% of the main thread
   * at 1,000 robots x 10 Hz: bench/README.md). The sink returns whether the batch carries a `seq`:
   * the robot link learns it from there instead of walking the batch a second time.
   */
  sinkFor(robotId: string, fleetId: string): (bytes: Uint8Array) => boolean;
  /** `true` at the high-water mark (pause robot reads), `false` under the low-water mark. */
  onBackpressure(cb: (paused: boolean) => void): void;
  /**
   * The one receiver of durable points: a robot's batches of `epoch` up to `seq` are in the spool or
   * the store (the gateway sends the robot a receipt).
   */
  onDurable(cb: (robotId: string, epoch: number, seq: number) => void): void;
  /** A robot's current durable point, if it sent sequenced batches (this run or a previous one). */
  durableOf(robotId: string): DurablePoint | undefined;
  /** True unless the disk spool is full (while it has room, a store outage costs nothing but disk). */
  spoolAccepting(): boolean;
  /**
   * Whether telemetry runs at peak rates (the gateway's heap policy says so: heap-growth.ts). At peak
   * the row arena allocates its spares at once and keeps them; below it, spares unused since the
   * previous trim are given back every `rowArenaTrimMs` (row-arena.ts).
   */
  setPeakLoad(peak: boolean): void;
  /** Resolves when everything pushed so far is in the store and the snapshots. */
  flush(): Promise<void>;
  /** Drains (flush), then stops the pool and closes the store it opened. */
  close(): Promise<void>;
  stats(): TelemetryIngestStats;
  /** The row store (tests and ops queries). */
  readonly sampleStore: SampleStore;
}

const DEFAULT_MAX_BATCH_BYTES = 1024 * 1024;
/** Room past the batch bound for its last frame (a larger frame moves the batch to a private buffer). */
const SLOT_FRAME_HEADROOM = 256 * 1024;
/**
 * Rows region per frames byte: a RowBinary row is ~1.8x its protobuf sample with the simulator's
 * samples; rows that do not fit come back in a buffer of their own.
 */
const SLOT_ROWS_PER_FRAME_BYTE = 3;

/**
 * Slots for full batches waiting for a pool task (the pool is busy: after the robots resume from a
 * pause, or while the store's own CPU slows the decode threads). Without them each waiting batch was
 * packed into a private ~1 MiB ArrayBuffer that waited long enough to reach V8's old generation: 650
 * MB of them in 45 s when the store fell behind, which with the row buffers started a full GC every
 * 1-2 s (bench/README.md, stop 33). A slot's pages are committed when first written (slots are taken
 * last-freed first), so at light load these cost address space; once a burst wrote into them they stay
 * committed: up to 8 x 5 MiB with the default batch bound (a slot is 1.25x the batch bound for frames
 * and 3x that for rows).
 */
const WAITING_BATCH_SLOTS = 8;

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

/** One line when the start-up migrations changed the store, a warning when it is ahead of this gateway. */
function logSchema(log: Logger, store: SampleStore): void {
  if ('insertFormat' in store) {
    const f = (store as ClickHouseSampleStore).insertFormat;
    if (f !== null) log.info({ store: store.kind, insertFormat: f.format, reason: f.reason }, 'telemetry inserts encoded');
  }
  const s = store.schema;
  if (s === undefined) return;
  if (s.newerThanKnown) {
    log.warn({ store: store.kind, schemaVersion: s.from }, 'telemetry schema is newer than this gateway knows: upgrade the gateway (migrations are additive, so inserts keep working)');
  } else if (s.applied.length > 0) {
    log.info({ store: store.kind, from: s.from, to: s.to, applied: s.applied }, 'telemetry schema migrated');
  }
}

/**
 * Opens the store (chdb unless `clickhouseUrl`), starts the decode pool, returns the ingest.
 * Call from the process main thread (chdb).
 */
export async function createTelemetryIngest(opts: TelemetryIngestOptions): Promise<TelemetryIngest> {
  const ownsStore = opts.sampleStore === undefined;
  const serverOpts = opts.clickhouseUrl === undefined ? null : {
    url: opts.clickhouseUrl,
    ...(opts.clickhouseDatabase !== undefined ? { database: opts.clickhouseDatabase } : {}),
    ...(opts.clickhouseAuth?.username !== undefined ? { username: opts.clickhouseAuth.username } : {}),
    ...(opts.clickhouseAuth?.password !== undefined ? { password: opts.clickhouseAuth.password } : {}),
    ...(opts.retentionDays !== undefined ? { retentionDays: opts.retentionDays } : {}),
  };
  const sampleStore = opts.sampleStore ?? (serverOpts !== null
    ? opts.clickhouseCluster !== undefined
      ? await openClickHouseClusterStore({
        ...serverOpts,
        cluster: opts.clickhouseCluster.name,
        shardUrls: opts.clickhouseCluster.shardUrls,
        warn: (message) => opts.log?.warn({ store: 'clickhouse' }, message),
      })
      : await openClickHouseStore({ ...serverOpts, ...(opts.clickhouseInsertFormat !== undefined ? { insertFormat: opts.clickhouseInsertFormat } : {}), warn: (message) => opts.log?.warn({ store: 'clickhouse' }, message) })
    : await openChdbStore({ dataDir: opts.dataDir, ...(opts.retentionDays !== undefined ? { retentionDays: opts.retentionDays } : {}) }));
  const log = opts.log;
  if (log !== undefined && (sampleStore.setUpError ?? null) === null) logSchema(log, sampleStore);
  else if (log !== undefined) {
    // The server did not answer at start (the gateway reports it down): said once it is set up.
    void sampleStore.setUpDone?.().then(() => {
      log.info({ store: sampleStore.kind, version: sampleStore.version, schemaVersion: sampleStore.schema?.to }, 'telemetry store set up: its server answered after the gateway started');
      logSchema(log, sampleStore);
    });
  }
  const maxTasks = opts.maxTasksInFlight ?? 4;
  // Tasks in the pool, the batch being filled, two for results waiting to be applied in order, and
  // WAITING_BATCH_SLOTS for batches waiting for the pool.
  const framesBytes = (opts.maxBatchBytes ?? DEFAULT_MAX_BATCH_BYTES) + SLOT_FRAME_HEADROOM;
  const slots = new TaskSlots(maxTasks + 3 + WAITING_BATCH_SLOTS, framesBytes, framesBytes * SLOT_ROWS_PER_FRAME_BYTE);
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
  /** Created at the first frame someone watches. */
  private liveDecoder: LiveDecoder | null = null;
  private readonly packer: FramePacker;
  private readonly gate: WatermarkGate;
  private readonly inserts: InsertQueue;
  private readonly snapshots: SnapshotWriter;
  private readonly waiting: Waiting[] = [];
  /** Results (null: the task was lost) waiting for earlier ones, with the robot ids and slot of their task. */
  private readonly done = new Map<number, { r: DecodeResult | null; robotIds: string[]; points: Map<string, DurablePoint> | null; slot: number }>();
  /** Row bytes of results parked in `done` (decoded, waiting for an earlier seq): still queued memory. */
  private parkedBytes = 0;
  private drainWaiters: { upTo: number; resolve: () => void }[] = [];
  private ageTimer: NodeJS.Timeout | null = null;
  private readonly inline: InlineDecode;
  /** post() is running: an inline result settles synchronously and must not re-enter it. */
  private posting = false;
  private seq = 0;
  private delivered = 0;
  private waitingBytes = 0;
  private inFlight = 0;
  private inFlightBytes = 0;
  private closing = false;
  private closed: Promise<void> | null = null;
  private lastErrorLogMs = 0;
  private lastLiveErrorLogMs = 0;
  private readonly decodeThreadIds = new Set<number>();
  private readonly bounds: BoundReport;
  /** Rows copied out of the task slots, held until their insert is done. */
  private readonly rowArena: RowArena;
  /** Gives row buffers an idle gateway no longer needs back to the GC (RowArena.trim). */
  private readonly arenaTrimTimer: NodeJS.Timeout;
  /** Row buffers allocated at once at peak load (rowArenaSpares()). */
  private readonly rowArenaSpares: number;
  /** setPeakLoad(): spares are allocated at once and kept. */
  private peakLoad = false;
  private readonly s = {
    framesIn: 0, bytesIn: 0, samplesIn: 0, batches: 0, corruptFrames: 0, workerErrors: 0, framesLost: 0,
    framesRejected: 0, liveMessages: 0, liveErrors: 0, sequencedBatches: 0, batchesInline: 0, batchesWithoutSlot: 0,
  };
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
    // Reported, and run here for small batches (inline-decode.ts); the workers get this thread's decoder setting (decode-pool.ts).
    const decoder = chooseDecoder();
    this.decoder = decoder.kind;
    this.decoderStatus = decoder.nativeStatus;
    if (decoder.kind !== 'native') this.log.warn({ reason: decoder.nativeStatus }, 'telemetry decoder addon not used, the JavaScript reader runs');
    this.now = opts.now ?? Date.now;
    this.bounds = new BoundReport(this.log, this.now);
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
    this.snapshots = new SnapshotWriter(opts.store.snapshots, opts.snapshotIntervalMs ?? 1_000, opts.onSnapshot);
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
    if (live?.hasSubscribers(fleetId) === true) this.publishLive(live, robotId, fleetId, bytes, receivedAtMs);
    return sequenced;
  }

  /** Decodes a watched frame here and publishes it; a failure here never touches the stored rows. */
  private publishLive(live: LiveSink, robotId: string, fleetId: string, bytes: Uint8Array, receivedAtMs: number): void {
    try {
      const batch = (this.liveDecoder ??= new LiveDecoder()).decode(robotId, fleetId, bytes, receivedAtMs);
      if (batch === null) return;
      this.s.liveMessages += batch.index.length / 3;
      live.publish(batch);
    } catch (e) {
      // A bug (bad input is skipped by the decoder, not thrown): counted, logged at most once a second.
      this.s.liveErrors++;
      const t = this.now();
      if (t - this.lastLiveErrorLogMs >= 1_000) {
        this.lastLiveErrorLogMs = t;
        this.log.error({ err: e, liveErrors: this.s.liveErrors }, 'telemetry live publish failed');
      }
    }
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
    if (this.delivered < upTo) await new Promise<void>((resolve) => this.drainWaiters.push({ upTo, resolve }));
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
      decodeThreadIds: [...this.decodeThreadIds],
      boundedValues: [...this.bounds.totals],
      inlineDecodeNsPerByte: this.inline.estimateNsPerByte,
    };
  }

  private queueBytes(): number {
    return this.packer.byteLength + this.waitingBytes + this.inFlightBytes + this.parkedBytes + this.inserts.queuedBytes;
  }

  /**
   * The age timer fired: it is done, so cut() need not clear it (clearTimeout of the fired timer showed
   * as ~1% of the main thread in a perf profile at 100 robots, bench/README.md "Fixed costs at light load").
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
        const foxglove = this.foxgloveMask(batch.robotIds);
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

  /** Per robot index, the Foxglove channel kinds subscribed to; null when none is (the common case). */
  private foxgloveMask(robotIds: string[]): Uint8Array | null {
    const fox = this.opts.foxglove;
    if (!fox?.anyWatched()) return null;
    const mask = new Uint8Array(robotIds.length);
    let any = false;
    for (let i = 0; i < robotIds.length; i++) {
      const kinds = fox.watchedKinds(robotIds[i]!);
      if (kinds !== 0) {
        mask[i] = kinds;
        any = true;
      }
    }
    return any ? mask : null;
  }

  /** Records a finished task and applies every result that is next in posting order. */
  private settle(seq: number, bytes: number, result: DecodeResult | null, robotIds: string[], points: Map<string, DurablePoint> | null, slot: number): void {
    if (result?.spare) this.packer.recycle(result.spare);
    this.inFlight--;
    this.inFlightBytes -= bytes;
    this.done.set(seq, { r: result, robotIds, points, slot });
    this.parkedBytes += result === null ? 0 : rowsLength(result);
    for (let next = this.delivered + 1; this.done.has(next); next++) {
      const { r, robotIds: ids, points: pts, slot: s } = this.done.get(next)!;
      this.done.delete(next);
      this.delivered = next;
      if (r) {
        this.parkedBytes -= rowsLength(r);
        this.apply(r, ids, pts, s);
      }
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
    if (this.drainWaiters.length > 0) {
      const still = this.drainWaiters.filter((w) => w.upTo > this.delivered);
      for (const w of this.drainWaiters) if (w.upTo <= this.delivered) w.resolve();
      this.drainWaiters = still;
    }
  }

  private apply(r: DecodeResult, robotIds: string[], points: Map<string, DurablePoint> | null, slot: number): void {
    // Bounded: replaced workers add ids; past 64 the list is only a sample.
    if (r.threadId !== 0 && this.decodeThreadIds.size < 64) this.decodeThreadIds.add(r.threadId);
    this.s.samplesIn += r.rowCount;
    this.s.corruptFrames += r.corruptFrames;
    if (r.bounded) this.bounds.record(r.bounded, robotIds);
    // Rows in the task's slot are copied out before the slot is reused; rows in a buffer of their
    // own (no slot, or too large for it) are kept as they are. (Tasks without a slot: none in the
    // peak runs of stop 34, bursts after a pause included: `batchesWithoutSlot`.)
    const rows = r.rowsInSlot !== undefined && slot !== -1 ? this.rowArena.copy(this.slots.rows(slot, r.rowsInSlot)) : r.rows;
    this.inserts.enqueue(rows, r.rowCount, points);
    const snaps = r.snapshots;
    for (let i = 0, k = 0; i < snaps.length; i += 3, k++) {
      // A range of the rows: the writer copies it into the LMDB value at once.
      this.snapshots.offer(robotIds[snaps[i]!]!, r.snapshotTs[k]!, rows, snaps[i + 1]!, snaps[i + 2]!);
    }
    if (r.foxglove && this.opts.foxglove) this.opts.foxglove.publishFoxglove(r.foxglove);
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
function rowsLength(r: DecodeResult): number {
  return r.rowsInSlot ?? r.rows.byteLength;
}
