/**
 * What a body costs before it is parsed (router core on plain objects): its bytes are charged before
 * parsing on every authenticated route, the MCP endpoint included; an MCP tool call keeps its route's
 * body bound; a route without authentication takes only a small body; a stop's body never waits in
 * the body lane.
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
import { createRouter, UNAUTHENTICATED_MAX_BODY_BYTES } from '../../src/http/router.js';
import type { PlainRequest, PlainResponse } from '../../src/http/types.js';
import { createOrg } from '../../src/store/identity.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { openStore } from '../../src/store/lmdb.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetgw-body-charge-'));
const store = openStore(dir);
const orgId = createOrg(store, 'o').orgId;
const newKey = (): string => createApiKey(store, { orgId, fleetId: null, permissions: ['robots:write'], expiresAtMs: null }).apiKey;

const act = defineRoute({
  method: 'POST', path: '/v1/agent/act', operationId: 'act', summary: 'Act.', tags: ['t'], auth: 'robots:write',
  body: Type.Object({ action: Type.String() }, { additionalProperties: false }),
  maxBodyBytes: 64,
  responses: { 200: { description: 'ok', schema: Type.Object({ done: Type.String() }, { additionalProperties: false }) } },
  urgent: (body) => body.action === 'stop',
}).handle(({ body }) => ({ status: 200, body: { done: body.action } }));
const login: RouteDef = {
  method: 'POST', path: '/v1/login', operationId: 'login', summary: 't', tags: ['t'], auth: 'none',
  body: Type.Object({ name: Type.String() }, { additionalProperties: false }),
  responses: { 200: { description: 'ok' } },
  handler: () => ({ status: 200, body: { ok: true } }),
};
const halt: RouteDef = {
  method: 'POST', path: '/v1/halt', operationId: 'halt', summary: 't', tags: ['t'], auth: 'robots:write',
  body: Type.Object({ action: Type.String(), pad: Type.String() }, { additionalProperties: false }),
  maxBodyBytes: 128 * 1024,
  responses: { 200: { description: 'ok' } },
  urgent: (body) => (body as { action: string }).action === 'stop',
  handler: () => ({ status: 200, body: { ok: true } }),
};
const late = new LateMcp();
const routes: RouteDef[] = [act, login, halt, ...mcpRoutes(late)];
const router = createRouter(routes, { auth: new ApiKeyVerifier(store), rateLimiter: new RateLimiter({ ratePerSecond: 0.001, burst: 10 }) });
const sessions = late.start(routes, router, 'test', pino({ enabled: false }));

afterAll(async () => {
  await sessions.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const signal = new AbortController().signal;
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } };

function post(path: string, key: string | null, body: string, sessionId?: string): PlainRequest {
  return {
    method: 'POST', path, query: '',
    headers: {
      ...(key !== null ? { authorization: `Bearer ${key}` } : {}),
      'content-type': 'application/json',
      ...(sessionId !== undefined ? { 'mcp-session-id': sessionId } : {}),
    },
    body: Buffer.from(body), remoteAddress: '127.0.0.1',
  };
}

async function open(key: string): Promise<string> {
  const init = await router(post('/v1/mcp', key, JSON.stringify(INIT)), signal);
  expect(init.status).toBe(200);
  return init.headers['mcp-session-id']!;
}

const remaining = (res: PlainResponse): number => Number(/r=(\d+)/.exec(res.headers.ratelimit ?? '')![1]);
const result = (res: PlainResponse): Record<string, any> => (JSON.parse(String(res.body)) as { result: Record<string, any> }).result;

describe('body bytes are paid for before parsing', () => {
  it('refuses a large /v1/mcp body from an empty bucket unparsed', async () => {
    const key = newKey();
    const sid = await open(key);
    // Spend the bucket down to 1 token with small messages (each spends its own token).
    for (let i = 0; i < 8; i++) expect((await router(post('/v1/mcp', key, JSON.stringify({ jsonrpc: '2.0', id: 10 + i, method: 'ping' }), sid), signal)).status).toBe(200);
    // Not JSON at all: parsed, it would be 400; its 100 KiB cost 6 tokens it does not have, so 429 unread.
    const refused = await router(post('/v1/mcp', key, `{${'x'.repeat(100 * 1024)}`, sid), signal);
    expect(refused.status).toBe(429);
  });

  it('charges a tool call for its whole message, padding outside the arguments included', async () => {
    const key = newKey();
    const sid = await open(key);
    const padded = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'act', arguments: { action: 'go' }, _meta: { pad: 'x'.repeat(100 * 1024) } } };
    const res = await router(post('/v1/mcp', key, JSON.stringify(padded), sid), signal);
    expect(result(res)).toMatchObject({ structuredContent: { done: 'go' } });
    // 10 - 1 (initialize) - 6 (the envelope's 100 KiB) - 1 (the call, as its route).
    expect(remaining(res)).toBe(2);
  });

  it('holds a tool call to its route\'s body bound', async () => {
    const key = newKey();
    const sid = await open(key);
    const call = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'act', arguments: { action: 'x'.repeat(100) } } };
    const res = result(await router(post('/v1/mcp', key, JSON.stringify(call), sid), signal));
    expect(res).toMatchObject({ isError: true, structuredContent: { code: 'bad_request', error: 'Request body exceeds 64 bytes.' }, _meta: { 'fleet-gateway/http-status': 413 } });
  });
});

describe('routes without authentication', () => {
  it('take at most a small body, refused unread', async () => {
    expect(router.bodyLimit('POST', '/v1/login')).toBe(UNAUTHENTICATED_MAX_BODY_BYTES);
    // Not JSON: parsed, it would be 400.
    const big = await router(post('/v1/login', null, `{${'x'.repeat(UNAUTHENTICATED_MAX_BODY_BYTES)}`), signal);
    expect(big.status).toBe(413);
    expect((await router(post('/v1/login', null, JSON.stringify({ name: 'a' })), signal)).status).toBe(200);
  });
});

describe('the body lane', () => {
  it('never holds a body of a route that may stop a robot', () => {
    const key = newKey();
    const stop = post('/v1/halt', key, JSON.stringify({ action: 'stop', pad: 'x'.repeat(20 * 1024) }));
    // Served in the turn it was read: a promise would mean it waits in the lane behind other keys' bodies.
    const res = router(stop, signal);
    expect(res).not.toBeInstanceOf(Promise);
    expect((res as PlainResponse).status).toBe(200);
  });
});
