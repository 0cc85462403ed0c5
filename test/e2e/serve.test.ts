/**
 * `fleetgw serve` as a user runs it: HTTPS by default, admin changes honoured while it runs, SIGTERM.
 */
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { RobotAgent } from '../../src/agent/index.js';
import { MIGRATIONS } from '../../src/telemetry/store/migrations.js';
import { adminJson, fleetgw } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

function httpsGet(url: string, ca: Buffer, key: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ca, headers: { authorization: `Bearer ${key}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}


describe('fleetgw serve over HTTPS (default)', () => {
  const d = makeDataDir();
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGatewayProcess(d.dataDir, []);
  });
  afterAll(async () => {
    await gw.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('prints the ready line, makes a self-signed certificate and serves HTTPS with it', async () => {
    expect(Object.keys(gw.ready).sort()).toEqual(['event', 'grpc', 'http', 'telemetryDecoder', 'telemetrySchemaVersion', 'telemetryStore', 'uws']);
    // The uWS build for this Node (src/http/uws.ts): uws-pack up to Node 22, the newer build from Node 24.
    expect(gw.ready.uws).toBe(Number(process.versions.modules) <= 127 ? 'uws-pack@20.0.8' : '@btc-vision/uwebsockets.js@20.57.0');
    // The embedded store was migrated at start to the latest telemetry schema (src/telemetry/store/migrations.ts).
    expect(gw.ready.telemetrySchemaVersion).toBe(MIGRATIONS.at(-1)!.version);
    // The C++ addon is built by `npm install`; FLEETGW_TELEMETRY_DECODER=js is the fallback run.
    expect(gw.ready.telemetryDecoder).toBe(process.env.FLEETGW_TELEMETRY_DECODER === 'js' ? 'js' : 'native');
    expect(gw.ready.http).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(gw.ready.grpc).toMatch(/^127\.0\.0\.1:\d+$/);
    expect(gw.ready.telemetryStore).toBe('chdb');
    const cert = join(d.dataDir, 'tls', 'cert.pem');
    expect(existsSync(cert)).toBe(true);
    expect(statSync(join(d.dataDir, 'tls', 'key.pem')).mode & 0o077).toBe(0);
    const res = await httpsGet(`${gw.ready.http}/v1/me`, readFileSync(cert), d.apiKey);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ actorType: 'api_key', orgId: d.orgId, fleetId: null });
  });

  it('refuses plain HTTP on the HTTPS port', async () => {
    await expect(fetch(`${gw.ready.http.replace('https:', 'http:')}/openapi.json`)).rejects.toThrow();
  });
});

describe('fleetgw serve with admin commands from another process', () => {
  const d = makeDataDir();
  let gw: RunningGateway;
  beforeAll(async () => {
    gw = await startGatewayProcess(d.dataDir);
  });
  afterAll(async () => {
    await gw.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('a key revoked by `fleetgw admin revoke-key` gets 401 within 1 s', async () => {
    const key = adminJson(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--permissions', 'robots:read']);
    expect((await api(gw.ready.http, key.apiKey!, '/v1/me')).status).toBe(200);
    expect(fleetgw(['admin', 'revoke-key', '--data-dir', d.dataDir, '--key-id', key.apiKeyId!]).status).toBe(0);
    const took = await until(async () => (await api(gw.ready.http, key.apiKey!, '/v1/me')).status === 401, 1000, 'revocation');
    expect(took).toBeLessThan(1000);
    const res = await api(gw.ready.http, key.apiKey!, '/v1/me');
    expect(res.body).toEqual({ error: expect.any(String), code: 'unauthorized' });
  });

  it('a robot added by `fleetgw admin add-robot` can connect at once and shows online', async () => {
    const robot = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'late-joiner', '--capabilities', 'stop']);
    const agent = new RobotAgent({ address: gw.ready.grpc, robotId: robot.robotId!, robotToken: robot.robotToken!, capabilities: ['stop'], onCommand: () => ({ accept: true }) });
    agent.start();
    try {
      const took = await until(async () => (await api(gw.ready.http, d.apiKey, `/v1/robots/${robot.robotId}`)).body?.online === true, 5000, 'robot online');
      expect(took).toBeLessThan(1000);
      const list = await api(gw.ready.http, d.apiKey, `/v1/robots?fleet_id=${d.fleetId}`);
      expect(list.status).toBe(200);
      expect(list.body.map((r: { id: string }) => r.id)).toContain(robot.robotId);
    } finally {
      await agent.stop();
    }
  });

  it('a robot with a wrong token cannot connect', async () => {
    const robot = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'impostor']);
    const disconnects: number[] = [];
    const agent = new RobotAgent({
      address: gw.ready.grpc, robotId: robot.robotId!, robotToken: 'fgr_wrong', onCommand: () => ({ accept: true }),
      onDisconnected: (r) => disconnects.push(r.code),
    });
    agent.start();
    try {
      await until(() => disconnects.length > 0, 5000, 'rejection');
      expect(disconnects[0]).toBe(16); // UNAUTHENTICATED
      expect((await api(gw.ready.http, d.apiKey, `/v1/robots/${robot.robotId}`)).body.online).toBe(false);
    } finally {
      await agent.stop();
    }
  });

  it('publishes a valid OpenAPI 3.1 document listing exactly the routes the gateway serves', async () => {
    const res = await fetch(`${gw.ready.http}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as { paths: Record<string, Record<string, unknown>> };
    const v = new Validator();
    expect((await v.validate(doc)).valid).toBe(true);
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${path}`)).sort();
    expect(documented).toEqual([
      'DELETE /v1/mcp',
      'DELETE /v1/orgs/{org_id}/api-keys/{api_key_id}',
      'DELETE /v1/orgs/{org_id}/fleets/{fleet_id}/features/{feature_id}',
      'DELETE /v1/orgs/{org_id}/fleets/{fleet_id}/field-rules/{directive_id}',
      'DELETE /v1/orgs/{org_id}/fleets/{fleet_id}/floor-plan',
      'DELETE /v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates/{mission_id}',
      'DELETE /v1/orgs/{org_id}/fleets/{fleet_id}/objects/{object_id}',
      'DELETE /v1/orgs/{org_id}/webhooks/{webhook_id}',
      'DELETE /v1/sessions/current',
      'GET /healthz',
      'GET /openapi.json',
      'GET /readyz',
      'GET /v1/audit-log',
      'GET /v1/events',
      'GET /v1/me',
      'GET /v1/mission-runs',
      'GET /v1/mission-schedule',
      'GET /v1/orgs/{org_id}',
      'GET /v1/orgs/{org_id}/api-keys',
      'GET /v1/orgs/{org_id}/api-keys/{api_key_id}',
      'GET /v1/orgs/{org_id}/fleets',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/alerts',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/alerts/{alert_id}',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/faults',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/faults/{fault_id}',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/features',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/features/{feature_id}',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/field-rules',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/field-rules/{directive_id}',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/floor-plan',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/floor-plan/image',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates/{mission_id}',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/objects',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/objects/{object_id}',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}/config',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}/onboard-settings',
      'GET /v1/orgs/{org_id}/fleets/{fleet_id}/utilization',
      'GET /v1/orgs/{org_id}/users',
      'GET /v1/orgs/{org_id}/webhook-dead-letters',
      'GET /v1/orgs/{org_id}/webhooks',
      'GET /v1/robot-commands/{command_id}',
      'GET /v1/robots',
      'GET /v1/robots/{robot_id}',
      'GET /v1/robots/{robot_id}/details',
      'GET /v1/robots/{robot_id}/faults',
      'GET /v1/robots/{robot_id}/telemetry',
      'GET /v1/robots/{robot_id}/telemetry/export.mcap',
      'GET /v1/robots/{robot_id}/telemetry/path',
      'GET /v1/robots/{robot_id}/telemetry/series',
      'GET /v1/sessions/current',
      'PATCH /v1/orgs/{org_id}/fleets/{fleet_id}/objects/{object_id}',
      'PATCH /v1/robots/{robot_id}',
      'POST /v1/agent/cancel-schedule',
      'POST /v1/agent/control-feature',
      'POST /v1/agent/control-mission',
      'POST /v1/agent/control-operation',
      'POST /v1/agent/control-robot',
      'POST /v1/agent/deploy-mission',
      'POST /v1/agent/edit-schedule',
      'POST /v1/agent/explain-capability',
      'POST /v1/agent/get-entity',
      'POST /v1/agent/get-map-context',
      'POST /v1/agent/get-runtime-status',
      'POST /v1/agent/query-entities',
      'POST /v1/agent/resolve',
      'POST /v1/agent/schedule-command',
      'POST /v1/agent/schedule-mission',
      'POST /v1/agent/set-mission-priorities',
      'POST /v1/agent/submit-job',
      'POST /v1/agent/upsert-field-rule',
      'POST /v1/mcp',
      'POST /v1/orgs/{org_id}/api-keys',
      'POST /v1/orgs/{org_id}/fleets/{fleet_id}/alerts/{alert_id}/acknowledge',
      'POST /v1/orgs/{org_id}/fleets/{fleet_id}/features',
      'POST /v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates',
      'POST /v1/orgs/{org_id}/fleets/{fleet_id}/objects',
      'POST /v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}/config',
      'POST /v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}/go-to',
      'POST /v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}/invoke-service',
      'POST /v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}/mode',
      'POST /v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}/onboard-settings',
      'POST /v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}/settings',
      'POST /v1/orgs/{org_id}/fleets/{fleet_id}/stop-all',
      'POST /v1/orgs/{org_id}/users',
      'POST /v1/orgs/{org_id}/users/{user_id}/disable',
      'POST /v1/orgs/{org_id}/users/{user_id}/enable',
      'POST /v1/orgs/{org_id}/webhooks',
      'POST /v1/sessions',
      'POST /v1/telemetry/stream-tickets',
      'PUT /v1/orgs/{org_id}/fleets/{fleet_id}/features/{feature_id}',
      'PUT /v1/orgs/{org_id}/fleets/{fleet_id}/floor-plan',
      'PUT /v1/orgs/{org_id}/fleets/{fleet_id}/floor-plan/placement',
      'PUT /v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates/{mission_id}',
      'PUT /v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates/{mission_id}/enabled',
    ]);
    // Every documented operation is served (no route_not_found), and an undocumented one is not.
    const uuid = '00000000-0000-4000-8000-000000000000';
    for (const op of documented) {
      const [method, template] = op.split(' ') as [string, string];
      const path = template.replace('{org_id}', d.orgId).replace('{fleet_id}', d.fleetId).replace(/\{[a-z_]+\}/g, uuid);
      const r = await api(gw.ready.http, d.apiKey, path, method === 'POST' || method === 'PUT' ? { method, body: '{}' } : { method });
      expect(r.body?.code === 'not_found' && /No route/.test(String(r.body?.error)), op).toBe(false);
    }
    const none = await api(gw.ready.http, d.apiKey, '/v1/nothing-here');
    expect(none).toMatchObject({ status: 404, body: { code: 'not_found' } });
  });

  it('SIGTERM drains and exits 0', async () => {
    const code = await gw.stop('SIGTERM');
    expect(code).toBe(0);
    expect(gw.stderr()).not.toMatch(/fgk_[0-9a-f]{32}_/);
  });
});
