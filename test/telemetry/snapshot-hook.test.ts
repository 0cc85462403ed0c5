/** The snapshot writer's hook (alerts read e-stop and battery there): once per written snapshot, never per sample. */
import { afterEach, describe, expect, it } from 'vitest';
import { SnapshotWriter } from '../../src/telemetry/snapshot-writer.js';
import { snapshotConditions } from '../../src/telemetry/snapshot-codec.js';
import { alertWorld, snapshotBytes, type AlertWorld } from '../fleet/alerts-support.js';

let w: AlertWorld | undefined;
afterEach(async () => {
  await w?.close();
});

describe('SnapshotWriter onWritten', () => {
  it('is told of each snapshot as it is written, with the newest row of the interval', async () => {
    w = alertWorld(1);
    const r0 = w.robotIds[0]!;
    const seen: { robotId: string; estop: boolean; batteryPct: number }[] = [];
    const writer = new SnapshotWriter(w.store.snapshots, 60_000, (robotId, value) => {
      const c = snapshotConditions(value)!;
      seen.push({ robotId, estop: c.estop, batteryPct: c.batteryPct });
    });
    // Three samples in one interval: one write, the newest.
    for (let i = 1; i <= 3; i++) writer.offer(r0, 1_000 + i, snapshotBytes(r0, w.fleetId, { tsMs: 1_000 + i, estop: i === 3, batteryPct: 50 - i }).subarray(1));
    expect(seen).toEqual([]);
    await writer.flushed();
    expect(seen).toEqual([{ robotId: r0, estop: true, batteryPct: 47 }]);
    // An older sample is not written, so not reported.
    writer.offer(r0, 500, snapshotBytes(r0, w.fleetId, { tsMs: 500 }).subarray(1));
    await writer.flushed();
    expect(seen).toHaveLength(1);
    expect(snapshotConditions(w.store.snapshots.get(r0))).toMatchObject({ fleetId: w.fleetId, tsMs: 1_003, estop: true });
  });
});
