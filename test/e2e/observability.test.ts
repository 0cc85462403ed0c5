/**
 * Issue 14 part 2 through the real `fleetgw serve` process: `GET /metrics` (bearer token, series that
 * move after a request, a command and telemetry), `/healthz` and `/readyz` (also failing while a
 * real ClickHouse server is stopped), and the gRPC health and reflection services on the real robot
 * link, which leave robot authentication on `fleetgw.v1.RobotLink` intact.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { service as healthService } from 'grpc-health-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/index.js';
import { PUBLISH_TELEMETRY_PATH, publishTelemetryClientCodec } from '../../src/protocol/service.js';
import { adminJson } from '../support/cli.js';
import { startClickHouseServer, type ClickHouseTestServer } from '../support/clickhouse-server.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { testSample } from '../support/samples.js';
import { until } from '../support/until.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const REFLECTION_PROTO = join(ROOT, 'node_modules/@grpc/reflection/build/proto/grpc/reflection/v1/reflection.proto');

/** Scrapes /metrics with `token` (null: none). */
async function scrape(base: string, token: string | null): Promise<{ status: number; text: string; headers: Headers }> {
  const res = await fetch(`${base}/metrics`, { headers: token === null ? {} : { authorization: `Bearer ${token}` } });
  return { status: res.status, text: await res.text(), headers: res.headers };
}

/** The value of one series (`name{labels}` exactly as exposed, labels in prom-client's order), or 0 when absent. */
function value(text: string, series: string): number {
  for (const line of text.split('\n')) {
    if (line.startsWith(`${series} `)) return Number(line.slice(series.length + 1));
  }
  return 0;
}

type HealthClient = grpc.Client & { check(req: { service: string }, cb: (err: grpc.ServiceError | null, res?: { status: string }) => void): void };

function healthClient(address: string): HealthClient {
  const Ctor = grpc.makeGenericClientConstructor(healthService, 'Health');
  return new Ctor(address, grpc.credentials.createInsecure()) as unknown as HealthClient;
}

function healthCheck(client: HealthClient, service: string): Promise<string> {
  return new Promise((resolve, reject) => client.check({ service }, (err, res) => (err ? reject(err) : resolve(res!.status))));
}

/** `grpc.reflection.v1.ServerReflection/ServerReflectionInfo` with `list_services`. */
async function listServices(address: string): Promise<string[]> {
  const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(REFLECTION_PROTO, { keepCase: true })) as any;
  const client = new pkg.grpc.reflection.v1.ServerReflection(address, grpc.credentials.createInsecure());
  try {
    return await new Promise<string[]>((resolve, reject) => {
      const call = client.ServerReflectionInfo();
      call.on('data', (res: any) => {
        resolve((res.list_services_response?.service ?? []).map((s: { name: string }) => s.name));
        call.end();
      });
      call.on('error', reject);
      call.write({ list_services: '' });
    });
  } finally {
    client.close();
  }
}

