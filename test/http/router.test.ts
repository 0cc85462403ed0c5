/**
 * The router core on plain objects, no sockets: matching, 404/405, media type, JSON parsing, strict
 * validation (spec Conventions 2), error shape, internal-error logging.
 */
import { captureLog } from '../support/capture-log.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Uuid } from '../../src/api/schemas/common.js';
import { apiError } from '../../src/errors/catalog.js';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { ApiKeyVerifier } from '../../src/auth/authenticate.js';
import { createRouter, parseQuery, type Router } from '../../src/http/router.js';
import type { PlainRequest, PlainResponse } from '../../src/http/types.js';
import type { RouteDef } from '../../src/api/route.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { createOrg } from '../../src/store/identity.js';
import { createApiKey } from '../../src/auth/key-admin.js';

const StrictBody = Type.Object(
  {
    org_id: Uuid,
    robot_ids: Type.Array(Uuid, { maxItems: 3 }),
    note: Type.Optional(Type.String()),
    wait_for_ack_ms: Type.Optional(Type.Integer({ minimum: 1 })),
  },
  { additionalProperties: false },
);

let dir: string;
let store: Store;
let key: string;
let router: Router;
const logs: string[] = [];
const seen: unknown[] = [];

const routes: RouteDef[] = [
  {
    method: 'POST', path: '/v1/agent/echo', operationId: 'echo', summary: 'test', tags: ['t'], auth: 'robots:write',
    body: StrictBody, responses: { 200: { description: 'ok' } },
    handler: ({ body }) => { seen.push(body); return { status: 200, body: { ok: true } }; },
  },
  {
    method: 'GET', path: '/v1/agent/{tool}', operationId: 'tool', summary: 'test', tags: ['t'], auth: 'any',
    params: Type.Object({ tool: Type.String({ pattern: '^[a-z-]+$' }) }, { additionalProperties: false }),
    responses: { 200: { description: 'ok' } },
    handler: ({ params }) => ({ status: 200, body: { tool: (params as { tool: string }).tool } }),
  },
  {
    method: 'GET', path: '/v1/agent/literal', operationId: 'literal', summary: 'test', tags: ['t'], auth: 'any',
    query: Type.Object({ n: Type.Integer({ minimum: 1 }), tag: Type.Optional(Type.Array(Type.String())) }, { additionalProperties: false }),
    responses: { 200: { description: 'ok' } },
    handler: ({ query }) => ({ status: 200, body: query }),
  },
  {
    method: 'DELETE', path: '/v1/agent/literal', operationId: 'literalDel', summary: 'test', tags: ['t'], auth: 'any',
    responses: { 204: { description: 'gone' } },
    handler: () => ({ status: 204, body: null }),
  },
  {
    method: 'GET', path: '/v1/boom', operationId: 'boom', summary: 'test', tags: ['t'], auth: 'any',
    responses: { 200: { description: 'never' } },
    handler: () => { throw new Error('kaboom'); },
  },
  {
    method: 'GET', path: '/v1/conflict', operationId: 'conflict', summary: 'test', tags: ['t'], auth: 'any',
    responses: { 200: { description: 'never' } },
    handler: () => { throw apiError('robot_not_found', { robotId: 'r1' }, { headers: { 'x-extra': 'yes' } }); },
  },
];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-router-'));
  store = openStore(dir);
  const org = createOrg(store, 'o').orgId;
  key = createApiKey(store, { orgId: org, fleetId: null, permissions: ['robots:write'], expiresAtMs: null }).apiKey;
  router = createRouter(routes, { auth: new ApiKeyVerifier(store), rateLimiter: new RateLimiter(), log: captureLog(logs) });
});
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function req(method: string, path: string, opts: { query?: string; body?: string; type?: string; auth?: string | null } = {}): PlainRequest {
  const headers: PlainRequest['headers'] = {};
  if (opts.auth !== null) headers.authorization = opts.auth ?? `Bearer ${key}`;
  if (opts.type !== undefined) headers['content-type'] = opts.type;
  return { method, path, query: opts.query ?? '', headers, body: Buffer.from(opts.body ?? ''), remoteAddress: '127.0.0.1' };
}

async function send(r: PlainRequest): Promise<PlainResponse & { json: any }> {
  const out = await router(r, new AbortController().signal);
  expect(out.headers['content-type']).toBe('application/json');
  return { ...out, json: out.body === '' ? null : JSON.parse(out.body as string) };
}

