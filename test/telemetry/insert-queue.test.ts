/**
 * The insert queue under memory pressure: while the ingest's gate has paused the robots' reads,
 * rows go on to the spool and the store at once instead of waiting for the insert age, so the
 * reads resume when the store has them; a block is cut at a quarter of the high-water mark; receipts
 * are reported in cut order; a replay that overtakes an older failed block keeps both.
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/lmdb.js';
import { createTelemetryIngest, type TelemetryIngest, type TelemetryIngestOptions } from '../../src/telemetry/ingest/ingest.js';
import { InsertQueue, MAX_ROBOT_BATCHES_PER_BLOCK, type InsertQueueOptions } from '../../src/telemetry/store/insert-queue.js';
import type { SampleStore } from '../../src/telemetry/store/sample-store.js';
import { TelemetrySpool } from '../../src/telemetry/store/spool.js';
import { NoopSampleStore } from '../support/noop-sample-store.js';
import { encodeBatch, tempDir, until } from './helpers.js';

/** Records inserts; stands in for the store only where the queue's timing is what is tested. */
class RecordingStore extends NoopSampleStore {
  readonly inserted: number[] = [];

  override insert(_chunks: readonly Uint8Array[], _bytes: number, rows: number): Promise<void> {
    this.inserted.push(rows);
    return Promise.resolve();
  }
}

