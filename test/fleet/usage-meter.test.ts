/** The usage meter: distance and time from the snapshots it is told of; mission counts seeded once from the run records, then counted as runs finish, kept across a restart. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { haversineM, UsageMeter } from '../../src/fleet/robots/details/usage-meter.js';
import type { RunRecord } from '../../src/missions/runs/records.js';
import { putNewRun } from '../../src/missions/runs/runs.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { snapshotBytes } from './alerts-support.js';

describe('UsageMeter', () => {
  let dir: string;
  let store: Store;
  let robotId: string;
  let fleetId: string;
  let run: (state: RunRecord['state']) => RunRecord;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-usage-'));
    store = openStore(dir);
    const org = createOrg(store, 'o');
    fleetId = createFleet(store, org.orgId, 'f').fleetId;
    robotId = addRobot(store, { fleetId, name: 'r', capabilities: [], active: true }).record.robotId;
    run = (state) => ({
      runId: randomUUID(), orgId: org.orgId, fleetId, missionId: randomUUID(), scheduleId: null, robotId, state, progressPct: 100, stepIndex: 0,
      remainingDistanceM: 0, etaS: 0, detail: null, cancelRequested: null, correlationId: randomUUID(), startedAtMs: 1000, endedAtMs: 2000,
      lastReportAtMs: 2000, fireKey: null, startCommandId: null, name: 'n',
    });
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('seeds from the kept runs once, then counts each finish once, and keeps the counts across a restart', async () => {
    await store.root.transaction(() => {
      putNewRun(store, run('completed'));
      putNewRun(store, run('failed'));
      putNewRun(store, run('cancelled'));
    });
    const meter = new UsageMeter(store);
    expect(meter.usage(robotId)).toMatchObject({ missionsCompleted: 1, missionsFailed: 1, firstSeenAtMs: null, distanceM: 0 });
    const done = run('completed');
    meter.runFinished(done, 'running');
    meter.runFinished(done, 'completed');
    meter.runFinished(run('aborted'), 'running');
    meter.runFinished(run('failed'), 'paused');
    expect(meter.usage(robotId)).toMatchObject({ missionsCompleted: 2, missionsFailed: 2 });
    await meter.stop();
    await store.root.committed;
    expect(new UsageMeter(store).usage(robotId)).toMatchObject({ missionsCompleted: 2, missionsFailed: 2 });
    expect(meter.usage(randomUUID())).toBeUndefined();
  });

  it('adds distance and operating time between the snapshots it is told of, skipping gaps, jumps and older samples', async () => {
    const meter = new UsageMeter(store, { maxGapMs: 10_000, maxSpeedMps: 20 });
    const at = (tsMs: number, receivedAtMs: number, lat: number) => meter.observe(robotId, snapshotBytes(robotId, fleetId, { tsMs, receivedAtMs, lat, lon: 5 }));
    at(1_000, 50_000, 52);
    expect(meter.usage(robotId)).toMatchObject({ firstSeenAtMs: 50_000, lastSeenAtMs: 50_000, distanceM: 0, operatingMs: 0 });
    at(2_000, 51_000, 52.0001); // 11.1 m in 1 s
    expect(meter.usage(robotId)!.distanceM).toBeCloseTo(11.1, 1);
    expect(meter.usage(robotId)!.operatingMs).toBe(1_000);
    at(1_500, 52_000, 53); // older robot clock than the last measured: nothing
    expect(meter.usage(robotId)).toMatchObject({ operatingMs: 1_000, lastSeenAtMs: 51_000 });
    at(3_000, 52_000, 52.01); // 1.1 km in 1 s: time counts, the jump does not
    expect(meter.usage(robotId)!.operatingMs).toBe(2_000);
    expect(meter.usage(robotId)!.distanceM).toBeCloseTo(11.1, 1);
    at(4_000, 82_000, 52.0101); // 30 s gap: neither
    expect(meter.usage(robotId)).toMatchObject({ operatingMs: 2_000, lastSeenAtMs: 82_000, firstSeenAtMs: 50_000 });
    meter.observe(robotId, Uint8Array.of(99, 1, 2)); // unknown format: ignored
    meter.observe(randomUUID(), snapshotBytes(robotId, fleetId, { tsMs: 5_000 })); // unknown robot: ignored
    await meter.stop();
    await store.root.committed;
    expect(new UsageMeter(store).usage(robotId)).toMatchObject({ operatingMs: 2_000, firstSeenAtMs: 50_000, lastSeenAtMs: 82_000 });
  });

  it('never throws into the snapshot writer: a failing first read is logged and that snapshot skipped', async () => {
    const other = openStore(mkdtempSync(join(tmpdir(), 'fleetgw-usage-closed-')));
    const errors: unknown[] = [];
    const meter = new UsageMeter(other, { log: { error: (o: unknown) => errors.push(o) } as unknown as Logger });
    await other.close(); // every LMDB read now throws
    expect(() => meter.observe(robotId, snapshotBytes(robotId, fleetId, { tsMs: 1 }))).not.toThrow();
    expect(() => meter.observe(robotId, snapshotBytes(robotId, fleetId, { tsMs: 2 }))).not.toThrow();
    expect(errors).toHaveLength(1); // at most once a minute
  });

  it('measures great-circle distance', () => {
    expect(haversineM(52, 5, 52.001, 5)).toBeCloseTo(111.2, 0);
  });
});
