/**
 * The whole telemetry pipe through the real gateway process: robot agent -> gRPC -> decode workers ->
 * chdb or a ClickHouse server (rows), LMDB (snapshot served by REST) and the live WebSocket.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import WebSocket from 'ws';
import { RobotAgent } from '../../src/agent/index.js';
import { openChdbStore } from '../../src/telemetry/chdb-store.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess } from '../support/gateway.js';
import { testSample } from '../support/samples.js';
import { until } from '../support/until.js';


const ROBOTS = 3;
const BATCHES = 10;
const PER_BATCH = 200;

async function runPipe(extraArgs: string[]): Promise<{ dataDir: string; sent: number; live: number; robots: string[]; exitCode: number | null }> {
  const d = makeDataDir();
  const creds = Array.from({ length: ROBOTS }, (_, i) => adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `r${i}`]));
  const gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...extraArgs]);
  const robots = creds.map((c) => c.robotId!);

  // Before any report: the nested telemetry objects are null.
  const before = await api(gw.ready.http, d.apiKey, `/v1/robots/${robots[0]}`);
  expect(before.status).toBe(200);
  expect(before.body.motionTelemetry).toBeNull();
  expect(before.body.statusTelemetry).toBeNull();

  // A dashboard: ticket, then WebSocket, then subscribe to robot 0 only.
  const t = await api(gw.ready.http, d.apiKey, '/v1/telemetry/stream-tickets', { method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId }) });
  expect(t.status).toBe(201);
  expect(t.body.url).not.toContain(t.body.ticket);
  const ws = new WebSocket(t.body.url);
  const live: Record<string, unknown>[] = [];
  ws.on('message', (data) => {
    const msg = JSON.parse((data as Buffer).toString('utf8'));
    if (msg.robot_id !== undefined) live.push(msg);
  });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  ws.send(JSON.stringify({ op: 'subscribe', ticket: t.body.ticket, robot_ids: [robots[0]], encoding: 'json' }));
  await new Promise((r) => setTimeout(r, 200));

  const t0 = Date.now();
  const agents = creds.map((c) => new RobotAgent({ address: gw.ready.grpc, robotId: c.robotId!, robotToken: c.robotToken!, onCommand: () => ({ accept: true }), maxQueuedSamples: 100_000 }));
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
  ws.close();

  for (const a of agents) await a.stop();
  const exitCode = await gw.stop('SIGTERM');
  return { dataDir: d.dataDir, sent: ROBOTS * BATCHES * PER_BATCH, live: live.length, robots, exitCode };
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