const ID = '3f2b8c1e-9a4d-4c6b-8e2f-1a2b3c4d5e6f';
const good = { org_id: ID, robot_ids: [ID] };

describe('routing', () => {
  it('unknown route: 404 route_not_found in the error shape', async () => {
    const r = await send(req('GET', '/v1/nothing'));
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: 'No route for GET /v1/nothing.', code: 'not_found' });
    expect((await send(req('GET', '/v1/agent/echo/extra'))).status).toBe(404);
    expect((await send(req('GET', '/v1/agent/'))).status).toBe(404);
  });

  it('known path, wrong method: 405 with an Allow header, before authentication', async () => {
    const r = await send(req('PUT', '/v1/agent/literal', { auth: null }));
    expect(r.status).toBe(405);
    expect(r.json.code).toBe('bad_request');
    // HEAD is served wherever GET is (issue 8 item 7), so it is allowed too.
    expect(r.headers.allow?.split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD']);
  });

  it('a literal segment wins over a template whatever the declaration order', async () => {
    expect((await send(req('GET', '/v1/agent/literal', { query: 'n=1' }))).json).toEqual({ n: 1 });
    expect((await send(req('GET', '/v1/agent/list-things'))).json).toEqual({ tool: 'list-things' });
    expect((await send(req('GET', '/v1/agent/BAD_TOOL'))).status).toBe(400);
  });

  it('204 has an empty body', async () => {
    const r = await send(req('DELETE', '/v1/agent/literal'));
    expect(r.status).toBe(204);
    expect(r.body).toBe('');
  });
});

describe('query strings', () => {
  it('are parsed, coerced to the schema types and strictly checked', async () => {
    expect((await send(req('GET', '/v1/agent/literal', { query: 'n=5&tag=a&tag=b' }))).json).toEqual({ n: 5, tag: ['a', 'b'] });
    expect((await send(req('GET', '/v1/agent/literal', { query: 'n=5&tag=a' }))).json).toEqual({ n: 5, tag: ['a'] });
    for (const q of ['', 'n=0', 'n=abc', 'n=1&other=2', 'n=1&n=2']) {
      const r = await send(req('GET', '/v1/agent/literal', { query: q }));
      expect({ q, status: r.status, code: r.json.code }).toEqual({ q, status: 400, code: 'bad_request' });
    }
  });

  it('a route without a query schema takes no query parameters', async () => {
    const r = await send(req('GET', '/v1/agent/some-tool', { query: 'x=1' }));
    expect(r.status).toBe(400);
    expect(r.json.error).toContain("'x'");
  });

  it('parseQuery decodes escapes and repeats', () => {
    expect({ ...parseQuery('a=1%202&b=x+y&a=3') }).toEqual({ a: ['1 2', '3'], b: 'x y' });
    expect({ ...parseQuery('') }).toEqual({});
  });
});

