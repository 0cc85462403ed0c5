/**
 * Telemetry history over the same samples in chdb and in a real ClickHouse server (Debian's 18.16
 * here): one bound-parameter SQL per read, identical answers, and the answers the samples imply
 * (docs/telemetry-history.md).
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { McapIndexedReader } from '@mcap/core';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { TelemetryBatchSchema, TelemetrySampleSchema, type TelemetrySample } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { exportMcap, readPath, readSamples, readSeries, type HistoryRobot, type HistorySelect } from '../../src/fleet/history/telemetry/history.js';
import type { HistoryRange } from '../../src/fleet/history/telemetry/limits.js';

/** An export's whole file, collected from its stream. */
async function exportFile(select: HistorySelect, robot: HistoryRobot, range: HistoryRange): Promise<Uint8Array> {
  const r = await exportMcap(select, robot, range);
  if ('tooMany' in r) throw new Error('too many');
  const parts: Uint8Array[] = [];
  await r.produce({ write: (c) => Promise.resolve(void parts.push(c.slice())) });
  return Buffer.concat(parts);
}
import { SERIES_FIELD_NAMES } from '../../src/fleet/history/telemetry/fields.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { createTelemetryIngest, type TelemetryIngest } from '../../src/telemetry/ingest/ingest.js';
import { captureLog } from '../support/capture-log.js';
import { tempDir } from '../telemetry/helpers.js';

const url = inject('clickhouseUrl');

/** A sample without the gateway's receive time. */
function robotPart(v: unknown): unknown {
  const { receivedAtMs: _r, ...rest } = v as Record<string, unknown>;
  return rest;
}
const skipReason = inject('clickhouseSkipReason');

function s(tsMs: number, i: number): TelemetrySample {
  return create(TelemetrySampleSchema, {
    tsMs: BigInt(tsMs),
    position: { latitude: 52 + i * 1e-5, longitude: 13 + i * 2e-5, elevationM: 30 },
    pose: { xM: i, yM: -i, zM: 0, headingDeg: 90 },
    velocity: { linearMps: i % 10, angularDps: 0 },
    battery: { percent: 100 - i / 10, voltageV: 48, charging: i % 2 === 0 },
    mode: 'autonomous',
    health: { level: 1, faults: i === 3 ? ['motor,left', '50%', "it's"] : [], cpuTempC: 40 },
  });
}

