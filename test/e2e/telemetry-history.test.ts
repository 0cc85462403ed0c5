/**
 * The telemetry history API through the real `fleetgw serve` (docs/telemetry-history.md), with the
 * embedded chdb store and with a ClickHouse server (Debian's 18.16 here): a robot agent sends known
 * samples over the robot link, then raw pages, the series, the path and the MCAP export are read
 * back over HTTP; the MCAP file is read with @mcap/core's indexed reader and every message is checked
 * against the schema its channel names in the file. Also: the 400s that name each limit, and access
 * as GET /v1/robots/{robot_id}.
 */
import { McapIndexedReader } from '@mcap/core';
import { Ajv } from 'ajv';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RobotAgent, type SampleInput } from '../../src/agent/index.js';
import { HealthLevel } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

const url = inject('clickhouseUrl');
const skipReason = inject('clickhouseSkipReason');

const N = 600; // one minute at 10 Hz
const EXPORT_LIMIT = 36_000;

function sample(t0: number, i: number): SampleInput {
  return {
    tsMs: t0 + i * 100,
    latitude: 52 + i * 1e-6, longitude: 5 + i * 2e-6, elevationM: 3,
    xM: i * 0.1, yM: -i * 0.05, zM: 0, headingDeg: 90,
    linearMps: i % 2 === 0 ? 1 : 2, angularDps: 0,
    batteryPercent: 80, voltageV: 48, charging: false,
    mode: 'autonomous', estop: false, mission: null,
    healthLevel: HealthLevel.OK, faults: i === 7 ? ['lidar,dirty'] : [], cpuTempC: 40, gpsFix: 4, mapId: '', loads: null,
  };
}

interface Setup {
  name: string;
  args: () => Promise<string[]>;
  cleanup?: () => Promise<void>;
}

const setups: Setup[] = [{ name: 'chdb', args: () => Promise.resolve([]) }];
const db = `e2e_hist_${process.pid}_${Date.now()}`;
setups.push({
  name: `a ClickHouse server${url === null ? ` (unavailable: ${skipReason})` : ''}`,
  args: async () => {
    await fetch(`${url}/`, { method: 'POST', body: `CREATE DATABASE IF NOT EXISTS ${db}` });
    return ['--clickhouse-url', `${url}/${db}`];
  },
  cleanup: async () => {
    await fetch(`${url}/`, { method: 'POST', body: `DROP DATABASE IF EXISTS ${db}` });
  },
});

