/**
 * `fleetgw serve --clickhouse-url` started while its ClickHouse server is down: the gateway starts
 * anyway (robots are commanded without the store), reports the store down (`/readyz` says
 * `degraded`, `fleetgw_telemetry_store_up` 0), acknowledges telemetry once it is in the disk spool,
 * and when the server starts it creates the database and the schema and drains the spool, every
 * acknowledged sample stored exactly once. On the way the gateway is killed (`kill -9`) with its
 * spool full of blocks and started again while the server is still down: that start must not fail. Real processes: Debian's clickhouse-server and the built
 * gateway; the robot is the in-process RobotAgent.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RobotAgent } from '../../src/agent/index.js';
import { startClickHouseServer, type ClickHouseTestServer } from '../support/clickhouse-server.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { testSample } from '../support/samples.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';
import { MIGRATIONS } from '../../src/telemetry/store/migrations.js';

const skip = inject('clickhouseUrl') === null;
const skipReason = inject('clickhouseSkipReason');
const DATABASE = 'late_depot';

async function query(server: ClickHouseTestServer, sql: string): Promise<string> {
  const res = await fetch(`${server.url}/`, { method: 'POST', body: sql });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${sql}: HTTP ${res.status} ${text}`);
  return text;
}

describe.skipIf(skip)(`the gateway starts while its ClickHouse server is down${skip ? ` (skipped: ${skipReason})` : ''}`, () => {
  let server: ClickHouseTestServer;
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway | null = null;
  let agent: RobotAgent | null = null;

  beforeAll(async () => {
    // A private server, stopped before the gateway starts: the shared one serves other test files.
    server = await startClickHouseServer();
    await server.stop('SIGKILL');
    d = makeDataDir('fleetgw-store-down-');
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await gw?.stop('SIGKILL');
    await server?.dispose();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('serves robots, spools acknowledged telemetry, reports the store down, survives a kill -9 and restart while down, then sets the store up and drains it', async () => {
    const robot = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r1']);
    // A fixed robot link port: the restarted gateway below listens where the robot reconnects.
    const args = ['--insecure-http', '--grpc-port', String(await freePort()), '--clickhouse-url', `${server.url}/${DATABASE}`];
    gw = await startGatewayProcess(d.dataDir, args);
    // Not set up yet: no schema version to report.
    expect(gw.ready).toMatchObject({ telemetryStore: 'clickhouse', telemetrySchemaVersion: null });
    expect(gw.stderr()).toContain('telemetry store unreachable');
    expect(gw.stderr()).toContain(`ClickHouse server at ${new URL(server.url).host} is not reachable`);

    const token = readFileSync(join(d.dataDir, 'metrics-token'), 'utf8').trim();
    const scrape = async (): Promise<string> => (await fetch(`${gw!.ready.http}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    const series = (text: string, name: string): number => {
      const line = text.split('\n').find((l) => l.startsWith(`${name} `));
      return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
    };
    const readyz = async (): Promise<{ status: number; body: unknown }> => {
      const res = await fetch(`${gw!.ready.http}/readyz`);
      return { status: res.status, body: await res.json() };
    };
    // Ready (the spool has room), and saying the store is down.
    expect(await readyz()).toEqual({ status: 200, body: { status: 'degraded' } });
    const down = await scrape();
    expect(series(down, 'fleetgw_telemetry_store_up')).toBe(0);
    expect(series(down, 'fleetgw_ready{check="store"}')).toBe(1);

    // A stop reaches the robot over the robot link.
    const commands: string[] = [];
    agent = new RobotAgent({
      address: gw.ready.grpc, robotId: robot.robotId!, robotToken: robot.robotToken!, maxQueuedSamples: 10_000,
      onCommand: (c) => {
        commands.push(c.action.case ?? '');
        return { accept: true };
      },
    });
    agent.start();
    await until(() => agent!.connected, 10_000, 'agent connected');
    const stop = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
      method: 'POST',
      body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_id: robot.robotId, wait_for_ack: true }),
    });
    expect(stop.status).toBe(200);
    expect(stop.body.outcomes[0].delivery.state).toBe('agent_received');
    expect(commands).toEqual(['stop']);

    // Telemetry is accepted and acknowledged (receipts) once it is in the disk spool.
    const t0 = Date.now() - 60_000;
    for (let b = 0; b < 5; b++) agent.sendSamples(Array.from({ length: 100 }, (_, i) => testSample(t0, b * 100 + i)));
    await until(() => agent!.stats().samplesSent === 500 && agent!.stats().batchesUnacked === 0, 20_000, 'every batch acknowledged');
    await until(async () => series(await scrape(), 'fleetgw_telemetry_samples_spooled_total') >= 500, 20_000, 'samples spooled');
    const spooling = await scrape();
    expect(series(spooling, 'fleetgw_telemetry_spool_backlog_blocks')).toBeGreaterThan(0);
    expect(series(spooling, 'fleetgw_telemetry_samples_stored_total')).toBe(0);
    expect(series(spooling, 'fleetgw_telemetry_store_up')).toBe(0);
    expect(await readyz()).toEqual({ status: 200, body: { status: 'degraded' } });

    // Killed with blocks in its spool, started again while the server is still down.
    await gw.stop('SIGKILL');
    gw = await startGatewayProcess(d.dataDir, args);
    expect(gw.ready.telemetrySchemaVersion).toBeNull();
    expect(await readyz()).toEqual({ status: 200, body: { status: 'degraded' } });
    await until(() => agent!.connected && agent!.stats().connects >= 2, 20_000, 'agent reconnected');
    for (let b = 5; b < 10; b++) agent.sendSamples(Array.from({ length: 100 }, (_, i) => testSample(t0, b * 100 + i)));
    await until(() => agent!.stats().samplesSent === 1_000 && agent!.stats().batchesUnacked === 0, 20_000, 'every batch acknowledged after the restart');
    expect(series(await scrape(), 'fleetgw_telemetry_store_up')).toBe(0);

    // The server comes: the database and schema are created, the spool drains, the store is up.
    await server.start();
    await until(() => gw!.stderr().includes('telemetry store set up'), 20_000, 'the store set up');
    await until(async () => {
      const text = await scrape();
      return series(text, 'fleetgw_telemetry_spool_backlog_blocks') === 0 && series(text, 'fleetgw_telemetry_spool_bytes') === 0 && series(text, 'fleetgw_telemetry_samples_replayed_total') >= 1_000;
    }, 30_000, 'the spool drained');
    await until(async () => series(await scrape(), 'fleetgw_telemetry_store_up') === 1, 10_000, 'the store reported up');
    expect(await readyz()).toEqual({ status: 200, body: { status: 'ready' } });
    expect(gw.stderr()).toContain(`"applied":${JSON.stringify(MIGRATIONS.map((m) => m.version))}`);

    await agent.stop();
    agent = null;
    expect(await gw.stop('SIGTERM')).toBe(0);
    gw = null;
    // Every acknowledged sample once: 1,000 rows, 1,000 distinct sample times.
    expect(await query(server, `SELECT count(), uniqExact(ts_ms), min(ts_ms), max(ts_ms) FROM ${DATABASE}.telemetry_samples WHERE robot_id = '${robot.robotId!}'`))
      .toBe(`1000\t1000\t${t0}\t${t0 + 999 * 10}\n`);
    expect(await query(server, `SELECT max(version) FROM ${DATABASE}.fleetgw_schema_migrations`)).toBe(`${MIGRATIONS.at(-1)!.version}\n`);
  }, 120_000);
});
