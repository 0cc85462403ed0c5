/**
 * What the telemetry ingest takes and offers: its options (bounds and defaults), its statistics, and
 * the interface the gateway and the robot link use.
 */
import type { Logger } from 'pino';
import type { Store } from '../../store/lmdb.js';
import type { DecoderKind } from '../decode/index.js';
import type { FoxgloveSink, LiveSink } from '../live/index.js';
import type { DurablePoint, InsertQueueOptions, SampleStore, StoreKind } from '../store/index.js';

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
  /** How inserts into a single ClickHouse server are encoded (store/native-insert.ts). Default `auto`. */
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
   * (bench/notes/telemetry-ingest.md, "Batch age and inline cuts").
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
   * the lookup by robot id (a hash lookup over every robot that sent telemetry, a visible share of the
   * main thread at 1,000 robots x 10 Hz: bench/notes/telemetry-ingest.md). The sink returns whether the batch carries a `seq`:
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
