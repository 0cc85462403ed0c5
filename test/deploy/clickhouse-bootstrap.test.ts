/**
 * `fleetgw serve --clickhouse-url …/DATABASE` against a ClickHouse server that has neither the database
 * nor the tables: the gateway creates both, records the schema version, and telemetry lands. The server
 * requires a password for the gateway's user, which comes from a file or the environment; a password
 * on the command line is refused. Real processes: Debian's clickhouse-server and the built gateway.
 */
import { createHash } from 'node:crypto';
import { chmodSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { RobotAgent } from '../../src/agent/index.js';
import { startClickHouseServer, type ClickHouseTestServer } from '../support/clickhouse-server.js';
import { adminJson, fleetgw } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { testSample } from '../support/samples.js';
import { until } from '../support/until.js';
import { MIGRATIONS } from '../../src/telemetry/store/migrations.js';

const LATEST = MIGRATIONS.at(-1)!.version;

// Bounds, not waits (every wait in here ends on a condition): real processes on a loaded 2-core
// machine (.ci/load-check.sh) take several times longer than on an idle one.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const skip = inject('clickhouseUrl') === null;
const skipReason = inject('clickhouseSkipReason');
const PASSWORD = 'depot-secret-4711';

/** users.xml: `default` without a password (the test's own queries), `fleetgw` with one, `limited` kept to database `default`. */
function usersXml(password: string): string {
  const sha = createHash('sha256').update(password).digest('hex');
  const user = (pw: string): string => `${pw}<networks><ip>::/0</ip></networks><profile>default</profile><quota>default</quota>`;
  return `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>10000000000</max_memory_usage></default></profiles>
  <users>
    <default>${user('<password></password>')}</default>
    <fleetgw>${user(`<password_sha256_hex>${sha}</password_sha256_hex>`)}</fleetgw>
    <limited>${user('<password></password><allow_databases><database>default</database></allow_databases>')}</limited>
  </users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`;
}

async function query(server: ClickHouseTestServer, sql: string): Promise<string> {
  const res = await fetch(`${server.url}/`, { method: 'POST', body: sql });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${sql}: HTTP ${res.status} ${text}`);
  return text;
}

describe.skipIf(skip)(`the gateway bootstraps its ClickHouse database${skip ? ` (skipped: ${skipReason})` : ''}`, () => {
  let server: ClickHouseTestServer;
  const d = skip ? null : makeDataDir('fleetgw-deploy-ch-');
  const passwordFile = d === null ? '' : join(d.dataDir, '..', `${d.dataDir.split('/').pop()}-ch-password`);
  let gw: RunningGateway | null = null;

  beforeAll(async () => {
    server = await startClickHouseServer({ usersXml: usersXml(PASSWORD) });
    writeFileSync(passwordFile, `${PASSWORD}\n`);
    chmodSync(passwordFile, 0o600);
  });

  afterAll(async () => {
    await gw?.stop('SIGKILL');
    await server?.dispose();
    if (d !== null) rmSync(d.dataDir, { recursive: true, force: true });
    rmSync(passwordFile, { force: true });
  });

  it('creates the database and tables, records every schema version, and telemetry lands', async () => {
    expect(await query(server, "SELECT count() FROM system.databases WHERE name = 'depot_a'")).toBe('0\n');
    const robot = adminJson(['add-robot', '--data-dir', d!.dataDir, '--fleet', d!.fleetId, '--name', 'r1']);
    gw = await startGatewayProcess(d!.dataDir, [
      '--insecure-http', '--clickhouse-url', `${server.url}/depot_a`, '--clickhouse-user', 'fleetgw', '--clickhouse-password-file', passwordFile,
    ]);
    expect(gw.ready).toMatchObject({ telemetryStore: 'clickhouse', telemetrySchemaVersion: LATEST });
    await until(() => gw!.stderr().includes('telemetry schema migrated'), 30_000, 'the migration log line');
    expect(gw.stderr()).toContain(`"applied":${JSON.stringify(MIGRATIONS.map((m) => m.version))}`);

    const agent = new RobotAgent({ address: gw.ready.grpc, robotId: robot.robotId!, robotToken: robot.robotToken!, onCommand: () => ({ accept: true }), maxQueuedSamples: 10_000 });
    agent.start();
    await until(() => agent.connected, 30_000, 'agent connected');
    const t0 = Date.now() - 60_000;
    for (let b = 0; b < 5; b++) agent.sendSamples(Array.from({ length: 100 }, (_, i) => testSample(t0, b * 100 + i)));
    await until(() => agent.stats().samplesSent === 500, 30_000, 'samples sent');
    await agent.stop();
    expect(await gw.stop('SIGTERM')).toBe(0);
    gw = null;

    expect(await query(server, `SELECT count(), min(ts_ms), max(ts_ms) FROM depot_a.telemetry_samples WHERE robot_id = '${robot.robotId!}'`))
      .toBe(`500\t${t0}\t${t0 + 499 * 10}\n`);
    expect(await query(server, 'SELECT version, name FROM depot_a.fleetgw_schema_migrations ORDER BY version')).toBe(MIGRATIONS.map((m) => `${m.version}\t${m.name}\n`).join(''));
  });

  it('a restart with the password from the environment finds the schema current and applies nothing', async () => {
    gw = await startGatewayProcess(
      d!.dataDir,
      ['--insecure-http', '--clickhouse-url', `${server.url}/depot_a`, '--clickhouse-user', 'fleetgw'],
      { FLEETGW_CLICKHOUSE_PASSWORD: PASSWORD },
    );
    expect(gw.ready).toMatchObject({ telemetryStore: 'clickhouse', telemetrySchemaVersion: LATEST });
    expect(await gw.stop('SIGTERM')).toBe(0);
    gw = null;
    expect(await query(server, 'SELECT count() FROM depot_a.fleetgw_schema_migrations')).toBe(`${MIGRATIONS.length}\n`);
  });

  it('a wrong password: the gateway starts with the store reported down, the password nowhere in the output, and sets the store up once the server accepts the login', async () => {
    // An operator error on either side (the gateway's password, or the server's user): the gateway
    // still serves its robots and spools telemetry (docs/operations.md, "Starting without the telemetry store").
    const wrong = 'not-the-password-0815';
    gw = await startGatewayProcess(
      d!.dataDir,
      ['--insecure-http', '--clickhouse-url', `${server.url}/depot_b`, '--clickhouse-user', 'fleetgw'],
      { FLEETGW_CLICKHOUSE_PASSWORD: wrong },
    );
    expect(gw.ready).toMatchObject({ telemetryStore: 'clickhouse', telemetrySchemaVersion: null });
    expect(gw.stderr()).toContain('telemetry store unreachable');
    expect(gw.stderr()).toContain(`ClickHouse server at ${new URL(server.url).host} is not reachable or refused the login (database depot_b, user fleetgw)`);
    expect(gw.stderr()).toMatch(/Wrong password|password is incorrect|Authentication failed/i);
    const readyz = await fetch(`${gw.ready.http}/readyz`);
    expect([readyz.status, await readyz.json()]).toEqual([200, { status: 'degraded' }]);
    const token = readFileSync(join(d!.dataDir, 'metrics-token'), 'utf8').trim();
    const metrics = await (await fetch(`${gw.ready.http}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
    expect(metrics).toMatch(/^fleetgw_telemetry_store_up 0$/m);
    expect(await query(server, "SELECT count() FROM system.databases WHERE name = 'depot_b'")).toBe('0\n');

    // The operator gives the server's user the password the gateway has: no restart needed.
    writeFileSync(server.usersConfigPath, usersXml(wrong));
    await until(() => gw!.stderr().includes('telemetry store set up'), 30_000, 'the store set up once the login is accepted');
    expect(await query(server, "SELECT count() FROM system.databases WHERE name = 'depot_b'")).toBe('1\n');
    expect(await gw.stop('SIGTERM')).toBe(0);
    expect(gw.stderr() + JSON.stringify(gw.ready)).not.toContain(wrong);
    gw = null;
    writeFileSync(server.usersConfigPath, usersXml(PASSWORD));
  }, 180_000);

  it('a user the server keeps out of the database: the gateway starts with the store reported down and the server\'s reason logged', async () => {
    gw = await startGatewayProcess(d!.dataDir, ['--insecure-http', '--clickhouse-url', `${server.url}/depot_c`, '--clickhouse-user', 'limited']);
    expect(gw.ready).toMatchObject({ telemetryStore: 'clickhouse', telemetrySchemaVersion: null });
    expect(gw.stderr()).toContain('telemetry store unreachable');
    expect(gw.stderr()).toMatch(/ClickHouse server at [^ ]+ (is not reachable or refused the login|refused the telemetry table set-up) \(database depot_c, user limited\): .*depot_c/);
    const readyz = await fetch(`${gw.ready.http}/readyz`);
    expect([readyz.status, await readyz.json()]).toEqual([200, { status: 'degraded' }]);
    expect(await gw.stop('SIGTERM')).toBe(0);
    gw = null;
  }, 180_000);
});

