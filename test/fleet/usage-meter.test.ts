/** The usage meter's mission counts: seeded once from the run records, then counted as runs finish, kept across a restart. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { haversineM, UsageMeter } from '../../src/fleet/robot-details/usage-meter.js';
import type { RunRecord } from '../../src/missions/runs/records.js';
import { putNewRun } from '../../src/missions/runs/runs.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';

describe('UsageMeter', () => {
  let dir: string;
  let store: Store;
  let robotId: string;
  let run: (state: RunRecord['state']) => RunRecord;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-usage-'));
    store = openStore(dir);
    const org = createOrg(store, 'o');
    const fleetId = createFleet(store, org.orgId, 'f').fleetId;
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
    const meter = new UsageMeter(store, { online: () => [] });
    expect(meter.usage(robotId)).toMatchObject({ missionsCompleted: 1, missionsFailed: 1, firstSeenAtMs: null, distanceM: 0 });
    const done = run('completed');
    meter.runFinished(done, 'running');
    meter.runFinished(done, 'completed');
    meter.runFinished(run('aborted'), 'running');
    meter.runFinished(run('failed'), 'paused');
    expect(meter.usage(robotId)).toMatchObject({ missionsCompleted: 2, missionsFailed: 2 });
    await meter.stop();
    await store.root.committed;
    expect(new UsageMeter(store, { online: () => [] }).usage(robotId)).toMatchObject({ missionsCompleted: 2, missionsFailed: 2 });
    expect(meter.usage(randomUUID())).toBeUndefined();
  });

  it('measures great-circle distance', () => {
    expect(haversineM(52, 5, 52.001, 5)).toBeCloseTo(111.2, 0);
  });
});
