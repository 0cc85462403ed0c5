/**
 * Per-route body bounds through the real gateway process: a body one byte over a route's declared
 * bound is 413 naming that bound, before it is read; at the bound it is read and validated. An MCP
 * tool call is held to its route's bound too (official SDK client).
 */
import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';

type Json = Record<string, any>;

let d: ReturnType<typeof makeDataDir>;
let gw: RunningGateway;
let doc: Json;

beforeAll(async () => {
  d = makeDataDir();
  gw = await startGatewayProcess(d.dataDir);
  doc = (await api(gw.ready.http, d.apiKey, '/openapi.json')).body as Json;
}, 60_000);
afterAll(async () => {
  await gw?.stop();
  rmSync(d.dataDir, { recursive: true, force: true });
});

/** Valid JSON of exactly `bytes` bytes that the route's schema refuses (an unknown padding field). */
function paddedBody(fields: Record<string, unknown>, bytes: number): string {
  const base = JSON.stringify({ ...fields, padding: '' });
  return JSON.stringify({ ...fields, padding: 'x'.repeat(bytes - base.length) });
}

describe('per-route body bounds', () => {
  const cases = (): { path: string; docPath: string; fields: Record<string, unknown>; limit: number }[] => [
    { path: `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${d.fleetId}/mode`, docPath: '/v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}/mode', fields: { mode: 'auto' }, limit: 4096 },
    { path: '/v1/agent/deploy-mission', docPath: '/v1/agent/deploy-mission', fields: { org_id: d.orgId, fleet_id: d.fleetId }, limit: 16 * 1024 },
    { path: `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/mission-templates`, docPath: '/v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates', fields: { name: 't' }, limit: 256 * 1024 },
  ];

  it('a body over the declared bound is 413 naming it; one at the bound is read and validated', async () => {
    for (const c of cases()) {
      expect(doc.paths[c.docPath].post.requestBody['x-max-body-bytes'], c.docPath).toBe(c.limit);
      const over = await api(gw.ready.http, d.apiKey, c.path, { method: 'POST', body: paddedBody(c.fields, c.limit + 1), headers: { 'idempotency-key': 'k-over' } });
      expect(over.status, c.path).toBe(413);
      expect(over.body).toMatchObject({ code: 'bad_request', error: `Request body exceeds ${c.limit} bytes.` });
      const at = await api(gw.ready.http, d.apiKey, c.path, { method: 'POST', body: paddedBody(c.fields, c.limit), headers: { 'idempotency-key': 'k-at' } });
      expect(at.status, c.path).toBe(400);
      expect(at.body.error, c.path).toMatch(/^Invalid request body/);
    }
  });

  it('an MCP tool call over its route bound gets body_too_large', async () => {
    const client = new Client({ name: 'bounds-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${gw.ready.http}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${d.apiKey}` } } }));
    try {
      const r = (await client.callTool({ name: 'cancel-schedule', arguments: { org_id: d.orgId, fleet_id: d.fleetId, schedule_id: d.fleetId, reason: 'x'.repeat(5000) } })) as CallToolResult;
      expect(r.isError).toBe(true);
      expect(r.structuredContent).toMatchObject({ code: 'bad_request', error: 'Request body exceeds 4096 bytes.' });
    } finally {
      await client.close();
    }
  });
});
