/**
 * Request correlation and the completion hook: X-Request-Id validation, W3C traceparent parsing, the
 * observer list the adapter calls once per request (what the access log and request metrics use).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RouteDef } from '../../src/api/route.js';
import { ApiKeyVerifier } from '../../src/auth/authenticate.js';
import { accessLog } from '../../src/http/access-log.js';
import { RateLimiter } from '../../src/http/rate-limit.js';
import type { RequestDoneInfo } from '../../src/http/request-done.js';
import { MAX_REQUEST_ID_LENGTH, requestIdFrom, traceIdFrom } from '../../src/http/request-id.js';
import { createRouter } from '../../src/http/router.js';
import { startHttpServer, type HttpServer } from '../../src/http/uws-adapter.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { captureLog } from '../support/capture-log.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('requestIdFrom', () => {
  it('keeps a safe id and mints a UUID for a missing, empty, too long or unsafe one', () => {
    for (const ok of ['abc', '01HZX3J5K6', 'f47ac10b-58cc-4372-a567-0e02b2c3d479', 'host:42', 'a/b+c=', 'x'.repeat(MAX_REQUEST_ID_LENGTH)]) expect(requestIdFrom(ok)).toBe(ok);
    for (const bad of [undefined, '', 'x'.repeat(MAX_REQUEST_ID_LENGTH + 1), 'a b', 'a,b', 'a"b', 'a\u0000b', 'é', '<script>']) expect(requestIdFrom(bad), String(bad)).toMatch(UUID);
    expect(requestIdFrom(undefined)).not.toBe(requestIdFrom(undefined));
  });
});

describe('traceIdFrom', () => {
  const T = '4bf92f3577b34da6a3ce929d0e0e4736';
  it('reads the trace id of a valid traceparent', () => {
    expect(traceIdFrom(`00-${T}-00f067aa0ba902b7-01`)).toBe(T);
    // A later version may append fields (W3C trace-context, "Versioning of traceparent").
    expect(traceIdFrom(`01-${T}-00f067aa0ba902b7-01-extra`)).toBe(T);
  });
  it('ignores an absent, malformed, all-zero, version ff or over-long header', () => {
    for (const bad of [undefined, '', 'garbage', `00-${T.toUpperCase()}-00f067aa0ba902b7-01`, `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      `00-${T}-${'0'.repeat(16)}-01`, `ff-${T}-00f067aa0ba902b7-01`, `00-${T}-00f067aa0ba902b7-01-extra`, `00-${T}-00f067aa0ba902b7-01${'x'.repeat(600)}`]) {
      expect(traceIdFrom(bad), String(bad)).toBeNull();
    }
  });
});

describe('the completion hook through the uWS adapter', () => {
  let dir: string;
  let store: Store;
  let server: HttpServer;
  const seen: RequestDoneInfo[] = [];
  const lines: string[] = [];
  const routes: RouteDef[] = [
    { method: 'GET', path: '/things/{id}', operationId: 'thing', summary: 't', tags: ['t'], auth: 'none', responses: { 200: { description: 'ok' } }, handler: () => ({ status: 200, body: {} }) },
    { method: 'GET', path: '/boom', operationId: 'boom', summary: 't', tags: ['t'], auth: 'none', responses: { 200: { description: 'ok' } }, handler: () => { throw new Error('kaboom'); } },
  ];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-done-'));
    store = openStore(dir);
    const router = createRouter(routes, { auth: new ApiKeyVerifier(store), rateLimiter: new RateLimiter(), log: captureLog(lines) });
    server = await startHttpServer({
      host: '127.0.0.1', port: 0, tls: null, handle: router, log: captureLog(lines),
      onRequestDone: [
        (info) => seen.push(info),
        () => {
          throw new Error('observer bug');
        },
        accessLog(captureLog(lines)),
      ],
    });
  });
  afterAll(async () => {
    server.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('calls every observer once per request with the route template, status, duration and ids; one that throws is logged, not fatal', async () => {
    const res = await fetch(`${server.url}/things/42?ticket=secret-ticket`, { headers: { 'x-request-id': 'r-1', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
    expect(res.status).toBe(400); // the route takes no query
    expect(res.headers.get('x-request-id')).toBe('r-1');
    const boom = await fetch(`${server.url}/boom`);
    expect(boom.status).toBe(500);
    const boomId = boom.headers.get('x-request-id') ?? '';
    expect(boomId).toMatch(UUID);
    expect((await fetch(`${server.url}/things/7`)).status).toBe(200);

    expect(seen).toHaveLength(3);
    expect(seen[0]).toMatchObject({ method: 'GET', route: '/things/{id}', status: 400, keyId: null, requestId: 'r-1', traceId: '4bf92f3577b34da6a3ce929d0e0e4736', aborted: false });
    expect(seen[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(seen[1]).toMatchObject({ route: '/boom', status: 500, requestId: boomId, traceId: null });
    expect(seen[2]).toMatchObject({ route: '/things/{id}', status: 200 });

    const text = lines.join('\n');
    expect(text).toContain('internal error on GET /boom');
    expect(text).toContain('kaboom');
    expect(text).toContain(boomId);
    expect(lines.filter((l) => l.startsWith('request observer failed'))).toHaveLength(3);
    expect(lines.filter((l) => l.startsWith('GET /things/{id} '))).toHaveLength(2);
    expect(text).not.toContain('secret-ticket');
    expect(text).not.toContain('/things/42');
  });
});