describe.each(setups)('telemetry history through fleetgw serve with $name', (setup) => {
  const skip = setup.name !== 'chdb' && url === null;
  const d = makeDataDir();
  const robot = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r1']);
  const busy = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'busy']);
  const other = adminJson(['init', '--data-dir', d.dataDir, '--another-org', '--org', 'Other', '--fleet', 'Elsewhere']);
  // Twenty minutes ago: older than the default range (the last ten minutes), which must be empty.
  const t0 = Math.floor((Date.now() - 1_200_000) / 1000) * 1000;
  const range = `from_ms=${t0}&to_ms=${t0 + 60_000}`;
  let gw: RunningGateway | undefined;
  const agents: RobotAgent[] = [];
  const base = (): string => gw!.ready.http;
  const get = (path: string) => api(base(), d.apiKey, path);
  const tele = `/v1/robots/${robot.robotId}/telemetry`;

  beforeAll(async () => {
    if (skip) return;
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...(await setup.args())]);
    const start = (c: Record<string, string>): RobotAgent => {
      const a = new RobotAgent({ address: gw!.ready.grpc, robotId: c.robotId!, robotToken: c.robotToken!, onCommand: () => ({ accept: true }), maxQueuedSamples: 100_000, dedicatedConnection: true });
      a.start();
      agents.push(a);
      return a;
    };
    const a = start(robot);
    const b = start(busy);
    await until(() => a.connected && b.connected, 15_000, 'agents connected');
    a.sendSamples(Array.from({ length: N }, (_x, i) => sample(t0, i)));
    // One more than an export may hold, 10 ms apart (six minutes).
    for (let k = 0; k <= EXPORT_LIMIT; k += 2000) {
      b.sendSamples(Array.from({ length: Math.min(2000, EXPORT_LIMIT + 1 - k) }, (_x, i) => ({ ...sample(t0, 0), tsMs: t0 + (k + i) * 10 })));
    }
    await until(async () => (await get(`${tele}/series?${range}&max_points=1`)).body.points?.[0]?.count === N, 60_000, 'samples stored');
    await until(async () => (await api(base(), d.apiKey, `/v1/robots/${busy.robotId}/telemetry/series?from_ms=${t0}&to_ms=${t0 + 400_000}&max_points=1`)).body.points?.[0]?.count === EXPORT_LIMIT + 1, 60_000, 'busy robot stored');
  }, 150_000);

  afterAll(async () => {
    for (const a of agents) await a.stop();
    await gw?.stop();
    await setup.cleanup?.();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it.skipIf(skip)('pages raw samples with a bound cursor', async () => {
    const items: any[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const r = await get(`${tele}?${range}&limit=250${cursor ? `&cursor=${cursor}` : ''}`);
      expect(r.status).toBe(200);
      items.push(...r.body.items);
      sizes.push(r.body.items.length);
      cursor = r.body.next_cursor;
    } while (cursor !== null);
    expect(sizes).toEqual([250, 250, 100]);
    expect(items.map((s) => s.tsMs)).toEqual(Array.from({ length: N }, (_x, i) => t0 + i * 100));
    expect(items[7]).toMatchObject({ tsMs: t0 + 700, latitude: 52 + 7e-6, longitude: 5 + 14e-6, poseXM: 7 * 0.1, speedMps: 2, batteryPct: 80, charging: false, mode: 'autonomous', healthLevel: 'ok', faults: ['lidar,dirty'], gpsFix: 4 });
    expect(items[7].receivedAtMs).toBeGreaterThan(t0);
    // The cursor is bound to its query.
    const first = await get(`${tele}?${range}&limit=250`);
    const reused = await get(`${tele}?from_ms=${t0 + 1}&to_ms=${t0 + 60_000}&limit=250&cursor=${first.body.next_cursor}`);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toContain('different query');
    // Defaults: the last ten minutes before now (the samples are older than that: none).
    const recent = await get(tele);
    expect(recent.body).toEqual({ items: [], next_cursor: null });
  });

  it.skipIf(skip)('downsamples into fixed buckets with min/max/avg per field', async () => {
    const r = await get(`${tele}/series?${range}&max_points=60`);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ robotId: robot.robotId, fromMs: t0, toMs: t0 + 60_000, bucketMs: 1000 });
    expect(r.body.fields).toContain('speedMps');
    expect(r.body.points).toHaveLength(60);
    expect(r.body.points[3]).toMatchObject({ tsMs: t0 + 3000, count: 10, values: { speedMps: { min: 1, max: 2, avg: 1.5 }, batteryPct: { min: 80, max: 80, avg: 80 } } });
    const some = await get(`${tele}/series?${range}&fields=speedMps,poseXM`);
    expect(some.body.fields).toEqual(['speedMps', 'poseXM']);
    expect(some.body.bucketMs).toBe(200); // 60 s / 500 points = 120 ms, rounded up to 200
    expect(Object.keys(some.body.points[0].values).sort()).toEqual(['poseXM', 'speedMps']);
    const bad = await get(`${tele}/series?${range}&fields=speedMps,mode`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toContain('fields may name only numeric telemetry fields');
  });

  it.skipIf(skip)('draws the path as a GeoJSON LineString of [lon, lat]', async () => {
    const r = await get(`${tele}/path?${range}&max_points=6`);
    expect(r.status).toBe(200);
    expect(r.body.type).toBe('Feature');
    expect(r.body.geometry.type).toBe('LineString');
    expect(r.body.properties).toEqual({ robotId: robot.robotId, fromMs: t0, toMs: t0 + 60_000, bucketMs: 10_000, points: 6 });
    const c = r.body.geometry.coordinates;
    expect(c).toHaveLength(6);
    // Each point is the bucket's last fix: i = 99, 199, ...
    expect(c[0][0]).toBeCloseTo(5 + 99 * 2e-6, 9);
    expect(c[0][1]).toBeCloseTo(52 + 99 * 1e-6, 9);
  });

  it.skipIf(skip)('exports MCAP that @mcap/core reads back, every message valid against its schema', async () => {
    const res = await fetch(`${base()}${tele}/export.mcap?${range}`, { headers: { authorization: `Bearer ${d.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(res.headers.get('content-disposition')).toBe(`attachment; filename="${robot.robotId}-${t0}-${t0 + 60_000}.mcap"`);
    const file = new Uint8Array(await res.arrayBuffer());
    const reader = await McapIndexedReader.Initialize({
      readable: { size: () => Promise.resolve(BigInt(file.byteLength)), read: (o, n) => Promise.resolve(file.subarray(Number(o), Number(o + n))) },
    });
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validators = new Map<number, { topic: string; schema: string; validate: ReturnType<Ajv['compile']> }>();
    for (const ch of reader.channelsById.values()) {
      const schema = reader.schemasById.get(ch.schemaId)!;
      expect(schema.encoding).toBe('jsonschema');
      expect(ch.messageEncoding).toBe('json');
      validators.set(ch.id, { topic: ch.topic, schema: schema.name, validate: ajv.compile(JSON.parse(new TextDecoder().decode(schema.data))) });
    }
    expect([...validators.values()].map((v) => `${v.topic} ${v.schema}`).sort()).toEqual(['/location foxglove.LocationFix', '/pose foxglove.PoseInFrame', '/telemetry fleetgw.TelemetrySample']);
    const counts = new Map<string, number>();
    let firstFix: any;
    let lastTelemetry: any;
    for await (const m of reader.readMessages()) {
      const v = validators.get(m.channelId)!;
      const msg = JSON.parse(new TextDecoder().decode(m.data));
      if (!v.validate(msg)) throw new Error(`${v.topic}: ${ajv.errorsText(v.validate.errors)}`);
      counts.set(v.topic, (counts.get(v.topic) ?? 0) + 1);
      if (v.topic === '/location') firstFix ??= msg;
      if (v.topic === '/telemetry') lastTelemetry = msg;
      expect(m.logTime).toBe(BigInt(msg.timestamp.sec) * 1_000_000_000n + BigInt(msg.timestamp.nsec));
    }
    expect(Object.fromEntries(counts)).toEqual({ '/location': N, '/pose': N, '/telemetry': N });
    expect(firstFix).toMatchObject({ latitude: 52, longitude: 5, altitude: 3, timestamp: { sec: t0 / 1000, nsec: 0 } });
    expect(lastTelemetry).toMatchObject({ tsMs: t0 + (N - 1) * 100, poseXM: expect.closeTo((N - 1) * 0.1, 9) });
    expect(reader.metadataIndexes.map((x) => x.name)).toEqual(['fleetgw.export', 'fleetgw.export.result']);
    const result = [];
    for await (const m of reader.readMetadata({ name: 'fleetgw.export.result' })) result.push(Object.fromEntries(m.metadata));
    expect(result).toEqual([{ samples: String(N), complete: 'true' }]);
  });

  it.skipIf(skip)('answers 400 naming the limit a request would pass', async () => {
    const now = Date.now();
    const cases: [string, string][] = [
      [`${tele}?from_ms=${now - 25 * 3600_000}&to_ms=${now}`, 'from_ms must be at most 24 hours before to_ms'],
      [`${tele}/series?from_ms=${now - 25 * 3600_000}`, 'from_ms must be at most 24 hours before to_ms'],
      [`${tele}/path?to_ms=${now + 3600_000}`, 'to_ms must not be in the future'],
      [`${tele}?${range}&limit=10001`, 'limit'],
      [`${tele}/series?${range}&max_points=5001`, 'max_points'],
      [`${tele}/path?${range}&max_points=0`, 'max_points'],
      [`${tele}/export.mcap?from_ms=${t0 + 1000}&to_ms=${t0}`, 'from_ms must be before to_ms'],
      [`/v1/robots/${busy.robotId}/telemetry/export.mcap?from_ms=${t0}&to_ms=${t0 + 400_000}`, `more than ${EXPORT_LIMIT} samples, the MCAP export limit`],
    ];
    for (const [path, text] of cases) {
      const r = await get(path);
      expect({ path, status: r.status, code: r.body.code }).toEqual({ path, status: 400, code: 'bad_request' });
      expect(r.body.error).toContain(text);
    }
    expect((await get(`${tele}?${range}&limit=10001`)).body.error).toContain('10000');
    expect((await get(`${tele}/series?${range}&max_points=5001`)).body.error).toContain('5000');
    // One sample fewer fits.
    const fits = await fetch(`${base()}/v1/robots/${busy.robotId}/telemetry/export.mcap?from_ms=${t0}&to_ms=${t0 + EXPORT_LIMIT * 10}`, { headers: { authorization: `Bearer ${d.apiKey}` } });
    expect(fits.status).toBe(200);
    await fits.arrayBuffer();
  });

  it.skipIf(skip)('lets in exactly the callers GET /v1/robots/{robot_id} lets in', async () => {
    for (const p of ['', '/series', '/path', '/export.mcap']) {
      const foreign = await api(base(), other.apiKey!, `${tele}${p}?${range}`);
      expect(foreign.status).toBe(404);
      expect(foreign.body.code).toBe('not_found');
      expect((await api(base(), other.apiKey!, `/v1/robots/${robot.robotId}`)).status).toBe(404);
      const none = await fetch(`${base()}${tele}${p}?${range}`);
      expect(none.status).toBe(401);
    }
  });
});
