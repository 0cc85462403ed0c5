/**
 * The ingest end to end on the embedded engine: raw batches -> piscina decode -> chdb rows + LMDB
 * snapshots. One chdb data path per test file (chdb keeps one path per process at a time).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { openChdbStore } from '../../src/telemetry/store/chdb-store.js';
import { createTelemetryIngest, type TelemetryIngest } from '../../src/telemetry/ingest/ingest.js';
import { decodeSnapshot } from '../../src/telemetry/sample/snapshot-codec.js';
import { CORRUPT_FRAME, encodeBatch, encodeSamples, sample, tempDir } from './helpers.js';

describe('telemetry ingest into chdb', () => {
  const tmp = tempDir('ingest-chdb');
  let store: Store;
  let ingest: TelemetryIngest;

  beforeAll(async () => {
    store = openStore(tmp.dir);
    ingest = await createTelemetryIngest({ store, dataDir: tmp.dir, threads: 1, maxBatchFrames: 50 });
  });

  afterAll(async () => {
    await ingest.close();
    await store.close();
    tmp.remove();
  });

  it('lands every sample as a row and keeps the newest snapshot per robot', async () => {
    expect(ingest.storeKind).toBe('chdb');
    // Recent timestamps: the modern table has a TTL, and merges would delete rows older than the retention.
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    // 3 robots x 40 frames x 25 samples = 3,000 rows, frames interleaved like a live link.
    for (let f = 0; f < 40; f++) {
      for (let r = 0; r < 3; r++) ingest.push(`robot-${r}`, 'fleet-a', encodeBatch(t0 + f * 1_000 + r, 25, f * 25));
    }
    ingest.push('robot-0', 'fleet-a', CORRUPT_FRAME);
    // An old sample arriving last must not replace robot-1's newer snapshot.
    ingest.push('robot-1', 'fleet-a', encodeSamples([sample(t0 - 5_000, 1)]));
    await ingest.flush();

    const st = ingest.stats();
    expect(st.samplesIn).toBe(3_001);
    expect(st.rowsWritten).toBe(3_001);
    expect(st.corruptFrames).toBe(1);
    expect(st.queueBytes).toBe(0);
    expect(st.tasksInFlight).toBe(0);

    const counts = await ingest.sampleStore.queryText(
      "SELECT robot_id, count(), max(ts_ms) FROM telemetry_samples WHERE fleet_id = 'fleet-a' GROUP BY robot_id ORDER BY robot_id",
    );
    expect(counts.trim().split('\n')).toEqual([
      `robot-0\t1000\t${t0 + 39_000 + 240}`,
      `robot-1\t1001\t${t0 + 39_001 + 240}`,
      `robot-2\t1000\t${t0 + 39_002 + 240}`,
    ]);
    // Field values of one known row (robot-2, frame 7, sample 3 -> index 178).
    const row = await ingest.sampleStore.queryText(
      `SELECT lat, pose_y_m, heading_deg, battery_pct, charging, estop, mode, mission_run_id, step_index, health_level, faults, gps_fix, toUnixTimestamp64Milli(ts)
       FROM telemetry_samples WHERE robot_id = 'robot-2' AND ts_ms = ${t0 + 7_000 + 2 + 30}`,
    );
    expect(row.trim().split('\t')).toEqual([
      String(48.1 + 178 / 1e4), '356', String((178 * 7) % 360), '80', '1', '0', 'autonomous', 'run-1', '8', 'warn',
      "['motor_overtemp']", '4', String(t0 + 7_032),
    ]);

    const snap = decodeSnapshot(store.snapshots.get('robot-1'))!;
    expect(snap.tsMs).toBe(t0 + 39_001 + 240);
    expect(snap.fleetId).toBe('fleet-a');
    expect(snap.mission?.runId).toBe(`run-${(39 * 25 + 24) % 3}`);
    expect(decodeSnapshot(store.snapshots.get('robot-0'))!.tsMs).toBe(t0 + 39_000 + 240);
  });

  it('a robot that moves to another fleet mid-batch: each row carries the fleet it was sent under', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    ingest.push('mover', 'fleet-m1', encodeBatch(t0, 2));
    ingest.push('mover', 'fleet-m2', encodeBatch(t0 + 100, 3));
    ingest.push('mover', 'fleet-m2', encodeBatch(t0 + 200, 1));
    ingest.push('mover', 'fleet-m1', encodeBatch(t0 + 300, 4));
    await ingest.flush();
    const rows = await ingest.sampleStore.queryText("SELECT fleet_id, count() FROM telemetry_samples WHERE robot_id = 'mover' GROUP BY fleet_id ORDER BY fleet_id");
    expect(rows).toBe('fleet-m1\t6\nfleet-m2\t4\n');
    expect(decodeSnapshot(store.snapshots.get('mover'))).toMatchObject({ tsMs: t0 + 330, fleetId: 'fleet-m1' });
  });

  it('a sink bound to a robot and fleet (sinkFor) stores like push, each row under the fleet it was sent with', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 3_600_000;
    const s1 = ingest.sinkFor('sinker', 'fleet-s1');
    const s2 = ingest.sinkFor('sinker', 'fleet-s2');
    s1(encodeBatch(t0, 2));
    s2(encodeBatch(t0 + 100, 3));
    ingest.push('sinker', 'fleet-s1', encodeBatch(t0 + 200, 1));
    s2(encodeBatch(t0 + 300, 4));
    await ingest.flush();
    const rows = await ingest.sampleStore.queryText("SELECT fleet_id, count() FROM telemetry_samples WHERE robot_id = 'sinker' GROUP BY fleet_id ORDER BY fleet_id");
    expect(rows).toBe('fleet-s1\t3\nfleet-s2\t7\n');
    expect(decodeSnapshot(store.snapshots.get('sinker'))).toMatchObject({ tsMs: t0 + 330, fleetId: 'fleet-s2' });
  });

  it('stores every row when batches outnumber the shared task slots and one frame outgrows its slot', async () => {
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 1_800_000;
    const withoutSlot = ingest.stats().batchesWithoutSlot;
    // 60 batches of 50 frames pushed in one turn: far more than the 15 slots, so later batches pack into
    // private buffers; one 15,000-sample frame (~1.5 MB) does not fit a 1.25 MiB slot either.
    for (let f = 0; f < 3_000; f++) ingest.push(`slot-robot-${f % 10}`, 'fleet-slots', encodeBatch(t0 + f * 10, 2, f * 2));
    ingest.push('slot-robot-big', 'fleet-slots', encodeBatch(t0, 15_000, 0));
    await ingest.flush();
    const counts = await ingest.sampleStore.queryText(
      "SELECT count(), uniqExact(robot_id, ts_ms) FROM telemetry_samples WHERE fleet_id = 'fleet-slots'",
    );
    expect(counts.trim()).toBe('21000\t21000');
    expect(ingest.stats().queueBytes).toBe(0);
    // Every slot came back: at most the one the next batch is being packed into is held.
    expect(ingest.stats().taskSlotsInUse).toBeLessThanOrEqual(1);
    // Counted: at least the batch holding the frame that outgrew its slot went to the pool without one.
    expect(ingest.stats().batchesWithoutSlot).toBeGreaterThan(withoutSlot);
    expect(decodeSnapshot(store.snapshots.get('slot-robot-9'))!.tsMs).toBe(t0 + 2_999 * 10 + 10);
  });

  it('round-trips strings with quotes, tabs, newlines, backslashes and non-ASCII', async () => {
    const nasty = ["it's", 'tab\there', 'new\nline', 'back\\slash', 'ünïcødé ✓', "[',']"];
    ingest.push('robot-\tx', 'fleet-esc', encodeSamples([sample(Date.now(), 1, { faults: nasty, mode: 'man\\ual\t1', runId: '' })]));
    await ingest.flush();
    const out = await ingest.sampleStore.queryText(
      "SELECT robot_id, mode, mission_run_id, length(faults), arrayStringConcat(faults, '|') FROM telemetry_samples WHERE fleet_id = 'fleet-esc' FORMAT JSONCompactEachRow",
    );
    expect(JSON.parse(out)).toEqual(['robot-\tx', 'man\\ual\t1', '', 6, nasty.join('|')]);
    const snap = decodeSnapshot(store.snapshots.get('robot-\tx'))!;
    expect(snap.mission).toBeNull();
    expect(snap.health.faults).toEqual(nasty);
  });

  it('close() drains what was pushed without a flush: rows and snapshots survive a restart', async () => {
    const t = Date.now();
    for (let i = 0; i < 30; i++) ingest.push('robot-late', 'fleet-close', encodeBatch(t + i * 100, 10));
    await ingest.close();
    expect(ingest.stats()).toMatchObject({ rowsWritten: expect.any(Number), queueBytes: 0, tasksInFlight: 0, insertsInFlight: 0 });
    ingest.push('robot-late', 'fleet-close', encodeBatch(t, 1)); // after close: refused, counted
    expect(ingest.stats().framesRejected).toBe(1);
    const reopened = await openChdbStore({ dataDir: tmp.dir });
    try {
      expect(await reopened.queryText("SELECT count() FROM telemetry_samples WHERE fleet_id = 'fleet-close'")).toBe('300\n');
    } finally {
      await reopened.close();
    }
    expect(decodeSnapshot(store.snapshots.get('robot-late'))!.tsMs).toBe(t + 29 * 100 + 90);
  });
});
