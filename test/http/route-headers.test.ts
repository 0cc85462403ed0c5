/**
 * Room for the browser (issue 9 part 10), through the real uWS adapter and router: a route declares
 * the request headers it reads and gets them typed and validated, undeclared headers are never copied,
 * and a route answers with any content type and headers (a static file with ETag and 304, gzip by
 * Accept-Encoding, a CORS preflight on OPTIONS) without a change to the core.
 */
import { request } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Type } from '@sinclair/typebox';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildOpenApi } from '../../src/api/openapi.js';
import { ApiKeyVerifier } from '../../src/auth/authenticate.js';
import { defineRoute } from '../../src/api/define-route.js';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { RawBody } from '../../src/api/raw-body.js';
import { createRouter, type Router } from '../../src/http/router.js';
import { startHttpServer, type HttpServer } from '../../src/http/uws-adapter.js';
import { openStore, type Store } from '../../src/store/lmdb.js';

const CSS = 'body { color: #333; }\n'.repeat(50);
const ETAG = '"css-v1"';

const routes = [
  defineRoute({
    method: 'GET', path: '/app.css', operationId: 'appCss', summary: 'A static file.', tags: ['t'], auth: 'none',
    headers: Type.Object({ 'if-none-match': Type.Optional(Type.String()), 'accept-encoding': Type.Optional(Type.String()) }, { additionalProperties: false }),
    responses: { 200: { description: 'The file.', contentType: 'text/css; charset=utf-8' }, 304: { description: 'Not modified.' } },
  }).handle(({ headers }) => {
    const cache = { etag: ETAG, 'cache-control': 'public, max-age=60', vary: 'accept-encoding' };
    if (headers['if-none-match'] === ETAG) return { status: 304, body: null, headers: cache };
    if (/\bgzip\b/.test(headers['accept-encoding'] ?? '')) {
      return { status: 200, body: new RawBody(gzipSync(CSS), 'text/css; charset=utf-8'), headers: { ...cache, 'content-encoding': 'gzip' } };
    }
    return { status: 200, body: new RawBody(CSS, 'text/css; charset=utf-8'), headers: cache };
  }),
  defineRoute({
    method: 'GET', path: '/session', operationId: 'session', summary: 'Reads a cookie.', tags: ['t'], auth: 'none',
    headers: Type.Object({ cookie: Type.String({ minLength: 1, maxLength: 4096 }) }, { additionalProperties: false }),
    responses: { 200: { description: 'The cookie as received.', schema: Type.Object({ cookie: Type.String() }, { additionalProperties: false }) } },
  }).handle(({ headers }) => ({ status: 200, body: { cookie: headers.cookie } })),
  defineRoute({
    method: 'OPTIONS', path: '/v1/things', operationId: 'thingsPreflight', summary: 'CORS preflight.', tags: ['t'], auth: 'none',
    headers: Type.Object({ origin: Type.String(), 'access-control-request-method': Type.String() }, { additionalProperties: false }),
    responses: { 204: { description: 'Allowed.' } },
  }).handle(({ headers }) => ({
    status: 204,
    body: null,
    headers: { 'access-control-allow-origin': headers.origin, 'access-control-allow-methods': 'GET, POST', 'access-control-allow-headers': 'authorization, content-type', 'access-control-max-age': '600' },
  })),
  defineRoute({
    method: 'GET', path: '/plain', operationId: 'plain', summary: 'Declares no header.', tags: ['t'], auth: 'none',
    responses: { 200: { description: 'The headers it was given.', schema: Type.Object({ names: Type.Array(Type.String()) }, { additionalProperties: false }) } },
  }).handle(({ headers }) => ({ status: 200, body: { names: Object.keys(headers) } })),
];

let dir: string;
let store: Store;
let router: Router;
let server: HttpServer;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-headers-'));
  store = openStore(dir);
  router = createRouter(routes, { auth: new ApiKeyVerifier(store), rateLimiter: new RateLimiter() });
  server = await startHttpServer({ host: '127.0.0.1', port: 0, tls: null, handle: router });
});

