/**
 * Acknowledged telemetry on the gateway side (issue 14 part 1), through the real ingest, decode pool,
 * disk spool and embedded chdb: durable points reach the listener once a block is spooled, resent
 * batches are dropped by (robot, epoch, seq) in one run and across a restart, and an ambiguous
 * insert (the store committed, then the call failed) replayed with its token stores nothing twice.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/lmdb.js';
import { createTelemetryIngest, type TelemetryIngest } from '../../src/telemetry/ingest/ingest.js';
import { openChdbStore } from '../../src/telemetry/store/chdb-store.js';
import type { SampleStore } from '../../src/telemetry/store/sample-store.js';
import { captureLog } from '../support/capture-log.js';
import { encodeBatch, tempDir, until } from './helpers.js';

const quietLog = captureLog([]);

/** A TelemetryBatch with `seq` and `epoch` written first, as the agent writes them. */
function sequenced(seq: number, epoch: number, startTs: number, count: number): Uint8Array {
  const body = encodeBatch(startTs, count);
  const head: number[] = [];
  const varint = (v: number): void => {
    while (v >= 128) {
      head.push((v % 128) | 0x80);
      v = Math.floor(v / 128);
    }
    head.push(v);
  };
  head.push(0x10);
  varint(seq);
  head.push(0x18);
  varint(epoch);
  return Uint8Array.from([...head, ...body]);
}

async function count(ingest: TelemetryIngest, robot: string): Promise<number> {
  return Number((await ingest.sampleStore.queryText(`SELECT count() FROM telemetry_samples WHERE robot_id = '${robot}'`)).trim());
}

async function duplicates(ingest: TelemetryIngest, robot: string): Promise<number> {
  const q = `SELECT count() FROM (SELECT ts_ms, count() AS n FROM telemetry_samples WHERE robot_id = '${robot}' GROUP BY ts_ms HAVING n > 1)`;
  return Number((await ingest.sampleStore.queryText(q)).trim());
}

describe('acknowledged telemetry in the ingest (chdb)', () => {
  const tmp = tempDir('acks');
  afterAll(() => tmp.remove());

  it('reports durable points, drops resends in one run and after a restart, accepts a new epoch', async () => {
    const dir = `${tmp.dir}/restart`;
    let store = openStore(dir);
    let ingest = await createTelemetryIngest({ store, dataDir: dir, threads: 1, log: quietLog, insert: { maxAgeMs: 20 } });
    const seen: string[] = [];
    ingest.onDurable((robot, epoch, seq) => seen.push(`${robot}:${epoch}:${seq}`));
    const t0 = 1_800_000_000_000;
    try {
      for (let s = 1; s <= 5; s++) ingest.push('r1', 'f', sequenced(s, 77, t0 + s * 100, 2));
      ingest.push('r2', 'f', encodeBatch(t0, 3)); // an older agent: no seq, ingested as sent
      await ingest.flush();
      expect(seen.at(-1)).toBe('r1:77:5');
      expect(ingest.durableOf('r1')).toEqual({ epoch: 77, seq: 5 });
      expect(ingest.durableOf('r2')).toBeUndefined();
      // A resend after a reconnect: dropped, and the durable point is announced again.
      ingest.push('r1', 'f', sequenced(3, 77, t0 + 300, 2));
      expect(seen.at(-1)).toBe('r1:77:5');
      ingest.push('r1', 'f', sequenced(6, 77, t0 + 600, 2));
      await ingest.flush();
      expect(ingest.stats()).toMatchObject({ duplicateBatches: 1, sequencedBatches: 6 });
      expect(await count(ingest, 'r1')).toBe(12);
      expect(await count(ingest, 'r2')).toBe(3);
    } finally {
      await ingest.close();
      await store.close();
    }
    store = openStore(dir);
    ingest = await createTelemetryIngest({ store, dataDir: dir, threads: 1, log: quietLog, insert: { maxAgeMs: 20 } });
    try {
      // The checkpoint remembers what was durable: the agent's resends are dropped.
      expect(ingest.durableOf('r1')).toEqual({ epoch: 77, seq: 6 });
      for (let s = 4; s <= 7; s++) ingest.push('r1', 'f', sequenced(s, 77, t0 + s * 100, 2));
      // A restarted agent (new epoch) starts at 1 again and is not taken for a resend.
      ingest.push('r1', 'f', sequenced(1, 78, t0 + 10_000, 2));
      await ingest.flush();
      expect(ingest.stats().duplicateBatches).toBe(3);
      expect(await count(ingest, 'r1')).toBe(16);
      expect(await duplicates(ingest, 'r1')).toBe(0);
      expect(ingest.durableOf('r1')).toEqual({ epoch: 78, seq: 1 });
    } finally {
      await ingest.close();
      await store.close();
    }
  });

  it('an ambiguous insert (committed, then failed) is replayed with its token and stored once', async () => {
    const dir = `${tmp.dir}/ambiguous`;
    const store = openStore(dir);
    const chdb = await openChdbStore({ dataDir: dir });
    let failAfterCommit = 2;
    // The real chdb store; its first two inserts commit and then report a failure, as a timeout
    // after the server received the rows would.
    const flaky: SampleStore = {
      ...chdb,
      insertFile: async (path, rows, token) => {
        await chdb.insertFile!(path, rows, token);
        if (failAfterCommit-- > 0) throw new Error('timeout after sending');
      },
    };
    const ingest = await createTelemetryIngest({ store, dataDir: dir, threads: 1, log: quietLog, sampleStore: flaky, insert: { maxAgeMs: 20, baseDelayMs: 10 } });
    try {
      for (let s = 1; s <= 10; s++) ingest.push('r3', 'f', sequenced(s, 5, 1_800_000_000_000 + s * 100, 5));
      await ingest.flush();
      await until(() => ingest.stats().spoolBytes === 0, 10_000, 'spool drained');
      expect(ingest.stats().insertErrors).toBe(2);
      expect(await count(ingest, 'r3')).toBe(50);
      expect(await duplicates(ingest, 'r3')).toBe(0);
    } finally {
      await ingest.close();
      await chdb.close();
      await store.close();
    }
  });
});
