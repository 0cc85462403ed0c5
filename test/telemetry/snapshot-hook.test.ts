/** The snapshot writer's hook (alerts read e-stop and battery there): once per written snapshot, never per sample. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { WriteFailure } from '../../src/store/background-writes.js';
import { SnapshotWriter } from '../../src/telemetry/ingest/snapshot-writer.js';
import { snapshotConditions } from '../../src/telemetry/sample/snapshot-codec.js';
import { alertWorld, snapshotBytes, type AlertWorld } from '../fleet/alerts-support.js';

let w: AlertWorld | undefined;

/** `row` in the middle of a larger buffer, as the ingest offers it (a range of a batch's rows). */
function amid(row: Uint8Array): [Uint8Array, number, number] {
  const rows = new Uint8Array(row.length + 12).fill(0xee);
  rows.set(row, 7);
  return [rows, 7, 7 + row.length];
}
afterEach(async () => {
  await w?.close();
});

describe('SnapshotWriter onWritten', () => {
  it('is told of each snapshot as it is written, with the newest row of the interval', async () => {
    w = alertWorld(1);
    const r0 = w.robotIds[0]!;
    const seen: { robotId: string; estop: boolean; batteryPct: number }[] = [];
    const writer = new SnapshotWriter(w.store.snapshots, w.store.writes, 60_000, (robotId, value) => {
      const c = snapshotConditions(value)!;
      seen.push({ robotId, estop: c.estop, batteryPct: c.batteryPct });
    });
    // Three samples in one interval: one write, the newest.
    for (let i = 1; i <= 3; i++) writer.offer(r0, 1_000 + i, ...amid(snapshotBytes(r0, w.fleetId, { tsMs: 1_000 + i, estop: i === 3, batteryPct: 50 - i }).subarray(1)));
    expect(seen).toEqual([]);
    await writer.flushed();
    expect(seen).toEqual([{ robotId: r0, estop: true, batteryPct: 47 }]);
    // An older sample is not written, so not reported.
    writer.offer(r0, 500, ...amid(snapshotBytes(r0, w.fleetId, { tsMs: 500 }).subarray(1)));
    await writer.flushed();
    expect(seen).toHaveLength(1);
    expect(snapshotConditions(w.store.snapshots.get(r0))).toMatchObject({ fleetId: w.fleetId, tsMs: 1_003, estop: true });
    // Exactly the row's bytes behind the format byte: nothing of the buffer around it.
    expect(Buffer.from(w.store.snapshots.get(r0) as Uint8Array)).toEqual(Buffer.from(snapshotBytes(r0, w.fleetId, { tsMs: 1_003, estop: true, batteryPct: 47 })));
  });

  it('copies a shorter row over a longer one exactly, and a row longer than its buffer', async () => {
    w = alertWorld(1);
    const r0 = w.robotIds[0]!;
    const values: Uint8Array[] = [];
    const writer = new SnapshotWriter(w.store.snapshots, w.store.writes, 60_000, (_robotId, value) => values.push(Uint8Array.from(value)));
    const long = snapshotBytes(r0, w.fleetId, { tsMs: 1, faults: Array.from({ length: 40 }, (_, i) => `fault-code-${i}`) });
    const short = snapshotBytes(r0, w.fleetId, { tsMs: 2 });
    expect(long.length).toBeGreaterThan(256);
    writer.offer(r0, 1, ...amid(long.subarray(1)));
    await writer.flushed();
    writer.offer(r0, 2, ...amid(short.subarray(1)));
    await writer.flushed();
    expect(values.map((v) => Buffer.from(v))).toEqual([Buffer.from(long), Buffer.from(short)]);
    expect(Buffer.from(w.store.snapshots.get(r0) as Uint8Array)).toEqual(Buffer.from(short));
  });

  it('writes the newest row after its buffer grew, also when it is as long as the last one written', async () => {
    w = alertWorld(1);
    const r0 = w.robotIds[0]!;
    const values: Uint8Array[] = [];
    const writer = new SnapshotWriter(w.store.snapshots, w.store.writes, 60_000, (_robotId, value) => values.push(Uint8Array.from(value)));
    const short = (tsMs: number, estop: boolean): Uint8Array => snapshotBytes(r0, w!.fleetId, { tsMs, estop });
    const first = short(1, false);
    writer.offer(r0, 1, ...amid(first.subarray(1)));
    await writer.flushed();
    // One interval: a row longer than the buffer (it grows), then one as long as the first.
    const long = snapshotBytes(r0, w.fleetId, { tsMs: 2, faults: Array.from({ length: 40 }, (_, i) => `fault-code-${i}`) });
    expect(long.length).toBeGreaterThan(256);
    const second = short(3, true);
    expect(second.length).toBe(first.length);
    writer.offer(r0, 2, ...amid(long.subarray(1)));
    writer.offer(r0, 3, ...amid(second.subarray(1)));
    await writer.flushed();
    const third = short(4, false);
    writer.offer(r0, 4, ...amid(third.subarray(1)));
    await writer.flushed();
    expect(values.map((v) => Buffer.from(v))).toEqual([first, second, third].map((v) => Buffer.from(v)));
    expect(Buffer.from(w.store.snapshots.get(r0) as Uint8Array)).toEqual(Buffer.from(third));
  });

  it('reports every failed put as the telemetry module\'s, not only the one awaited', async () => {
    w = alertWorld(2);
    const [r0, r1] = [w.robotIds[0]!, w.robotIds[1]!];
    const failures: WriteFailure[] = [];
    w.store.writes.onFailure((f) => failures.push(f));
    vi.spyOn(w.store.snapshots, 'put').mockImplementation(() => Promise.reject(new Error('MDB_MAP_FULL')));
    const writer = new SnapshotWriter(w.store.snapshots, w.store.writes, 60_000);
    writer.offer(r0, 1, ...amid(snapshotBytes(r0, w.fleetId, { tsMs: 1 }).subarray(1)));
    writer.offer(r1, 1, ...amid(snapshotBytes(r1, w.fleetId, { tsMs: 1 }).subarray(1)));
    await expect(writer.flushed()).rejects.toThrow('MDB_MAP_FULL');
    await new Promise((r) => setImmediate(r));
    expect(failures.map((f) => [f.owner, f.db, (f.err as Error).message])).toEqual([
      ['telemetry', 'snapshots', 'MDB_MAP_FULL'],
      ['telemetry', 'snapshots', 'MDB_MAP_FULL'],
    ]);
  });
});