describe('observability with the embedded store', () => {
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway;
  let agent: RobotAgent;
  let robotId: string;
  let token: string;

  beforeAll(async () => {
    d = makeDataDir('fleetgw-observe-');
    const robot = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r0']);
    robotId = robot.robotId!;
    gw = await startGatewayProcess(d.dataDir);
    token = readFileSync(join(d.dataDir, 'metrics-token'), 'utf8').trim();
    agent = new RobotAgent({ address: gw.ready.grpc, robotId, robotToken: robot.robotToken!, onCommand: () => ({ accept: true }), maxQueuedSamples: 10_000 });
    agent.start();
    await until(() => agent.connected, 10_000, 'agent connected');
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await gw?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('GET /metrics answers only the metrics token, with a token file made on first start', async () => {
    const none = await scrape(gw.ready.http, null);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer /);
    expect(JSON.parse(none.text)).toEqual({ error: 'Missing, invalid, expired or revoked credential.', code: 'unauthorized' });
    expect((await scrape(gw.ready.http, `${token}x`)).status).toBe(401);
    // An API key with every permission is not a metrics credential.
    expect((await scrape(gw.ready.http, d.apiKey)).status).toBe(401);
    expect((await fetch(`${gw.ready.http}/metrics`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })).status).toBe(405);

    const ok = await scrape(gw.ready.http, token);
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.text).toContain('# TYPE process_cpu_user_seconds_total counter');
    expect(ok.text).toContain('# TYPE nodejs_eventloop_lag_p99_seconds gauge');
    expect(value(ok.text, 'fleetgw_ready{check="store"}')).toBe(1);
    expect(value(ok.text, 'fleetgw_ready{check="lmdb"}')).toBe(1);
    expect(value(ok.text, 'fleetgw_ready{check="scheduler"}')).toBe(1);
    expect(value(ok.text, 'fleetgw_robots_online')).toBe(1);
    // The token's file is the operator's secret: owner-only.
    const { statSync } = await import('node:fs');
    expect(statSync(join(d.dataDir, 'metrics-token')).mode & 0o777).toBe(0o600);
  });

  it('request, command and telemetry series move, labelled by route template and action only', async () => {
    const before = (await scrape(gw.ready.http, token)).text;
    const robotRoute = 'fleetgw_http_requests_total{method="GET",route="/v1/robots/{robot_id}",status="200"}';

    expect((await api(gw.ready.http, d.apiKey, `/v1/robots/${robotId}`)).status).toBe(200);
    expect((await api(gw.ready.http, d.apiKey, '/v1/no-such-route')).status).toBe(404);
    const stop = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
      method: 'POST',
      body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_id: robotId, wait_for_ack: true }),
    });
    expect(stop.status).toBe(200);
    expect(stop.body.outcomes[0].delivery.state).toBe('agent_received');
    const t0 = Date.now();
    agent.sendSamples(Array.from({ length: 500 }, (_, i) => testSample(t0, i)));

    let after = '';
    await until(async () => {
      after = (await scrape(gw.ready.http, token)).text;
      return value(after, 'fleetgw_telemetry_samples_stored_total') - value(before, 'fleetgw_telemetry_samples_stored_total') >= 500;
    }, 15_000, 'samples stored');
    expect(value(after, robotRoute) - value(before, robotRoute)).toBe(1);
    expect(value(after, 'fleetgw_http_requests_total{method="GET",route="unmatched",status="404"}')).toBeGreaterThanOrEqual(1);
    expect(value(after, 'fleetgw_http_request_duration_seconds_count{method="GET",route="/v1/robots/{robot_id}"}')).toBeGreaterThanOrEqual(1);
    expect(value(after, 'fleetgw_commands_total{action="stop",state="dispatched"}')).toBe(1);
    expect(value(after, 'fleetgw_commands_total{action="stop",state="agent_received"}')).toBe(1);
    expect(value(after, 'fleetgw_command_ack_seconds_count{outcome="received"}')).toBe(1);
    expect(value(after, 'fleetgw_telemetry_samples_received_total') - value(before, 'fleetgw_telemetry_samples_received_total')).toBeGreaterThanOrEqual(500);
    expect(value(after, 'fleetgw_telemetry_inserts_total{outcome="ok"}')).toBeGreaterThanOrEqual(1);
    expect(value(after, 'fleetgw_telemetry_insert_duration_seconds_count{outcome="ok"}')).toBeGreaterThanOrEqual(1);
    expect(value(after, 'fleetgw_telemetry_samples_spooled_total')).toBe(0);
    expect(value(after, 'fleetgw_telemetry_spool_bytes')).toBeGreaterThanOrEqual(0);
    expect(value(after, 'fleetgw_telemetry_batches_duplicate_total')).toBe(0);
    // No robot, fleet or key id ever becomes a label.
    for (const id of [robotId, d.fleetId, d.orgId, d.apiKeyId]) expect(after).not.toContain(id);
  }, 30_000);

  it('/healthz and /readyz answer without a credential, with a status word only', async () => {
    const live = await fetch(`${gw.ready.http}/healthz`);
    expect(live.status).toBe(200);
    expect(live.headers.get('cache-control')).toBe('no-store');
    expect(await live.json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${gw.ready.http}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
  });

  it('the robot link serves gRPC health (SERVING when ready) and reflection, and still refuses robots without credentials', async () => {
    const health = healthClient(gw.ready.grpc);
    try {
      expect(await healthCheck(health, '')).toBe('SERVING');
      expect(await healthCheck(health, 'fleetgw.v1.RobotLink')).toBe('SERVING');
      await expect(healthCheck(health, 'no.such.Service')).rejects.toMatchObject({ code: grpc.status.NOT_FOUND });
    } finally {
      health.close();
    }
    const services = await listServices(gw.ready.grpc);
    expect(services).toEqual(expect.arrayContaining(['fleetgw.v1.RobotLink', 'grpc.health.v1.Health']));

    // Reaching the port for health or reflection opens nothing on the robot service itself.
    const client = new grpc.Client(gw.ready.grpc, grpc.credentials.createInsecure());
    try {
      const err = await new Promise<grpc.ServiceError>((resolve) => {
        const call = client.makeClientStreamRequest(PUBLISH_TELEMETRY_PATH, publishTelemetryClientCodec.serialize, publishTelemetryClientCodec.deserialize, (e) => resolve(e!));
        call.end();
      });
      expect(err.code).toBe(grpc.status.UNAUTHENTICATED);
    } finally {
      client.close();
    }
  });
});