function recordingStore(): RecordingStore {
  return new RecordingStore();
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Runs `body` against a real ingest (chdb, one decode thread) in `dir`, closing both afterwards. */
async function withIngest(dir: string, opts: Partial<TelemetryIngestOptions>, body: (ingest: TelemetryIngest) => Promise<void>): Promise<void> {
  const store = openStore(dir);
  const ingest = await createTelemetryIngest({ store, dataDir: dir, threads: 1, ...opts });
  try {
    await body(ingest);
  } finally {
    await ingest.close();
    await store.close();
  }
}

describe('insert queue: urgent while paused', () => {
  const tmp = tempDir('insert-queue');
  afterAll(() => tmp.remove());

  it('sends pending rows when set urgent, and each new one at once while urgent; waits for the age again after', async () => {
    const { spool } = await TelemetrySpool.open(join(tmp.dir, 'a'), 1024 * 1024);
    const store = recordingStore();
    const q = new InsertQueue(store, pino({ enabled: false }), spool, { maxAgeMs: 60_000 });
    q.enqueue(new Uint8Array(100), 2, null);
    // Time-based on purpose: the 60 s age holds the block; a short look shows nothing went before it.
    await sleep(100);
    expect(store.inserted).toEqual([]);
    q.setUrgent(true);
    await until(() => store.inserted.length === 1, 5_000, 'the pending block inserted');
    expect(store.inserted).toEqual([2]);
    q.enqueue(new Uint8Array(50), 1, null);
    await until(() => store.inserted.length === 2 && q.queuedBytes === 0, 5_000, 'a row enqueued while urgent inserted');
    q.setUrgent(false);
    q.enqueue(new Uint8Array(50), 3, null);
    // Time-based on purpose: no longer urgent, the row waits for the 60 s age again.
    await sleep(200);
    expect(store.inserted).toEqual([2, 1]);
    expect(q.queuedBytes).toBe(50);
    await q.close();
    expect(store.inserted).toEqual([2, 1, 3]);
  });
});

describe('insert queue: urgent rows while the store is busy', () => {
  const tmp = tempDir('insert-group');
  afterAll(() => tmp.remove());

  it('joins rows that arrive while every insert slot is busy into one block, sent when a slot frees', async () => {
    const { spool } = await TelemetrySpool.open(join(tmp.dir, 'a'), 1024 * 1024);
    const release: (() => void)[] = [];
    const store = recordingStore();
    store.insert = (_c, _b, rows) => {
      store.inserted.push(rows);
      return new Promise<void>((r) => release.push(r));
    };
    const q = new InsertQueue(store, pino({ enabled: false }), spool, { maxAgeMs: 60_000, maxInFlight: 1 });
    q.setUrgent(true);
    q.enqueue(new Uint8Array(100), 2, null);
    await until(() => store.inserted.length === 1, 5_000, 'the first block sent');
    for (let i = 0; i < 3; i++) q.enqueue(new Uint8Array(50), 1, null);
    // Time-based on purpose: a short look while the one slot is held (nothing else can send them).
    await sleep(100);
    // The one slot is busy: the rows wait for it, not for the 60 s age.
    expect(store.inserted).toEqual([2]);
    expect(q.queuedBytes).toBe(250);
    release.shift()!();
    await until(() => store.inserted.length === 2, 5_000, 'the waiting rows sent once the slot freed');
    expect(store.inserted).toEqual([2, 3]);
    release.shift()!();
    await until(() => q.queuedBytes === 0, 5_000, 'everything stored');
    await q.close();
    expect(store.inserted).toEqual([2, 3]);
  });
});

describe('insert queue: receipts in cut order', () => {
  const tmp = tempDir('insert-order');
  afterAll(() => tmp.remove());

  it('holds later blocks\' points (and acknowledgement-only points) until an earlier block only memory held is stored, and keeps them out of the spool meanwhile', async () => {
    const dir = join(tmp.dir, 'a');
    const { spool } = await TelemetrySpool.open(dir, 1024 * 1024);
    // The first spool write fails (a disk error): that block is inserted from memory.
    const write = spool.write.bind(spool);
    let failNext = true;
    spool.write = (...a) => {
      if (!failNext) return write(...a);
      failNext = false;
      return Promise.reject(new Error('disk full'));
    };
    // Every insert waits until the test lets them finish.
    const release: (() => void)[] = [];
    const store = recordingStore();
    store.insert = (_c, _b, rows) => {
      store.inserted.push(rows);
      return new Promise<void>((r) => release.push(r));
    };
    const reported: string[] = [];
    // A block per enqueue (maxRows 1), sent at once (urgent, eight slots).
    const q = new InsertQueue(store, pino({ enabled: false }), spool, { maxAgeMs: 60_000, maxInFlight: 8, maxRows: 1 }, undefined, undefined,
      (points) => { for (const [id, p] of points) reported.push(`${id}:${p.epoch}/${p.seq}`); });
    q.setUrgent(true);
    q.enqueue(new Uint8Array(10), 1, new Map([['r1', { epoch: 1, seq: 1 }]]));
    q.enqueue(new Uint8Array(10), 2, new Map([['r1', { epoch: 1, seq: 2 }]]));
    q.enqueue(new Uint8Array(0), 0, new Map([['r2', { epoch: 1, seq: 7 }]]));
    q.enqueue(new Uint8Array(10), 3, new Map([['r2', { epoch: 1, seq: 8 }], ['r1', { epoch: 2, seq: 1 }]]));
    await until(() => store.inserted.length === 3, 5_000, 'every block sent to the store');
    // The later blocks are spooled (a block goes to the store only after its spool write settled, and
    // a receipt would have been reported then), but their receipts would cover r1's seq 1, which only
    // memory holds.
    expect(reported).toEqual([]);
    // Nor do their spool files carry their points: a restart must not take them as durable.
    const seen = await TelemetrySpool.open(dir, 1024 * 1024);
    expect(seen.recovery.blocks.map((x) => [x.rows, x.points.size])).toEqual([[2, 0], [3, 0]]);
    // The later blocks are stored first: still nothing, then everything in order once the first is.
    release[1]!();
    release[2]!();
    await until(() => q.stats().insertsInFlight === 1, 5_000, 'the two later inserts settled');
    expect(reported).toEqual([]);
    release[0]!();
    await until(() => reported.length === 3, 5_000, 'receipts after the first block is stored');
    // The blocks waiting behind it were merged into one report (a later epoch wins).
    expect(reported).toEqual(['r1:1/1', 'r1:2/1', 'r2:1/8']);
    await q.close();
  });
});

describe('insert queue: small blocks wait for more rows (minRows, smallMaxAgeMs)', () => {
  const tmp = tempDir('insert-small');
  afterAll(() => tmp.remove());

  /** A queue over a recording store in its own spool; `reported` gets `robot`'s reported seqs. */
  async function smallBlockQueue(name: string, opts: InsertQueueOptions, robot = ''): Promise<{ q: InsertQueue; store: ReturnType<typeof recordingStore>; reported: number[] }> {
    const { spool } = await TelemetrySpool.open(join(tmp.dir, name), 1024 * 1024);
    const store = recordingStore();
    const reported: number[] = [];
    const q = new InsertQueue(store, pino({ enabled: false }), spool, opts, undefined, undefined,
      (points) => { const p = points.get(robot); if (p) reported.push(p.seq); });
    return { q, store, reported };
  }

  it('cuts a full-enough block at maxAgeMs, and a small one when a later enqueue brings it to minRows', async () => {
    const { q, store } = await smallBlockQueue('a', { maxAgeMs: 100, minRows: 10, smallMaxAgeMs: 30_000 });
    // 10 rows (= minRows): cut at the ordinary age.
    q.enqueue(new Uint8Array(100), 10, null);
    await until(() => store.inserted.length === 1, 5_000, 'a block of minRows inserted at maxAgeMs');
    // 3 rows: well past maxAgeMs it still waits (time-based on purpose: the age has to pass)...
    q.enqueue(new Uint8Array(30), 3, null);
    await sleep(400);
    expect(store.inserted).toEqual([10]);
    // ...until a later enqueue brings it to minRows: cut then (the small-block age is 30 s).
    q.enqueue(new Uint8Array(70), 7, null);
    await until(() => store.inserted.length === 2, 5_000, 'cut when it reached minRows');
    expect(store.inserted).toEqual([10, 10]);
    await q.close();
  });

  it('cuts a block that stays small at smallMaxAgeMs, and acknowledgements without rows at maxAgeMs', async () => {
    const { q, store, reported } = await smallBlockQueue('d', { maxAgeMs: 100, minRows: 10, smallMaxAgeMs: 1_500 }, 'r1');
    // Only acknowledgements (corrupt frames): no part to save, so they go at the age, not at 1.5 s.
    const a0 = performance.now();
    q.enqueue(new Uint8Array(0), 0, new Map([['r1', { epoch: 1, seq: 3 }]]));
    await until(() => reported.length === 1, 5_000, 'acknowledgements reported');
    expect(performance.now() - a0).toBeLessThan(1_400);
    const t0 = performance.now();
    q.enqueue(new Uint8Array(20), 2, null);
    await until(() => store.inserted.length === 1, 10_000, 'a small block inserted at smallMaxAgeMs');
    expect(performance.now() - t0).toBeGreaterThanOrEqual(1_400);
    expect(store.inserted).toEqual([2]);
    await q.close();
  });

  it('cuts a block once one robot has MAX_ROBOT_BATCHES_PER_BLOCK batches since the previous cut (the agent\'s unacknowledged bound)', async () => {
    const { q, store, reported } = await smallBlockQueue('c', { maxAgeMs: 100, minRows: 100_000, smallMaxAgeMs: 30_000 }, 'busy');
    // One row per batch from one robot, a second robot alongside: far under minRows. The count starts
    // at the robot's first point (seq 1).
    const n = MAX_ROBOT_BATCHES_PER_BLOCK;
    for (let seq = 1; seq <= n + 10; seq++) {
      q.enqueue(new Uint8Array(10), 1, new Map([['busy', { epoch: 7, seq }], ['calm', { epoch: 1, seq: 1 }]]));
    }
    await until(() => store.inserted.length === 1, 5_000, 'the block cut by its batch count, long before 30 s');
    expect(store.inserted).toEqual([n + 1]);
    expect(reported).toEqual([n + 1]);
    // The other 9 batches wait: the next count starts at the cut (seq n + 1). Time-based on purpose:
    // past maxAgeMs (100 ms), which cuts only blocks of minRows.
    await sleep(300);
    expect(store.inserted).toHaveLength(1);
    for (let seq = n + 11; seq <= 2 * n; seq++) q.enqueue(new Uint8Array(10), 1, new Map([['busy', { epoch: 7, seq }]]));
    // Time-based on purpose: past maxAgeMs again, one batch short of the count.
    await sleep(300);
    expect(store.inserted).toHaveLength(1);
    q.enqueue(new Uint8Array(10), 1, new Map([['busy', { epoch: 7, seq: 2 * n + 1 }]]));
    await until(() => store.inserted.length === 2, 5_000, 'the second block cut at n batches after the first cut');
    expect(store.inserted).toEqual([n + 1, n]);
    await q.close();
  });

  it('off with minRows 1 or without it (the queue\'s default): every block is cut at maxAgeMs; smallMaxAgeMs below maxAgeMs counts as maxAgeMs', async () => {
    const cases: InsertQueueOptions[] = [{ maxAgeMs: 100, smallMaxAgeMs: 60_000 }, { maxAgeMs: 100, minRows: 1, smallMaxAgeMs: 60_000 }, { maxAgeMs: 100, minRows: 1_000, smallMaxAgeMs: 10 }];
    for (const [i, opts] of cases.entries()) {
      const { q, store } = await smallBlockQueue(`b${i}`, opts);
      q.enqueue(new Uint8Array(10), 1, null);
      await until(() => store.inserted.length === 1, 5_000, 'inserted at maxAgeMs');
      await q.close();
    }
  });
});

describe('insert queue: acknowledgement-only points', () => {
  const tmp = tempDir('insert-acks');
  afterAll(() => tmp.remove());

  it('reports points without rows (corrupt frames) at the age, or at once while urgent, when nothing is ahead of them', async () => {
    const { spool } = await TelemetrySpool.open(join(tmp.dir, 'a'), 1024 * 1024);
    const reported: string[] = [];
    const q = new InsertQueue(recordingStore(), pino({ enabled: false }), spool, { maxAgeMs: 100 }, undefined, undefined,
      (points) => { for (const [id, p] of points) reported.push(`${id}:${p.seq}`); });
    q.enqueue(new Uint8Array(0), 0, new Map([['r1', { epoch: 1, seq: 3 }]]));
    expect(reported).toEqual([]);
    await until(() => reported.length === 1, 5_000, 'points reported at the age');
    q.setUrgent(true);
    q.enqueue(new Uint8Array(0), 0, new Map([['r1', { epoch: 1, seq: 4 }]]));
    expect(reported).toEqual(['r1:3', 'r1:4']);
    await q.close();
  });
});

describe('ingest: an insert block is cut at a quarter of the high-water mark', () => {
  const tmp = tempDir('insert-bound');
  afterAll(() => tmp.remove());

  it('cuts blocks by bytes long before the (here 10 min) insert age, so a flow the store keeps up with never pauses', async () => {
    let largest = 0;
    await withIngest(tmp.dir, {
      maxBatchFrames: 10, highWaterBytes: 2_000_000, lowWaterBytes: 500_000,
      insert: { maxAgeMs: 600_000, onInsert: (a) => void (largest = Math.max(largest, a.bytes)) },
    }, async (ingest) => {
      let paused = 0;
      ingest.onBackpressure((p) => {
        if (p) paused++;
      });
      const frame = encodeBatch(Date.now(), 25);
      // 30,000 rows (~5.5 MB of rows, ~180 B each): without the bound they would all wait for the
      // age and reach the high-water mark. Each group waits for its decode and any insert, so only
      // rows waiting for a block count.
      for (let i = 0; i < 1_200; i += 10) {
        for (let j = i; j < i + 10; j++) ingest.push(`robot-${j % 4}`, 'fleet-qb', frame);
        await until(() => ingest.stats().tasksInFlight === 0 && ingest.stats().insertsInFlight === 0, 10_000, 'decode and insert');
      }
      expect(paused).toBe(0);
      expect(ingest.stats().inserts).toBeGreaterThanOrEqual(5);
      // A quarter of the mark, passed by at most the one decoded batch (10 frames) that crossed it.
      expect(largest).toBeGreaterThan(400_000);
      expect(largest).toBeLessThanOrEqual(500_000 + 10 * 25 * 200);
      await ingest.flush();
      expect(ingest.stats()).toMatchObject({ samplesIn: 30_000, rowsWritten: 30_000, queueBytes: 0 });
    });
  });
});

describe('ingest: paused reads resume without waiting for the insert age', () => {
  const tmp = tempDir('insert-urgent');
  afterAll(() => tmp.remove());

  it('resumes within seconds with a 10 min insert age (one batch of rows, over the low mark, would otherwise wait for it)', async () => {
    // Batches of 12 frames (~57 kB of rows): blocks are cut at two (100 kB, a quarter of the mark),
    // and the 84 frames that reach the mark leave one batch's rows, over the 40 kB low mark, waiting
    // for the age unless the pause sends them on.
    await withIngest(tmp.dir, {
      maxBatchFrames: 12, maxTasksInFlight: 1, highWaterBytes: 400_000, lowWaterBytes: 40_000, insert: { maxAgeMs: 600_000 },
    }, async (ingest) => {
      const events: boolean[] = [];
      ingest.onBackpressure((p) => events.push(p));
      const frame = encodeBatch(Date.now(), 25);
      for (let i = 0; i < 200 && !ingest.stats().paused; i++) ingest.push(`robot-${i % 4}`, 'fleet-qu', frame);
      expect(events).toEqual([true]);
      await until(() => events.length === 2, 15_000, 'reads resumed');
      expect(events).toEqual([true, false]);
      expect(ingest.stats().queueBytes).toBeLessThanOrEqual(40_000);
    });
  });
});

describe('insert queue: a replay that overtakes an older failed block', () => {
  const tmp = tempDir('insert-replay-order');
  afterAll(() => tmp.remove());

  it('removes the replayed block, not the older one placed ahead of it meanwhile, and then replays that one', async () => {
    const { spool } = await TelemetrySpool.open(join(tmp.dir, 'a'), 1024 * 1024);
    // Every insert waits until the test settles it.
    const calls: { rows: number; settle: (ok: boolean) => void }[] = [];
    const store = recordingStore();
    store.insert = (_c, _b, rows) => new Promise<void>((resolve, reject) => {
      calls.push({ rows, settle: (ok) => (ok ? resolve() : reject(new Error('store down'))) });
    });
    // A block per enqueue, both sent at once (urgent, two slots), retried after 10 ms.
    const q = new InsertQueue(store, pino({ enabled: false }), spool, { maxAgeMs: 60_000, maxInFlight: 2, maxRows: 1, baseDelayMs: 10, maxDelayMs: 10 });
    try {
      q.setUrgent(true);
      q.enqueue(new Uint8Array(10), 1, null); // block A (older)
      q.enqueue(new Uint8Array(20), 2, null); // block B
      await until(() => calls.length === 2, 5_000, 'both blocks sent');
      // B fails first: it goes to the backlog and its replay starts.
      calls[1]!.settle(false);
      await until(() => calls.length === 3, 5_000, 'B replayed');
      expect(calls[2]!.rows).toBe(2);
      // A fails while B's replay runs: it is older, so it goes ahead of B in the backlog.
      calls[0]!.settle(false);
      await until(() => q.stats().spoolBacklog === 2, 5_000, 'A in the backlog');
      // B's replay succeeds; A is replayed next (before the fix, A left the backlog instead and B's
      // deleted files were read again at every retry).
      calls[2]!.settle(true);
      await until(() => calls.length === 4, 5_000, 'A replayed');
      expect(calls[3]!.rows).toBe(1);
      calls[3]!.settle(true);
      // Both blocks' files gone too (they are deleted after the backlog lets go of the block).
      await until(() => q.stats().spoolBacklog === 0 && q.stats().spoolBytes === 0, 5_000, 'the backlog and the spool empty');
      expect(q.stats()).toMatchObject({ rowsWritten: 3, rowsReplayed: 3 });
      expect(calls).toHaveLength(4);
    } finally {
      // Also stops a replay that would otherwise retry every 10 ms after a failure here.
      await q.close();
    }
  });
});

describe('insert queue: a replay before the store was set up', () => {
  const tmp = tempDir('insert-replay-setup');
  afterAll(() => tmp.remove());

  it('completes the set-up before reading the store\'s deduplication, so a token store gets the block, not a row probe', async () => {
    const { spool } = await TelemetrySpool.open(join(tmp.dir, 'a'), 1024 * 1024);
    // A server store before its set-up: `dedup` says `none` until the set-up ran; the server
    // deduplicates by token. Its first row is found by a probe (another partition of the block was
    // stored by an earlier run), so a probe would skip the block and lose the rest of its rows.
    let setUp = false;
    const inserts: (string | undefined)[] = [];
    const probes: string[] = [];
    const store = new (class extends NoopSampleStore {
      override readonly kind = 'clickhouse' as const;
      override readonly version = 'unknown';
      override readonly schema = null;
      override get dedup(): SampleStore['dedup'] {
        return setUp ? 'token' : 'none';
      }

      override ensureSetUp(): Promise<void> {
        setUp = true;
        return Promise.resolve();
      }

      override insert(_c: readonly Uint8Array[], _b: number, _rows: number, token?: string): Promise<void> {
        inserts.push(token);
        // The first attempt fails (the server's outage), so the block is replayed from the spool.
        return inserts.length === 1 ? Promise.reject(new Error('store down')) : Promise.resolve();
      }

      override queryText(sql: string): Promise<string> {
        probes.push(sql);
        return Promise.resolve('1\n');
      }
    })();
    // One RowBinary row's key (robot_id, a string, ts_ms, received_at_ms): what a probe reads.
    const row = new Uint8Array([2, 0x72, 0x31, 1, 0x78, ...new Uint8Array(16).fill(1)]);
    const q = new InsertQueue(store, pino({ enabled: false }), spool, { maxAgeMs: 60_000, maxRows: 1, baseDelayMs: 10, maxDelayMs: 10 });
    try {
      q.setUrgent(true);
      q.enqueue(row, 1, null);
      await until(() => q.stats().spoolBacklog === 0 && q.stats().spoolBytes === 0 && inserts.length >= 2, 5_000, 'the block replayed');
      expect(probes).toEqual([]);
      expect(inserts).toHaveLength(2);
      expect(inserts[1]).toBe(inserts[0]);
    } finally {
      await q.close();
    }
  });
});
