/** Backpressure: the ingest pauses robots at its high-water mark, resumes under the low one, drops nothing. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { WatermarkGate } from '../../src/telemetry/ingest/backpressure.js';
import { createTelemetryIngest, type TelemetryIngest } from '../../src/telemetry/ingest/ingest.js';
import { encodeBatch, tempDir, until } from './helpers.js';

describe('watermark gate', () => {
  it('fires once per transition, with hysteresis between the marks', () => {
    const gate = new WatermarkGate(100, 40);
    const events: boolean[] = [];
    gate.onChange((p) => events.push(p));
    for (const q of [10, 99, 100, 150, 60, 41, 40, 30, 99, 100]) gate.update(q);
    expect(events).toEqual([true, false, true]);
  });
});

describe('ingest backpressure (chdb)', () => {
  const tmp = tempDir('backpressure');
  let store: Store;
  let ingest: TelemetryIngest;

  beforeAll(async () => {
    store = openStore(tmp.dir);
    ingest = await createTelemetryIngest({
      store, dataDir: tmp.dir, threads: 1, maxBatchFrames: 10, maxTasksInFlight: 1,
      highWaterBytes: 200_000, lowWaterBytes: 50_000,
    });
  });

  afterAll(async () => {
    await ingest.close();
    await store.close();
    tmp.remove();
  });

  it('signals pause at the high-water mark, resume under the low-water mark, and loses no sample', async () => {
    const events: { paused: boolean; queueBytes: number }[] = [];
    ingest.onBackpressure((paused) => events.push({ paused, queueBytes: ingest.stats().queueBytes }));
    const frame = encodeBatch(Date.now(), 25);
    let pushedWhilePaused = 0;
    for (let i = 0; i < 400; i++) {
      if (ingest.stats().paused) pushedWhilePaused++;
      ingest.push(`robot-${i % 4}`, 'fleet-bp', frame);
    }
    expect(events[0]?.paused).toBe(true);
    expect(events[0]!.queueBytes).toBeGreaterThanOrEqual(200_000);
    expect(events[0]!.queueBytes).toBeLessThan(200_000 + frame.length + 64);
    expect(pushedWhilePaused).toBeGreaterThan(0); // frames still accepted after the signal: never dropped
    await until(() => events.length >= 2, 20_000, 'resume signal');
    expect(events[1]!.paused).toBe(false);
    expect(events[1]!.queueBytes).toBeLessThanOrEqual(50_000);
    await ingest.flush();
    expect(ingest.stats()).toMatchObject({ samplesIn: 10_000, rowsWritten: 10_000, paused: false, queueBytes: 0 });
    expect(await ingest.sampleStore.queryText("SELECT count() FROM telemetry_samples WHERE fleet_id = 'fleet-bp'")).toBe('10000\n');
  });
});

describe('ingest at peak load (setPeakLoad)', () => {
  it('allocates the row buffers the high-water mark lets wait at once, keeps them while the peak lasts, gives them back after', async () => {
    const tmp = tempDir('peak-load');
    const store = openStore(tmp.dir);
    // 64 MiB high-water mark: 16 row buffers of 4 MiB; 4 are kept however long they stay unused.
    const ingest = await createTelemetryIngest({ store, dataDir: tmp.dir, threads: 1, highWaterBytes: 64 * 1024 * 1024, rowArenaTrimMs: 20 });
    try {
      expect(ingest.stats().rowArenaBuffers).toBe(0);
      ingest.setPeakLoad(true);
      expect(ingest.stats()).toMatchObject({ rowArenaBuffers: 16, rowArenaAllocated: 16 });
      // Time-based on purpose: ~10 trim intervals (20 ms) pass, and none trims at peak load.
      await new Promise((r) => setTimeout(r, 200));
      expect(ingest.stats().rowArenaBuffers).toBe(16);
      ingest.setPeakLoad(false);
      await until(() => ingest.stats().rowArenaBuffers === 4, 5_000, 'unused row buffers given back after the peak');
      expect(ingest.stats().rowArenaAllocated).toBe(16);
    } finally {
      await ingest.close();
      await store.close();
      tmp.remove();
    }
  });
});
