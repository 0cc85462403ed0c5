/**
 * Utilization over the same telemetry and runs in chdb and in a real ClickHouse server (Debian's
 * 18.16 here): one bound-parameter SQL, identical figures, and the figures an operator expects
 * from a scripted robot day (docs/utilization.md).
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TelemetryBatchSchema, TelemetrySampleSchema, type TelemetrySample } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { utilization } from '../../src/fleet/history/utilization/utilization.js';
import { putNewRun } from '../../src/missions/runs/runs.js';
import type { RunRecord } from '../../src/missions/runs/records.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { createTelemetryIngest, type TelemetryIngest } from '../../src/telemetry/ingest/ingest.js';
import { captureLog } from '../support/capture-log.js';
import { tempDir } from '../telemetry/helpers.js';

const url = inject('clickhouseUrl');
const skipReason = inject('clickhouseSkipReason');

function s(tsMs: number, o: { speed: number; mode: string; charging?: boolean }): TelemetrySample {
  return create(TelemetrySampleSchema, {
    tsMs: BigInt(tsMs),
    position: { latitude: 48.1, longitude: 11.5, elevationM: 520 },
    velocity: { linearMps: o.speed },
    battery: { percent: 50, voltageV: 48, charging: o.charging ?? false },
    mode: o.mode,
  });
}

describe.skipIf(url === null)(`utilization on chdb and on a ClickHouse server${url === null ? ` (skipped: ${skipReason})` : ''}`, () => {
  const tmp = tempDir('util');
  const database = `fleetgw_util_${process.pid}_${Date.now()}`;
  let store: Store;
  let chdb: TelemetryIngest;
  let server: TelemetryIngest;
  let fleetId: string;
  let robotA: string;
  let robotB: string;
  const t0 = Math.floor((Date.now() - 300_000) / 5000) * 5000;
  const window = { fromMs: t0, toMs: t0 + 60_000 };

  beforeAll(async () => {
    await fetch(`${url}/`, { method: 'POST', body: `CREATE DATABASE IF NOT EXISTS ${database}` });
    store = openStore(`${tmp.dir}/gw`);
    const log = captureLog([]);
    chdb = await createTelemetryIngest({ store, dataDir: `${tmp.dir}/chdb`, threads: 1, log });
    server = await createTelemetryIngest({ store, dataDir: `${tmp.dir}/ch`, clickhouseUrl: url!, clickhouseDatabase: database, threads: 1, log });
    const org = createOrg(store, 'org');
    fleetId = createFleet(store, org.orgId, 'fleet').fleetId;
    robotA = addRobot(store, { fleetId, name: 'a', capabilities: [], active: true }).record.robotId;
    robotB = addRobot(store, { fleetId, name: 'b', capabilities: [], active: true }).record.robotId;
    // Robot A: 0-20 s driving at 1 m/s (a completed run covers 0-10 s), 20-30 s paused, 30-40 s
    // charging, then silent (offline). Robot B never reports. Another fleet's samples must not count.
    const samples: TelemetrySample[] = [];
    for (let t = 0; t < 40_000; t += 500) {
      samples.push(t < 20_000 ? s(t0 + t, { speed: 1, mode: 'autonomous' }) : t < 30_000 ? s(t0 + t, { speed: 0, mode: 'paused' }) : s(t0 + t, { speed: 0, mode: 'idle', charging: true }));
    }
    const batch = toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples }));
    for (const ingest of [chdb, server]) {
      ingest.push(robotA, fleetId, batch);
      ingest.push(robotB, randomUUID(), batch);
      await ingest.flush();
    }
    const run: RunRecord = {
      runId: randomUUID(), orgId: org.orgId, fleetId, missionId: randomUUID(), scheduleId: null, robotId: robotA, state: 'completed',
      progressPct: 100, stepIndex: 0, remainingDistanceM: 0, etaS: 0, detail: null, cancelRequested: null, correlationId: randomUUID(),
      startedAtMs: t0, endedAtMs: t0 + 10_000, lastReportAtMs: t0 + 10_000, fireKey: null, startCommandId: null, name: 'run',
    };
    await store.root.transaction(() => putNewRun(store, run));
  }, 60_000);

  afterAll(async () => {
    await chdb?.close();
    await server?.close();
    await store?.close();
    await fetch(`${url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${database}` });
    tmp.remove();
  });

  it('gives the same figures on both stores, and the right ones', async () => {
    const now = Date.now();
    const fromChdb = await utilization(store, (q) => chdb.sampleStore.select(q), fleetId, null, window, now);
    const fromServer = await utilization(store, (q) => server.sampleStore.select(q), fleetId, null, window, now);
    expect(fromServer).toEqual(fromChdb);
    const a = fromChdb.robots.find((r) => r.robotId === robotA);
    expect(a).toEqual({
      robotId: robotA, onlineMs: 40_000, runningMissionMs: 10_000, idleMs: 10_000, pausedMs: 10_000, chargingMs: 10_000, offlineMs: 20_000,
      missionsCompleted: 1, missionsFailed: 0, distanceM: 20,
    });
    const b = fromChdb.robots.find((r) => r.robotId === robotB);
    expect(b).toMatchObject({ onlineMs: 0, offlineMs: 60_000, distanceM: 0 });
    expect(fromChdb.fleet).toMatchObject({ robots: 2, onlineMs: 40_000, offlineMs: 80_000, missionsCompleted: 1, distanceM: 20 });
  });

  it('narrows to one robot and cuts a window that ends mid-slot', async () => {
    const w = { fromMs: t0 + 2_500, toMs: t0 + 12_500 };
    for (const ingest of [chdb, server]) {
      const r = await utilization(store, (q) => ingest.sampleStore.select(q), fleetId, robotA, w, Date.now());
      expect(r.robots).toEqual([{ robotId: robotA, onlineMs: 10_000, runningMissionMs: 10_000, idleMs: 0, pausedMs: 0, chargingMs: 0, offlineMs: 0, missionsCompleted: 1, missionsFailed: 0, distanceM: 10 }]);
    }
  });
});
