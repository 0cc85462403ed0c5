/**
 * The insert queue under memory pressure: while the ingest's gate has paused the robots' reads,
 * rows go on to the spool and the store at once instead of waiting for the insert age, so the
 * reads resume when the store has them; a block is never more than a quarter of the high-water mark.
 */
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/lmdb.js';
import { createTelemetryIngest } from '../../src/telemetry/ingest.js';
import { InsertQueue } from '../../src/telemetry/insert-queue.js';
import type { SampleStore } from '../../src/telemetry/sample-store.js';
import { TelemetrySpool } from '../../src/telemetry/spool.js';
import { encodeBatch, tempDir, until } from './helpers.js';

/** Records inserts; stands in for the store only where the queue's timing is what is tested. */
function recordingStore(): SampleStore & { inserted: number[] } {
  const inserted: number[] = [];
  return {
    kind: 'chdb', version: 'test', dedup: 'token', inserted,
    insert: (_chunks, _bytes, rows) => {
      inserted.push(rows);
      return Promise.resolve();
    },
    queryText: () => Promise.resolve('0\n'),
    close: () => Promise.resolve(),
  };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('insert queue: urgent while paused', () => {
  const tmp = tempDir('insert-queue');
  afterAll(() => tmp.remove());

  it('sends pending rows when set urgent, and each new one at once while urgent; waits for the age again after', async () => {
    const { spool } = await TelemetrySpool.open(join(tmp.dir, 'a'), 1024 * 1024);
    const store = recordingStore();
    const q = new InsertQueue(store, pino({ enabled: false }), spool, { maxAgeMs: 60_000 });
    q.enqueue(new Uint8Array(100), 2, null);
    await sleep(100);
    expect(store.inserted).toEqual([]);
    q.setUrgent(true);
    await until(() => store.inserted.length === 1, 5_000, 'the pending block inserted');
    expect(store.inserted).toEqual([2]);
    q.enqueue(new Uint8Array(50), 1, null);
    await until(() => store.inserted.length === 2, 5_000, 'a row enqueued while urgent inserted');
    expect(q.queuedBytes).toBe(0);
    q.setUrgent(false);
    q.enqueue(new Uint8Array(50), 3, null);
    await sleep(200);
    expect(store.inserted).toEqual([2, 1]);
    expect(q.queuedBytes).toBe(50);
    await q.close();
    expect(store.inserted).toEqual([2, 1, 3]);
  });
});

describe('ingest: an insert block is at most a quarter of the high-water mark', () => {
  const tmp = tempDir('insert-bound');
  afterAll(() => tmp.remove());

  it('cuts blocks by bytes long before the (here 10 min) insert age, so a flow the store keeps up with never pauses', async () => {
    const store = openStore(tmp.dir);
    const ingest = await createTelemetryIngest({
      store, dataDir: tmp.dir, threads: 1, maxBatchFrames: 10,
      highWaterBytes: 2_000_000, lowWaterBytes: 500_000, insert: { maxAgeMs: 600_000 },
    });
    try {
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
      expect(ingest.stats().inserts).toBeGreaterThanOrEqual(10);
      await ingest.flush();
      expect(ingest.stats()).toMatchObject({ samplesIn: 30_000, rowsWritten: 30_000, queueBytes: 0 });
    } finally {
      await ingest.close();
      await store.close();
    }
  });
});