describe.skipIf(url === null)(`telemetry history on chdb and on a ClickHouse server${url === null ? ` (skipped: ${skipReason})` : ''}`, () => {
  const tmp = tempDir('hist');
  const database = `fleetgw_hist_${process.pid}_${Date.now()}`;
  let store: Store;
  let chdb: TelemetryIngest;
  let server: TelemetryIngest;
  let selects: [string, HistorySelect][];
  const robot = { robotId: '', fleetId: '' };
  // 100 samples at 10 Hz from a round second; i = 74 and 75 share a timestamp (a page must not split them).
  const t0 = Math.floor((Date.now() - 120_000) / 1000) * 1000;
  const tsOf = (i: number): number => t0 + (i <= 74 ? i : i - 1) * 100;
  const range = { fromMs: t0, toMs: t0 + 10_000 };

  beforeAll(async () => {
    await fetch(`${url}/`, { method: 'POST', body: `CREATE DATABASE IF NOT EXISTS ${database}` });
    store = openStore(`${tmp.dir}/gw`);
    const log = captureLog([]);
    chdb = await createTelemetryIngest({ store, dataDir: `${tmp.dir}/chdb`, threads: 1, log });
    server = await createTelemetryIngest({ store, dataDir: `${tmp.dir}/ch`, clickhouseUrl: url!, clickhouseDatabase: database, threads: 1, log });
    const org = createOrg(store, 'org');
    robot.fleetId = createFleet(store, org.orgId, 'fleet').fleetId;
    robot.robotId = addRobot(store, { fleetId: robot.fleetId, name: 'a', capabilities: [], active: true }).record.robotId;
    const samples = Array.from({ length: 100 }, (_x, i) => s(tsOf(i), i));
    const batch = toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples }));
    for (const ingest of [chdb, server]) {
      ingest.push(robot.robotId, robot.fleetId, batch);
      // Another fleet's robot with the same id must not show (the fleet is part of the key).
      ingest.push(robot.robotId, randomUUID(), batch);
      await ingest.flush();
    }
    selects = [['chdb', (q) => chdb.sampleStore.select(q)], ['server', (q) => server.sampleStore.select(q)]];
  }, 60_000);

  afterAll(async () => {
    await chdb?.close();
    await server?.close();
    await store?.close();
    await fetch(`${url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${database}` });
    tmp.remove();
  });

  it('pages raw samples alike, never splitting a timestamp', async () => {
    const pages: unknown[][] = [];
    for (const [, select] of selects) {
      const seen: Record<string, unknown>[] = [];
      let after = range.fromMs - 1;
      const sizes: number[] = [];
      for (;;) {
        const p = await readSamples(select, robot, range, after, 25);
        seen.push(...p.samples);
        sizes.push(p.samples.length);
        if (!p.more) break;
        after = p.samples.at(-1)!.tsMs as number;
      }
      // 100 samples in pages of 25: the third page takes both samples of the shared timestamp.
      expect(sizes).toEqual([25, 25, 26, 24]);
      pages.push(seen);
    }
    // The gateway's receive times differ between the two ingests; everything the robot sent is equal.
    expect(pages[1]!.map(robotPart)).toEqual(pages[0]!.map(robotPart));
    const all = pages[0] as Record<string, unknown>[];
    expect(all).toHaveLength(100);
    expect(all[3]).toMatchObject({ tsMs: t0 + 300, poseXM: 3, poseYM: -3, speedMps: 3, charging: false, mode: 'autonomous', healthLevel: 'ok', faults: ['motor,left', '50%', "it's"], cpuTempC: 40 });
    expect(all[4]).toMatchObject({ faults: [], charging: true, estop: false, missionRunId: '' });
  });

  it('downsamples alike, with the right buckets and figures', async () => {
    const out = [];
    for (const [, select] of selects) out.push(await readSeries(select, robot, range, 10, SERIES_FIELD_NAMES));
    expect(out[1]).toEqual(out[0]);
    const { bucketMs, points } = out[0]!;
    expect(bucketMs).toBe(1000);
    expect(points).toHaveLength(10);
    expect(points[0]).toMatchObject({ tsMs: t0, count: 10, values: { poseXM: { min: 0, max: 9, avg: 4.5 }, speedMps: { min: 0, max: 9, avg: 4.5 } } });
    expect(points.reduce((n, p) => n + p.count, 0)).toBe(100);
    const few = await readSeries(selects[0]![1], robot, range, 500, ['batteryPct']);
    expect(few.bucketMs).toBe(20);
    expect(Object.keys(few.points[0]!.values)).toEqual(['batteryPct']);
  });

  it('draws the path alike, in [lon, lat], one fix per bucket', async () => {
    const out = [];
    for (const [, select] of selects) out.push(await readPath(select, robot, range, 4));
    expect(out[1]).toEqual(out[0]);
    const { bucketMs, coordinates } = out[0]!;
    expect(bucketMs).toBe(5000);
    expect(coordinates).toHaveLength(2);
    // The last sample of the first bucket is i = 49 (t0+4900); of the second, i = 99.
    expect(coordinates[0]![0]).toBeCloseTo(13 + 49 * 2e-5, 9);
    expect(coordinates[0]![1]).toBeCloseTo(52 + 49 * 1e-5, 9);
    expect(coordinates[1]![0]).toBeCloseTo(13 + 99 * 2e-5, 9);
  });

  it('shows what a robot sent as NaN as null in samples, and leaves it out of series, path and fixes', async () => {
    const nan = { robotId: addRobot(store, { fleetId: robot.fleetId, name: 'nan', capabilities: [], active: true }).record.robotId, fleetId: robot.fleetId };
    const odd = [s(t0, 1), s(t0 + 100, 2), s(t0 + 200, 3)];
    for (const x of odd) x.velocity!.linearMps = Number.NaN;
    odd[1]!.position!.latitude = Number.NaN;
    odd[2]!.pose!.xM = Number.POSITIVE_INFINITY;
    const batch = toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, { samples: odd }));
    for (const ingest of [chdb, server]) {
      ingest.push(nan.robotId, nan.fleetId, batch);
      await ingest.flush();
    }
    const r = { fromMs: t0, toMs: t0 + 1000 };
    for (const [, select] of selects) {
      const page = await readSamples(select, nan, r, t0 - 1, 10);
      expect(page.samples.map((x) => [x.speedMps, x.latitude === null, x.poseXM])).toEqual([[null, false, 1], [null, true, 2], [null, false, null]]);
      const series = await readSeries(select, nan, r, 1, SERIES_FIELD_NAMES);
      expect(series.points[0]!.count).toBe(3);
      expect(series.points[0]!.values.speedMps).toBeUndefined();
      expect(series.points[0]!.values.poseXM).toEqual({ min: 1, max: 2, avg: 1.5 });
      expect(series.points[0]!.values.latitude!.max).toBeCloseTo(52 + 3e-5, 9);
      expect((await readPath(select, nan, r, 1000)).coordinates).toHaveLength(2);
      const file = await exportFile(select, nan, r);
      const reader = await McapIndexedReader.Initialize({
        readable: { size: () => Promise.resolve(BigInt(file.byteLength)), read: (o, n) => Promise.resolve(file.subarray(Number(o), Number(o + n))) },
      });
      const topics = new Map([...reader.channelsById.values()].map((c) => [c.id, c.topic]));
      const seen: string[] = [];
      for await (const m of reader.readMessages()) seen.push(topics.get(m.channelId)!);
      // No fix for the NaN latitude, no pose for the infinite x: every message still fits its schema.
      expect(seen.sort()).toEqual(['/location', '/location', '/pose', '/pose', '/telemetry', '/telemetry', '/telemetry']);
    }
  });

  it('exports the same MCAP content from both stores, readable by @mcap/core', async () => {
    const decoded = [];
    for (const [, select] of selects) {
      const file = await exportFile(select, robot, range);
      const reader = await McapIndexedReader.Initialize({
        readable: { size: () => Promise.resolve(BigInt(file.byteLength)), read: (o, n) => Promise.resolve(file.subarray(Number(o), Number(o + n))) },
      });
      const topics = new Map([...reader.channelsById.values()].map((c) => [c.id, c.topic]));
      const msgs: [string, unknown][] = [];
      for await (const m of reader.readMessages()) msgs.push([topics.get(m.channelId)!, robotPart(JSON.parse(new TextDecoder().decode(m.data)))]);
      decoded.push(msgs);
    }
    expect(decoded[1]).toEqual(decoded[0]);
    expect(decoded[0]).toHaveLength(300);
  });
});
