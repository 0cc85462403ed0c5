/**
 * The rate-limit safety valve: past a key's limit, a request the route marks urgent (a stop) is still
 * served; anything else gets 429. Router core on plain objects, no sockets.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { afterAll, describe, expect, it } from 'vitest';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { ApiKeyVerifier } from '../../src/auth/authenticate.js';
import { createRouter } from '../../src/http/router.js';
import type { PlainRequest } from '../../src/http/types.js';
import type { RouteDef } from '../../src/api/route.js';
import { createOrg } from '../../src/store/identity.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { openStore } from '../../src/store/lmdb.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetgw-urgent-'));
const store = openStore(dir);
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
const orgId = createOrg(store, 'o').orgId;
const { apiKey } = createApiKey(store, { orgId, fleetId: null, permissions: ['robots:write'], expiresAtMs: null });

const served: string[] = [];
const route: RouteDef = {
  method: 'POST', path: '/v1/agent/act', operationId: 'act', summary: 'test', tags: ['t'], auth: 'robots:write',
  body: Type.Object({ action: Type.String() }, { additionalProperties: false }),
  responses: { 200: { description: 'ok' } },
  urgent: (body) => (body as { action: string }).action === 'stop',
  handler: ({ body }) => {
    served.push((body as { action: string }).action);
    return { status: 200, body: { ok: true } };
  },
};
const router = createRouter([route], { auth: new ApiKeyVerifier(store), rateLimiter: new RateLimiter({ ratePerSecond: 1, burst: 1 }) });

function post(action: unknown, key = apiKey): PlainRequest {
  return {
    method: 'POST', path: '/v1/agent/act', query: '',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(action)), remoteAddress: '127.0.0.1',
  };
}

describe('urgent requests past the rate limit', () => {
  it('serves a stop past the limit, refuses everything else with 429', async () => {
    const signal = new AbortController().signal;
    expect((await router(post({ action: 'start' }), signal)).status).toBe(200);
    const limited = await router(post({ action: 'start' }), signal);
    expect(limited.status).toBe(429);
    expect(limited.headers['retry-after']).toBeDefined();
    expect((await router(post({ action: 'stop' }), signal)).status).toBe(200);
    expect((await router(post({ action: 'stop' }), signal)).status).toBe(200);
    // Urgent does not mean unchecked: an invalid body is still 400, a bad key still 401.
    expect((await router(post({ action: 'stop', extra: 1 }), signal)).status).toBe(400);
    expect((await router(post({ action: 'stop' }, 'fgk_nope'), signal)).status).toBe(401);
    expect(served).toEqual(['start', 'stop', 'stop']);
    // Past the limit only a body a stop could be is parsed: a larger one is 429 unread (parsed, this
    // one would be 400 for its unknown field).
    const large = await router(post({ action: 'stop', pad: 'x'.repeat(17 * 1024) }), signal);
    expect(large.status).toBe(429);
  });
});