describe('ClickHouse credentials never on the command line', () => {
  const dir = makeDataDir('fleetgw-deploy-args-').dataDir;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const serve = (args: string[], env: NodeJS.ProcessEnv = process.env): ReturnType<typeof fleetgw> =>
    fleetgw(['serve', '--data-dir', dir, '--port', '0', '--grpc-port', '0', '--insecure-http', ...args], env);

  it.each([
    [['--clickhouse-url', 'http://127.0.0.1:1/fleet', '--clickhouse-password', 'hunter2'], '--clickhouse-password is refused'],
    [['--clickhouse-url', 'http://127.0.0.1:1/fleet', '--clickhouse-password=hunter2'], '--clickhouse-password is refused'],
    [['--clickhouse-url', 'http://fleetgw:hunter2@127.0.0.1:1/fleet'], '--clickhouse-url must not contain a password'],
  ])('refuses %j with exit 2 and never echoes the password', (args, message) => {
    const r = serve(args);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr).toContain('--clickhouse-password-file');
    expect(r.stdout + r.stderr).not.toContain('hunter2');
  });

  it('names the problem with a password file, a bad database name, or flags without a URL', () => {
    const missing = serve(['--clickhouse-url', 'http://127.0.0.1:1/fleet', '--clickhouse-password-file', '/nonexistent/pw']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain('cannot read --clickhouse-password-file /nonexistent/pw: ENOENT');
    const pw = join(dir, 'pw');
    writeFileSync(pw, 'x\n', { mode: 0o600 });
    const both = serve(['--clickhouse-url', 'http://127.0.0.1:1/fleet', '--clickhouse-password-file', pw], { ...process.env, FLEETGW_CLICKHOUSE_PASSWORD: 'y' });
    expect(both.status).toBe(2);
    expect(both.stderr).toContain('not both');
    const db = serve(['--clickhouse-url', 'http://127.0.0.1:1/fleet-1']);
    expect(db.status).toBe(2);
    expect(db.stderr).toContain("the database name (the URL path) must match");
    const noUrl = serve(['--clickhouse-user', 'fleetgw']);
    expect(noUrl.status).toBe(2);
    expect(noUrl.stderr).toContain('--clickhouse-user needs --clickhouse-url');
  });
});