afterAll(async () => {
  server.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A raw HTTP/1.1 exchange (no automatic decompression), with repeated header lines where given. */
function send(method: string, path: string, headers: [string, string][] = []): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port: server.port, method, path, headers: [['Host', `127.0.0.1:${server.port}`], ...headers].flat() }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('declared request headers and raw responses', () => {
  it('copies only the headers some route declares, plus the core ones', () => {
    expect([...router.headerNames].sort()).toEqual(
      ['accept-encoding', 'access-control-request-method', 'authorization', 'content-type', 'cookie', 'if-none-match', 'origin', 'x-csrf-token'].sort(),
    );
  });

  it('serves a static file with its content type and ETag, and 304 to a matching If-None-Match', async () => {
    const first = await send('GET', '/app.css');
    expect(first.status).toBe(200);
    expect(first.headers['content-type']).toBe('text/css; charset=utf-8');
    expect(first.headers.etag).toBe(ETAG);
    expect(first.body.toString()).toBe(CSS);
    const again = await send('GET', '/app.css', [['If-None-Match', ETAG]]);
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    const head = await send('HEAD', '/app.css');
    expect(head.status).toBe(200);
    expect(head.headers['content-length']).toBe(String(Buffer.byteLength(CSS)));
  });

  it('compresses by Accept-Encoding: the bytes go out as the route made them', async () => {
    const gz = await send('GET', '/app.css', [['Accept-Encoding', 'br, gzip']]);
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.body.length).toBeLessThan(Buffer.byteLength(CSS));
    expect(gunzipSync(gz.body).toString()).toBe(CSS);
  });

  it('answers a CORS preflight on OPTIONS from the declared Origin and Access-Control-Request-Method', async () => {
    const pre = await send('OPTIONS', '/v1/things', [['Origin', 'https://dash.example'], ['Access-Control-Request-Method', 'POST']]);
    expect(pre.status).toBe(204);
    expect(pre.headers['access-control-allow-origin']).toBe('https://dash.example');
    const missing = await send('OPTIONS', '/v1/things', [['Origin', 'https://dash.example']]);
    expect(missing.status).toBe(400);
    expect(JSON.parse(missing.body.toString())).toEqual({ code: 'bad_request', error: 'Invalid header access-control-request-method: is required.' });
  });

  it('joins repeated cookie lines and validates a declared header like any input', async () => {
    const r = await send('GET', '/session', [['Cookie', 'a=1'], ['Cookie', 'b=2']]);
    expect(JSON.parse(r.body.toString())).toEqual({ cookie: 'a=1; b=2' });
    const none = await send('GET', '/session');
    expect(none.status).toBe(400);
    const long = await send('GET', '/session', [['Cookie', `x=${'y'.repeat(5000)}`]]);
    expect(long.status).toBe(400);
    expect(JSON.parse(long.body.toString()).error).toMatch(/^Invalid header cookie: /);
  });

  it('gives a route no header it did not declare', async () => {
    const r = await send('GET', '/plain', [['Cookie', 'a=1'], ['Origin', 'https://x.example']]);
    expect(JSON.parse(r.body.toString())).toEqual({ names: [] });
  });

  it('publishes declared headers as header parameters and raw responses by media type', () => {
    const doc = buildOpenApi(routes, { title: 't', version: '0' }) as any;
    const css = doc.paths['/app.css'].get;
    expect(css.parameters.map((p: any) => [p.name, p.in, p.required])).toEqual([['If-None-Match', 'header', false], ['Accept-Encoding', 'header', false]]);
    expect(css.responses['200'].content).toEqual({ 'text/css; charset=utf-8': {} });
    expect(doc.paths['/v1/things'].options.parameters.map((p: any) => p.required)).toEqual([true, true]);
  });
});
