/**
 * The whole telemetry pipe through the real gateway process: robot agent -> gRPC -> decode workers ->
 * chdb or a ClickHouse server (rows), LMDB (snapshot served by REST) and the live WebSocket.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { RobotAgent } from '../../src/agent/index.js';
import { openChdbStore } from '../../src/telemetry/store/chdb-store.js';
import { INSERT_COLUMNS } from '../../src/telemetry/store/columns.js';
import { SAMPLE_FIELDS } from '../../src/telemetry/sample/sample-table.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess } from '../support/gateway.js';
import { testSample, valueAt } from '../support/samples.js';
import { until } from '../support/until.js';


const ROBOTS = 3;
const BATCHES = 10;
const PER_BATCH = 200;

async function runPipe(extraArgs: string[]): Promise<{
  dataDir: string; sent: number; live: number; robots: string[]; exitCode: number | null; newestLive: Record<string, unknown>;
}> {
  const d = makeDataDir();
  const creds = Array.from({ length: ROBOTS }, (_, i) => adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `r${i}`]));
  const gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...extraArgs]);
  const robots = creds.map((c) => c.robotId!);
  let ws: WebSocket | undefined;
  let agents: RobotAgent[] = [];
  try {
    // Before any report: the nested telemetry objects are null.
    const before = await api(gw.ready.http, d.apiKey, `/v1/robots/${robots[0]}`);
    expect(before.status).toBe(200);
    expect(before.body.motionTelemetry).toBeNull();
    expect(before.body.statusTelemetry).toBeNull();

    // A dashboard: ticket, then WebSocket, then subscribe to robot 0 only.
    const t = await api(gw.ready.http, d.apiKey, '/v1/telemetry/stream-tickets', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId }) });
    expect(t.status).toBe(201);
    expect(t.body.url).not.toContain(t.body.ticket);
    const socket = new WebSocket(t.body.url);
    ws = socket;
    const live: Record<string, unknown>[] = [];
    let subscribed = false;
    socket.on('message', (data) => {
      const msg = JSON.parse((data as Buffer).toString('utf8'));
      if (msg.op === 'subscribed') subscribed = true;
      if (msg.robot_id !== undefined) live.push(msg);
    });
    await new Promise<void>((resolve, reject) => {
      socket.once('open', () => resolve());
      socket.once('error', reject);
    });
    socket.send(JSON.stringify({ op: 'subscribe', ticket: t.body.ticket, robot_ids: [robots[0]], encoding: 'json' }));
    await until(() => subscribed, 10_000, 'the subscription confirmed');

    const t0 = Date.now();
    agents = creds.map((c) => new RobotAgent({ address: gw.ready.grpc, robotId: c.robotId!, robotToken: c.robotToken!, onCommand: () => ({ accept: true }), maxQueuedSamples: 100_000 }));
    for (const a of agents) a.start();
    await until(() => agents.every((a) => a.connected), 10_000, 'agents connected');
    for (let b = 0; b < BATCHES; b++) {
      for (const a of agents) a.sendSamples(Array.from({ length: PER_BATCH }, (_, i) => testSample(t0, b * PER_BATCH + i)));
    }
    await until(() => agents.every((a) => a.stats().samplesSent === BATCHES * PER_BATCH), 10_000, 'samples sent');

    // REST shows the newest sample of each robot.
    const last = testSample(t0, BATCHES * PER_BATCH - 1);
    await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robots/${robots[2]}`)).body.motionTelemetry?.tsMs === last.tsMs, 10_000, 'snapshot');
    const rec = (await api(gw.ready.http, d.apiKey, `/v1/robots/${robots[2]}`)).body;
    expect(rec.latitude).toBeCloseTo(last.latitude, 9);
    expect(rec.batteryPct).toBeCloseTo(last.batteryPercent, 3);
    expect(rec.statusTelemetry.mode).toBe('autonomous');
    await until(() => live.length >= BATCHES * PER_BATCH, 10_000, 'live samples');
    socket.close();

    // One sample, every form (src/telemetry/sample/sample-table.ts): robot 0's newest sample as the live
    // stream sent it and as REST shows it carry the same value at each of the table's paths.
    await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robots/${robots[0]}`)).body.motionTelemetry?.tsMs === last.tsMs, 10_000, 'snapshot 0');
    const view0 = (await api(gw.ready.http, d.apiKey, `/v1/robots/${robots[0]}`)).body;
    const newestLive = live.find((m) => m.ts_ms === last.tsMs)!;
    expect(newestLive.robot_id).toBe(robots[0]);
    for (const f of SAMPLE_FIELDS) for (const p of f.view) expect(valueAt(view0, p), `${f.column}: ${p} vs ${f.live}`).toEqual(valueAt(newestLive, f.live));

    for (const a of agents) await a.stop();
    const exitCode = await gw.stop('SIGTERM');
    return { dataDir: d.dataDir, sent: ROBOTS * BATCHES * PER_BATCH, live: live.length, robots, exitCode, newestLive };
  } catch (e) {
    // A failed assertion must not leave the gateway or the agents running.
    ws?.terminate();
    for (const a of agents) await a.stop();
    await gw.stop('SIGKILL');
    throw e;
  }
}

describe('telemetry pipe into the embedded store (chdb)', () => {
  let dataDir = '';
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('every sample is a row after SIGTERM, snapshots are the newest, live stream filtered by robot', async () => {
    const r = await runPipe([]);
    dataDir = r.dataDir;
    expect(r.exitCode).toBe(0);
    expect(r.live).toBe(BATCHES * PER_BATCH); // robot 0 only
    const store = await openChdbStore({ dataDir });
    try {
      const count = (await store.queryText('SELECT count() FROM telemetry_samples')).trim();
      expect(Number(count)).toBe(r.sent);
      const perRobot = (await store.queryText('SELECT robot_id, count() FROM telemetry_samples GROUP BY robot_id ORDER BY robot_id')).trim().split('\n');
      expect(perRobot.map((l) => l.split('\t')[0]).sort()).toEqual([...r.robots].sort());
      // The same sample's row holds the live message's values, column by column (the field table).
      const row = JSON.parse(await store.queryText(
        `SELECT ${INSERT_COLUMNS.join(', ')} FROM telemetry_samples WHERE robot_id = '${r.robots[0]}' AND ts_ms = ${String(r.newestLive.ts_ms)} FORMAT JSONCompactEachRow`,
      )) as unknown[];
      SAMPLE_FIELDS.forEach((f, i) => {
        const want = valueAt(r.newestLive, f.live);
        const got = row[i];
        if (want === null) {
          // No mission: the row's mission group holds the proto defaults ('' run id).
          if (f.column === 'mission_run_id') expect(got).toBe('');
          return;
        }
        if (f.rowType === 'Int64') expect(Number(got), f.column).toBe(want);
        else if (f.rowType === 'Float32') expect(Math.fround(got as number), f.column).toBe(Math.fround(want as number));
        else if (f.rowType === 'Float64') expect(got as number, f.column).toBeCloseTo(want as number, 9);
        else if (f.rowType === 'UInt8') expect(got === 1, f.column).toBe(want);
        else expect(got, f.column).toEqual(want);
      });
    } finally {
      await store.close();
    }
  }, 60_000);
});

describe('telemetry pipe into a ClickHouse server (--clickhouse-url)', () => {
  const url = inject('clickhouseUrl');
  const skip = url === null;
  it.skipIf(skip)('every sample is a row in the server', async () => {
    const db = `e2e_${Date.now()}`;
    await fetch(`${url}/?query=${encodeURIComponent(`CREATE DATABASE IF NOT EXISTS ${db}`)}`, { method: 'POST' });
    const r = await runPipe(["--clickhouse-url", `${url}/${db}`]);
    rmSync(r.dataDir, { recursive: true, force: true });
    expect(r.exitCode).toBe(0);
    const res = await fetch(`${url}/?query=${encodeURIComponent(`SELECT count() FROM ${db}.telemetry_samples`)}`);
    expect(Number((await res.text()).trim())).toBe(r.sent);
  }, 60_000);
});