describe('readiness follows a ClickHouse server', () => {
  let server: ClickHouseTestServer;
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway;

  beforeAll(async () => {
    // A private server: stopping the shared one would break other test files.
    server = await startClickHouseServer();
    d = makeDataDir('fleetgw-observe-ch-');
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--clickhouse-url', server.url]);
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    await server?.dispose();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('/readyz, fleetgw_ready and gRPC health stay ready while the server is stopped (spooling; /readyz says degraded, fleetgw_telemetry_store_up 0), with the outage and recovery logged', async () => {
    // Issue 14 part 1: "store reachable or spooling". Not ready needs a full spool as well:
    // test/faults/spool-full.test.ts checks /readyz 503 then (npm run test:faults).
    const token = readFileSync(join(d.dataDir, 'metrics-token'), 'utf8').trim();
    const readyz = async (): Promise<{ status: number; body: unknown }> => {
      const res = await fetch(`${gw.ready.http}/readyz`);
      return { status: res.status, body: await res.json() };
    };
    const health = healthClient(gw.ready.grpc);
    try {
      expect(await readyz()).toEqual({ status: 200, body: { status: 'ready' } });
      await server.stop('SIGKILL');
      await until(() => gw.stderr().includes('telemetry store unreachable'), 10_000, 'store probe failed');
      // Ready (200), saying the store is down: `degraded`.
      expect(await readyz()).toEqual({ status: 200, body: { status: 'degraded' } });
      expect(value((await scrape(gw.ready.http, token)).text, 'fleetgw_ready{check="store"}')).toBe(1);
      expect(value((await scrape(gw.ready.http, token)).text, 'fleetgw_telemetry_store_up')).toBe(0);
      expect(value((await scrape(gw.ready.http, token)).text, 'fleetgw_ready{check="lmdb"}')).toBe(1);
      expect(await healthCheck(health, '')).toBe('SERVING');
      expect((await fetch(`${gw.ready.http}/healthz`)).status).toBe(200);

      await server.start();
      await until(() => gw.stderr().includes('telemetry store reachable again'), 15_000, 'store reachable again');
      expect(await readyz()).toEqual({ status: 200, body: { status: 'ready' } });
      expect(value((await scrape(gw.ready.http, token)).text, 'fleetgw_telemetry_store_up')).toBe(1);
    } finally {
      health.close();
    }
  }, 60_000);
});
