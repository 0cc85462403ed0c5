/**
 * A tool call goes through the router's own pipeline (Router.dispatch): the whole chain in process, on
 * plain objects (router -> /v1/mcp route -> session table -> SDK server -> tool -> router -> route).
 * A call spends the key's rate limit once, as its own route, with that route's urgent rule; permission
 * and validation are the route's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiKeyVerifier } from '../../src/auth/authenticate.js';
import { defineRoute } from '../../src/api/define-route.js';
import { mcpRoutes } from '../../src/api/routes/mcp.js';
import type { RouteDef } from '../../src/api/route.js';
import { LateMcp } from '../../src/gateway/mcp.js';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { createRouter } from '../../src/http/router.js';
import type { PlainRequest } from '../../src/http/types.js';
import { createOrg } from '../../src/store/identity.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { openStore } from '../../src/store/lmdb.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetgw-mcp-dispatch-'));
const store = openStore(dir);
const orgId = createOrg(store, 'o').orgId;
const writer = createApiKey(store, { orgId, fleetId: null, permissions: ['robots:write'], expiresAtMs: null }).apiKey;
const writer2 = createApiKey(store, { orgId, fleetId: null, permissions: ['robots:write'], expiresAtMs: null }).apiKey;
const reader = createApiKey(store, { orgId, fleetId: null, permissions: ['robots:read'], expiresAtMs: null }).apiKey;

const served: string[] = [];
const act = defineRoute({
  method: 'POST', path: '/v1/agent/act', operationId: 'act', summary: 'Act.', tags: ['t'], auth: 'robots:write',
  body: Type.Object({ action: Type.String() }, { additionalProperties: false }),
  responses: { 200: { description: 'ok', schema: Type.Object({ done: Type.String() }, { additionalProperties: false }) } },
  urgent: (body) => body.action === 'stop',
}).handle(({ body }) => {
  served.push(body.action);
  return { status: 200, body: { done: body.action } };
});
const late = new LateMcp();
const routes: RouteDef[] = [act, ...mcpRoutes(late)];
const router = createRouter(routes, { auth: new ApiKeyVerifier(store), rateLimiter: new RateLimiter({ ratePerSecond: 0.001, burst: 2 }) });
const sessions = late.start(routes, router, 'test', pino({ enabled: false }));

afterAll(async () => {
  await sessions.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function rpc(key: string, message: unknown, sessionId?: string): PlainRequest {
  return {
    method: 'POST', path: '/v1/mcp', query: '',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(sessionId !== undefined ? { 'mcp-session-id': sessionId } : {}) },
    body: Buffer.from(JSON.stringify(message)), remoteAddress: '127.0.0.1',
  };
}

const signal = new AbortController().signal;
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };
const call = (action: string, id: number): unknown => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'act', arguments: { action } } });
const result = (body: string | Uint8Array): Record<string, any> => (JSON.parse(String(body)) as { result: Record<string, any> }).result;

describe('MCP tool calls through the router', () => {
  it('counts a call once, as its route, with the route\'s urgent rule; other messages spend the limit themselves', async () => {
    const init = await router(rpc(writer, INIT), signal);
    expect(init.status).toBe(200);
    const sid = init.headers['mcp-session-id']!;
    // initialize spent 1 of the burst of 2; the first call spends the second.
    expect(result((await router(rpc(writer, call('start', 2), sid), signal)).body)).toMatchObject({ structuredContent: { done: 'start' } });
    const limited = result((await router(rpc(writer, call('start', 3), sid), signal)).body);
    expect(limited).toMatchObject({ isError: true, structuredContent: { code: 'rate_limited' }, _meta: { 'fleet-gateway/http-status': 429 } });
    expect(limited._meta['fleet-gateway/retry-after-s']).toBeGreaterThan(0);
    // A stop passes a spent limit, over MCP as over REST.
    expect(result((await router(rpc(writer, call('stop', 4), sid), signal)).body)).toMatchObject({ structuredContent: { done: 'stop' } });
    // tools/list is not a tool call: the /v1/mcp request itself is refused.
    expect((await router(rpc(writer, { jsonrpc: '2.0', id: 5, method: 'tools/list' }, sid), signal)).status).toBe(429);
    // A call the tool server would not dispatch (unknown tool, arguments not an object) spends the limit itself.
    expect((await router(rpc(writer, { jsonrpc: '2.0', id: 6, method: 'tools/call', params: { name: 'nope', arguments: {} } }, sid), signal)).status).toBe(429);
    expect((await router(rpc(writer, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'act', arguments: [] } }, sid), signal)).status).toBe(429);
    expect(served).toEqual(['start', 'stop']);
  });

  it('answers an unknown tool with a JSON-RPC error', async () => {
    const init = await router(rpc(writer2, INIT), signal);
    const sid = init.headers['mcp-session-id']!;
    const unknown = JSON.parse(String((await router(rpc(writer2, { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'nope', arguments: {} } }, sid), signal)).body)) as { error: { code: number; message: string } };
    expect(unknown.error).toMatchObject({ code: -32602, message: expect.stringContaining('Unknown tool') as unknown });
  });

  it('applies the route\'s permission and validation to the caller of the /v1/mcp request', async () => {
    const init = await router(rpc(reader, INIT), signal);
    const sid = init.headers['mcp-session-id']!;
    const denied = result((await router(rpc(reader, call('start', 2), sid), signal)).body);
    expect(denied).toMatchObject({ isError: true, structuredContent: { code: 'forbidden', error: 'This key lacks the robots:write permission.' } });
    const invalid = result((await router(rpc(reader, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'act', arguments: { action: 1 } } }, sid), signal)).body);
    // Permission comes before validation, as over REST.
    expect(invalid.structuredContent.code).toBe('forbidden');
    // The JSON-RPC envelope is strict like any body.
    const envelope = await router(rpc(reader, { jsonrpc: '2.0', id: 4, method: 'tools/list', extra: 1 }, sid), signal);
    expect(envelope.status).toBe(400);
    expect(JSON.parse(String(envelope.body))).toMatchObject({ code: 'bad_request', error: expect.stringContaining('extra') as unknown });
    expect(served).toEqual(['start', 'stop']);
  });
});
