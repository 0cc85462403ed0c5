/**
 * The ingest against a real ClickHouse server (Debian 18.16 here, or FLEETGW_TEST_CLICKHOUSE_URL):
 * RowBinary rows, the legacy/modern DDL choice, and retries across a server outage.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { createTelemetryIngest, type TelemetryIngest } from '../../src/telemetry/ingest/ingest.js';
import { captureLog } from '../support/capture-log.js';
import { decodeSnapshot } from '../../src/telemetry/sample/snapshot-codec.js';
import { INSERT_COLUMN_LIST } from '../../src/telemetry/store/columns.js';
import { openClickHouseStore } from '../../src/telemetry/store/clickhouse-store.js';
import type { SampleStore } from '../../src/telemetry/store/sample-store.js';
import { startClickHouseServer, type ClickHouseTestServer } from '../support/clickhouse-server.js';
import { CORRUPT_FRAME, encodeBatch, encodeSamples, sample, tempDir, until } from './helpers.js';

const url = inject('clickhouseUrl');
const skipReason = inject('clickhouseSkipReason');
const warnings: string[] = [];
const quietLog = captureLog(warnings);

describe.skipIf(url === null)(`telemetry ingest into a ClickHouse server${url === null ? ` (skipped: ${skipReason})` : ''}`, () => {
  const tmp = tempDir('ingest-ch');
  let store: Store;
  let ingest: TelemetryIngest;
  // Each run gets its own database so runs against a shared FLEETGW_TEST_CLICKHOUSE_URL do not mix.
  const database = `fleetgw_test_${process.pid}_${Date.now()}`;

  beforeAll(async () => {
    await fetch(`${url}/`, { method: 'POST', body: `CREATE DATABASE IF NOT EXISTS ${database}` });
    store = openStore(tmp.dir);
    // inlineDecodeMaxBytes 0: this suite keeps the decode pool's path under test for small batches too
    // (the ingest would decode them on the main thread: inline-decode.test.ts).
    ingest = await createTelemetryIngest({ store, dataDir: tmp.dir, clickhouseUrl: url!, clickhouseDatabase: database, threads: 1, log: quietLog, inlineDecodeMaxBytes: 0 });
  });

  afterAll(async () => {
    await ingest?.close();
    await store?.close();
    await fetch(`${url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${database}` });
    tmp.remove();
  });

  it('lands samples as RowBinary rows with the right field values', async () => {
    expect(ingest.storeKind).toBe('clickhouse');
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 60_000;
    for (let f = 0; f < 20; f++) {
      ingest.push('robot-a', 'fleet-1', encodeBatch(t0 + f * 1_000, 50, f * 50));
      ingest.push('robot-b', 'fleet-1', encodeBatch(t0 + f * 1_000 + 5, 50, f * 50));
    }
    ingest.push('robot-b', 'fleet-1', CORRUPT_FRAME);
    ingest.push('robot-c', 'fleet-1', encodeSamples([sample(t0, 3, { faults: ["quote'd", 'tab\t', 'ü'], mode: 'manual' })]));
    await ingest.flush();

    expect(ingest.stats()).toMatchObject({ samplesIn: 2_001, rowsWritten: 2_001, corruptFrames: 1, queueBytes: 0 });
    const counts = await ingest.sampleStore.queryText(
      'SELECT robot_id, count(), min(ts_ms), max(ts_ms) FROM telemetry_samples GROUP BY robot_id ORDER BY robot_id',
    );
    expect(counts.trim().split('\n')).toEqual([
      `robot-a\t1000\t${t0}\t${t0 + 19_000 + 490}`,
      `robot-b\t1000\t${t0 + 5}\t${t0 + 19_005 + 490}`,
      `robot-c\t1\t${t0}\t${t0}`,
    ]);
    const row = await ingest.sampleStore.queryText(
      `SELECT lon, pose_x_m, speed_mps, yaw_rate_dps, voltage_v, charging, estop, mission_state, progress_pct, health_level, faults, toUnixTimestamp(ts)
       FROM telemetry_samples WHERE robot_id = 'robot-a' AND ts_ms = ${t0 + 3_000 + 70}`,
    );
    // frame 3, sample 7 -> index 157
    expect(row.trim().split('\t')).toEqual([
      String(11.5 + 157 / 1e4), '157', '1.25', '-3.5', '48.5', '0', '0', 'running', '42.5', 'warn', "['motor_overtemp']",
      String(Math.floor((t0 + 3_070) / 1000)),
    ]);
    const c = await ingest.sampleStore.queryText("SELECT mode, faults FROM telemetry_samples WHERE robot_id = 'robot-c'");
    expect(c).toBe("manual\t['quote\\'d','tab\\t','ü']\n");
    const snap = decodeSnapshot(store.snapshots.get('robot-b'))!;
    expect(snap.tsMs).toBe(t0 + 19_005 + 490);
  });
});

describe.skipIf(url === null)('what the server does with a block inserted twice (issue 14 part 1: store.dedup)', () => {
  const tmp = tempDir('ingest-ch-dedup');
  afterAll(() => tmp.remove());

  it('matches store.dedup: 18.16 stores a repeated block again, 22.2+ drops a repeated token', async () => {
    const database = `fleetgw_dedup_${process.pid}_${Date.now()}`;
    const store = openStore(tmp.dir);
    const ingest = await createTelemetryIngest({ store, dataDir: tmp.dir, clickhouseUrl: url!, clickhouseDatabase: database, threads: 1, log: quietLog });
    try {
      // Real rows: what the decoder wrote for one batch, read back from the store as RowBinary.
      ingest.push('robot-d', 'fleet-d', encodeBatch(Date.now(), 5));
      await ingest.flush();
      const res = await fetch(`${url}/?database=${database}`, { method: 'POST', body: `SELECT ${INSERT_COLUMN_LIST.slice(1, -1)} FROM telemetry_samples WHERE robot_id = 'robot-d' FORMAT RowBinary` });
      expect(res.ok).toBe(true);
      const rows = new Uint8Array(await res.arrayBuffer());
      const again = async (): Promise<void> => ingest.sampleStore.insert([rows], rows.length, 5, 'fleetgw-test-token');
      await again();
      await again();
      const n = Number((await ingest.sampleStore.queryText("SELECT count() FROM telemetry_samples WHERE robot_id = 'robot-d'")).trim());
      // 5 from the ingest, then the same block twice with one token.
      expect(n).toBe(ingest.sampleStore.dedup === 'none' ? 15 : 10);
    } finally {
      await ingest.close();
      await store.close();
      await fetch(`${url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${database}` });
    }
  });
});

describe.skipIf(url === null)('an ambiguous insert (committed, then failed) on a server', () => {
  const tmp = tempDir('ingest-ch-ambiguous');
  afterAll(() => tmp.remove());

  it('is replayed without a second copy: by its token, or on 18.16 by looking for its first row', async () => {
    const database = `fleetgw_amb_${process.pid}_${Date.now()}`;
    const real = await openClickHouseStore({ url: url!, database });
    let failAfterCommit = 1;
    // The real server store; its first insert commits and then reports a failure (a timeout after sending).
    // Everything else is the real store's, through the prototype (its state is behind getters).
    const flaky: SampleStore = Object.assign(Object.create(real) as SampleStore, {
      insert: async (chunks: readonly Uint8Array[], bytes: number, rows: number, token?: string) => {
        await real.insert(chunks, bytes, rows, token);
        if (failAfterCommit-- > 0) throw new Error('timeout after sending');
      },
    });
    const store = openStore(tmp.dir);
    const ingest = await createTelemetryIngest({ store, dataDir: tmp.dir, threads: 1, log: quietLog, sampleStore: flaky, insert: { baseDelayMs: 10 } });
    try {
      for (let f = 0; f < 4; f++) ingest.push('robot-a', 'fleet-a', encodeBatch(1_800_000_000_000 + f * 100, 5));
      await ingest.flush();
      await until(() => ingest.stats().spoolBytes === 0, 10_000, 'spool drained');
      expect(ingest.stats().insertErrors).toBe(1);
      expect(await real.queryText("SELECT count(), uniqExact(ts_ms) FROM telemetry_samples WHERE robot_id = 'robot-a'")).toBe('20\t20\n');
      if (real.dedup === 'none') expect(ingest.stats().replaysFoundStored).toBe(1);
    } finally {
      await ingest.close();
      await store.close();
      await real.close();
      await fetch(`${url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${database}` });
    }
  });
});

describe.skipIf(url === null)('insert retries across a ClickHouse outage: the disk spool (issue 14 part 1)', () => {
  const tmp = tempDir('ingest-ch-outage');
  let server: ClickHouseTestServer | null = null;

  afterAll(async () => {
    await server?.dispose();
    tmp.remove();
  });

  it('spools rows while the server is down (memory released, robots not paused) and replays them when it is back', async () => {
    // A private server: stopping the shared one would break other test files.
    server = await startClickHouseServer();
    const store = openStore(tmp.dir);
    const ingest = await createTelemetryIngest({
      store, dataDir: tmp.dir, clickhouseUrl: server.url, threads: 1, log: quietLog,
      insert: { maxAgeMs: 10, baseDelayMs: 50, maxDelayMs: 200 },
    });
    const logFrom = warnings.length;
    try {
      await server.stop('SIGKILL');
      const t0 = Date.now();
      for (let f = 0; f < 10; f++) ingest.push('robot-x', 'fleet-9', encodeBatch(t0 + f * 100, 10));
      // Flush resolves once every block is in the store or the spool's backlog.
      await ingest.flush();
      await until(() => ingest.stats().insertErrors >= 2, 10_000, 'failed insert attempts');
      expect(ingest.stats()).toMatchObject({ rowsWritten: 0, queueBytes: 0, paused: false, rowsSpooled: 100 });
      expect(ingest.stats().spoolBytes).toBeGreaterThan(100 * 100);
      await server.start();
      await until(() => ingest.stats().rowsWritten === 100 && ingest.stats().spoolBytes === 0, 20_000, 'spool replayed');
      expect(ingest.stats()).toMatchObject({ rowsReplayed: 100, rowsFailed: 0, spoolBytes: 0, spoolBacklog: 0 });
      expect(await ingest.sampleStore.queryText("SELECT count() FROM telemetry_samples WHERE robot_id = 'robot-x'")).toBe('100\n');
      // The recovery is logged once, with what the outage cost.
      const recovered = warnings.slice(logFrom).filter((l) => l.startsWith('telemetry inserts recovered: spool drained '));
      expect(recovered).toHaveLength(1);
      const fields = JSON.parse(recovered[0]!.slice('telemetry inserts recovered: spool drained '.length)) as Record<string, unknown>;
      expect(fields).toMatchObject({ rowsReplayed: 100, blocksReplayed: expect.any(Number) });
      expect(fields.failedAttempts).toBeGreaterThanOrEqual(2);
      expect(fields.outageMs).toBeGreaterThan(0);
    } finally {
      await ingest.close();
      await store.close();
    }
  });

  it('replays at start-up what the previous process left in the spool, with no manual step', async () => {
    server ??= await startClickHouseServer();
    const dir = join(tmp.dir, 'restart');
    let store = openStore(dir);
    let ingest = await createTelemetryIngest({
      store, dataDir: dir, clickhouseUrl: server.url, threads: 1, log: quietLog,
      insert: { maxAgeMs: 10, baseDelayMs: 10, maxDelayMs: 20 },
    });
    await server.stop('SIGKILL');
    ingest.push('robot-y', 'fleet-9', encodeBatch(Date.now(), 7));
    await ingest.flush();
    await until(() => ingest.stats().insertErrors >= 1, 10_000, 'a failed insert');
    await ingest.close();
    await store.close();
    const files = readdirSync(join(dir, 'telemetry-spool')).filter((f) => f.endsWith('.rows'));
    expect(files).toHaveLength(1);
    expect(statSync(join(dir, 'telemetry-spool', files[0]!)).size).toBeGreaterThan(7 * 100);
    await server.start();
    store = openStore(dir);
    ingest = await createTelemetryIngest({ store, dataDir: dir, clickhouseUrl: server.url, threads: 1, log: quietLog });
    try {
      await until(() => ingest.stats().rowsReplayed === 7 && ingest.stats().spoolBytes === 0, 20_000, 'replayed at start-up');
      expect(await ingest.sampleStore.queryText("SELECT count() FROM telemetry_samples WHERE robot_id = 'robot-y'")).toBe('7\n');
      expect(readdirSync(join(dir, 'telemetry-spool')).filter((f) => f.endsWith('.rows'))).toHaveLength(0);
    } finally {
      await ingest.close();
      await store.close();
    }
  });
});