describe('JSON bodies', () => {
  it('a valid body reaches the handler', async () => {
    const r = await send(req('POST', '/v1/agent/echo', { body: JSON.stringify(good), type: 'application/json; charset=utf-8' }));
    expect(r.status).toBe(200);
    expect(seen.at(-1)).toEqual(good);
  });

  it('wrong or missing content type: 415', async () => {
    for (const type of [undefined, 'text/plain', 'application/jsonx', 'application/x-www-form-urlencoded']) {
      const r = await send(req('POST', '/v1/agent/echo', { body: JSON.stringify(good), type }));
      expect({ type, status: r.status }).toEqual({ type, status: 415 });
      expect(r.json.code).toBe('bad_request');
    }
  });

  it('malformed JSON: 400 bad_request', async () => {
    for (const body of ['{', '{"org_id":', "{'a':1}", '', 'nul']) {
      const r = await send(req('POST', '/v1/agent/echo', { body, type: 'application/json' }));
      expect({ body, status: r.status }).toEqual({ body, status: 400 });
      expect(r.json).toEqual({ error: 'Request body is not valid JSON.', code: 'bad_request' });
    }
  });

  it('strict validation: unknown field, malformed UUID, non-array, bad member, wrong type all give 400', async () => {
    const cases: Record<string, unknown> = {
      'unknown field': { ...good, extra: 1 },
      'malformed uuid': { ...good, org_id: 'abc' },
      'urn:uuid prefix': { ...good, org_id: `urn:uuid:${ID}` },
      'non-array': { ...good, robot_ids: ID },
      'bad array member': { ...good, robot_ids: [ID, 'nope'] },
      'array too long': { ...good, robot_ids: [ID, ID, ID, ID] },
      'string for integer (no coercion in bodies)': { ...good, wait_for_ack_ms: '5' },
      'missing required': { org_id: ID },
      'not an object': [good],
      null: null,
    };
    for (const [label, body] of Object.entries(cases)) {
      const r = await send(req('POST', '/v1/agent/echo', { body: JSON.stringify(body), type: 'application/json' }));
      expect({ label, status: r.status, code: r.json.code }).toEqual({ label, status: 400, code: 'bad_request' });
    }
    const unknown = await send(req('POST', '/v1/agent/echo', { body: JSON.stringify({ ...good, extra: 1 }), type: 'application/json' }));
    expect(unknown.json.error).toContain("unknown field 'extra'");
    const member = await send(req('POST', '/v1/agent/echo', { body: JSON.stringify({ ...good, robot_ids: [ID, 'x'] }), type: 'application/json' }));
    expect(member.json.error).toBe('Invalid request body: robot_ids[1] must be a UUID (8-4-4-4-12 hex digits).');
  });

  it('UUIDs in any letter case reach the handler lower-cased (also array members)', async () => {
    const mixed = ID.toUpperCase().replace(/^../, (c) => c.toLowerCase());
    const r = await send(req('POST', '/v1/agent/echo', { body: JSON.stringify({ ...good, org_id: mixed, robot_ids: [ID.toUpperCase()] }), type: 'application/json' }));
    expect(r.status).toBe(200);
    expect(seen.at(-1)).toEqual({ ...good, org_id: ID, robot_ids: [ID] });
  });

  it('a body on a route that takes none is 400; an empty one is fine', async () => {
    expect((await send(req('GET', '/v1/agent/literal', { query: 'n=1', body: '{}', type: 'application/json' }))).status).toBe(400);
    expect((await send(req('GET', '/v1/agent/literal', { query: 'n=1' }))).status).toBe(200);
  });
});

describe('failures', () => {
  it('an ApiError from a handler keeps its status, headers and body', async () => {
    const r = await send(req('GET', '/v1/conflict'));
    expect(r.status).toBe(404);
    expect(r.headers['x-extra']).toBe('yes');
    expect(r.json).toEqual({ error: 'Robot r1 was not found.', code: 'not_found' });
  });

  it('anything else is 500 internal, logged with the route but never the credential', async () => {
    logs.length = 0;
    const r = await send(req('GET', '/v1/boom'));
    expect(r.status).toBe(500);
    expect(r.json).toEqual({ error: 'Unexpected server error.', code: 'internal' });
    expect(logs.join('\n')).toContain('GET /v1/boom');
    expect(logs.join('\n')).toContain('kaboom');
    expect(logs.join('\n')).not.toContain(key);
    expect(logs.join('\n')).not.toContain(key.slice(37));
  });

  it('validation runs after authentication and permission checks', async () => {
    expect((await send(req('POST', '/v1/agent/echo', { body: '{', type: 'application/json', auth: null }))).status).toBe(401);
  });

  it('compiles schemas once, when the router is built, never per request', async () => {
    const compile = vi.spyOn(Ajv.prototype, 'compile');
    try {
      const r2 = createRouter(routes, { auth: new ApiKeyVerifier(store), rateLimiter: new RateLimiter() });
      const atStart = compile.mock.calls.length;
      expect(atStart).toBeGreaterThanOrEqual(3);
      for (let i = 0; i < 5; i++) {
        await r2(req('POST', '/v1/agent/echo', { body: JSON.stringify(good), type: 'application/json' }), new AbortController().signal);
        await r2(req('GET', '/v1/agent/literal', { query: 'n=2' }), new AbortController().signal);
      }
      expect(compile.mock.calls.length).toBe(atStart);
    } finally {
      compile.mockRestore();
    }
  });

  it('rejects duplicate routes at construction', () => {
    expect(() => createRouter([routes[0]!, routes[0]!], { auth: new ApiKeyVerifier(store), rateLimiter: new RateLimiter() })).toThrow(/duplicate route/);
  });
});
