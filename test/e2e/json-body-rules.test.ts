// Issue 8 item 14 through the real `fleetgw serve`: a JSON body with a duplicate key is refused (it
// used to run with the last value: "stop" then "start" ran start), and integer query parameters refuse
// Infinity, NaN and values out of the safe integer range.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';

const d = makeDataDir('fleetgw-json-rules-');
let gw: RunningGateway;
let base: string;
let robotId: string;

beforeAll(async () => {
  robotId = adminJson<{ robotId: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r1']).robotId;
  gw = await startGatewayProcess(d.dataDir);
  base = gw.ready.http;
});
afterAll(async () => {
  await gw.stop();
  rmSync(d.dataDir, { recursive: true, force: true });
});

describe('duplicate keys in a JSON body', () => {
  it('"action":"stop","action":"start" is a 400 naming the key, and nothing is sent', async () => {
    const body = `{"org_id":"${d.orgId}","fleet_id":"${d.fleetId}","robot_id":"${robotId}","action":"stop","action":"start"}`;
    const r = await api(base, d.apiKey, '/v1/agent/control-robot', { method: 'POST', body });
    expect(r.status).toBe(400);
    expect(r.body).toEqual({ error: "Invalid request body: duplicate key 'action'.", code: 'bad_request' });
    const audit = await api(base, d.apiKey, `/v1/audit-log?fleet_id=${d.fleetId}`);
    expect(audit.status).toBe(200);
    expect(audit.body.items).toEqual([]);
  });

  it('nested duplicates name their path; escaped spellings of one key are one key', async () => {
    const features = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/features`;
    const geometry = '{"type":"Polygon","type":"Point","coordinates":[[[10,50],[10.001,50],[10.001,50.001],[10,50]]]}';
    const nested = await api(base, d.apiKey, features, { method: 'POST', body: `{"name":"f","geometry":${geometry}}` });
    expect(nested.status).toBe(400);
    expect(nested.body.error).toBe("Invalid request body: geometry: duplicate key 'type'.");
    const escaped = await api(base, d.apiKey, features, { method: 'POST', body: `{"name":"a","\\u006eame":"b","geometry":{}}` });
    expect(escaped.status).toBe(400);
    expect(escaped.body.error).toBe("Invalid request body: duplicate key 'name'.");
  });

  it('a number literal beyond the double range (1e400) is refused', async () => {
    const body = `{"org_id":"${d.orgId}","fleet_id":"${d.fleetId}","robot_id":"${robotId}","action":"stop","wait_for_ack_ms":1e400}`;
    const r = await api(base, d.apiKey, '/v1/agent/control-robot', { method: 'POST', body });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('Invalid request body: wait_for_ack_ms: number 1e400 is out of range.');
  });
});

describe('integer query parameters', () => {
  it('limit=Infinity, NaN, 1e400 and 2^53+1 are 400; a plain integer works', async () => {
    const runs = `/v1/mission-runs?fleet_id=${d.fleetId}&days=1`;
    for (const bad of ['Infinity', '-Infinity', 'NaN', '1e400', '9007199254740993']) {
      const r = await api(base, d.apiKey, `${runs}&limit=${bad}`);
      expect(r.status, bad).toBe(400);
      expect(r.body.code).toBe('bad_request');
      expect(r.body.error, bad).toMatch(/^Invalid query: limit /);
    }
    expect((await api(base, d.apiKey, `${runs}&limit=5`)).status).toBe(200);
  });

  it('timeout_ms=Infinity on a robot config read is a 400, not a command', async () => {
    const path = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${robotId}/config`;
    const r = await api(base, d.apiKey, `${path}?timeout_ms=Infinity`);
    expect(r.status).toBe(400);
    expect(r.body.error).toMatch(/^Invalid query: timeout_ms /);
    const audit = await api(base, d.apiKey, `/v1/audit-log?fleet_id=${d.fleetId}`);
    expect(audit.body.items).toEqual([]);
  });
});
