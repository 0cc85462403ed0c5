// Issue 13 part 4 through the real `fleetgw serve`: CORS (off by default, an allow-list, preflight),
// the API reference at /docs served offline, `WWW-Authenticate: Bearer` on 401, RateLimit headers,
// and /openapi.json with an ETag and compression. node:http, not fetch: fetch would decompress and
// hide the Content-Encoding the gateway chose.
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fleetgw } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function send(base: string, method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
    req.end();
  });
}

const ALLOWED = 'https://ops.example.com';
const d = makeDataDir('fleetgw-browser-');
let withCors: RunningGateway;

beforeAll(async () => {
  withCors = await startGatewayProcess(d.dataDir, ['--insecure-http'], { FLEETGW_CORS_ORIGINS: `${ALLOWED}, http://127.0.0.1:9999`, FLEETGW_RATE_LIMIT_BURST: '3', FLEETGW_RATE_LIMIT_RPS: '1' });
}, 90_000);
afterAll(async () => {
  await withCors?.stop();
  rmSync(d.dataDir, { recursive: true, force: true });
});

describe('CORS', () => {
  it('is off by default: no CORS headers, and a preflight is not answered as one', async () => {
    const gw = await startGatewayProcess(makeDataDir('fleetgw-browser-off-').dataDir);
    try {
      const pre = await send(gw.ready.http, 'OPTIONS', '/v1/me', { origin: ALLOWED, 'access-control-request-method': 'GET' });
      expect(pre.headers['access-control-allow-origin']).toBeUndefined();
      expect(pre.status).toBe(405);
      const get = await send(gw.ready.http, 'GET', '/v1/me', { origin: ALLOWED, authorization: 'Bearer nope' });
      expect(get.headers['access-control-allow-origin']).toBeUndefined();
      expect(get.headers.vary).toBeUndefined();
    } finally {
      await gw.stop();
    }
  });

  it('answers a preflight from a listed origin with the path\'s methods, and refuses another origin with JSON', async () => {
    const base = withCors.ready.http;
    const pre = await send(base, 'OPTIONS', `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/stop-all`, {
      origin: ALLOWED,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    });
    expect(pre.status).toBe(204);
    expect(pre.body.length).toBe(0);
    expect(pre.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(String(pre.headers['access-control-allow-methods'])).toContain('POST');
    expect(String(pre.headers['access-control-allow-headers'])).toContain('authorization');
    expect(pre.headers['access-control-allow-credentials']).toBeUndefined();
    expect(Number(pre.headers['access-control-max-age'])).toBeGreaterThan(0);

    const evil = await send(base, 'OPTIONS', '/v1/me', { origin: 'https://evil.example', 'access-control-request-method': 'GET' });
    expect(evil.status).toBe(403);
    expect(JSON.parse(evil.body.toString())).toMatchObject({ code: 'forbidden' });
    expect(JSON.parse(evil.body.toString()).error).toContain('https://evil.example');
    expect(evil.headers['access-control-allow-origin']).toBeUndefined();

    const unknown = await send(base, 'OPTIONS', '/v1/nothing-here', { origin: ALLOWED, 'access-control-request-method': 'GET' });
    expect(unknown.status).toBe(404);
  });

  it('marks actual answers for a listed origin only, and always varies on Origin', async () => {
    const base = withCors.ready.http;
    const ok = await send(base, 'GET', '/v1/me', { origin: ALLOWED, authorization: `Bearer ${d.apiKey}` });
    expect(ok.status).toBe(200);
    expect(ok.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(String(ok.headers['access-control-expose-headers'])).toContain('ratelimit');
    expect(String(ok.headers.vary)).toContain('Origin');
    const other = await send(base, 'GET', '/v1/me', { origin: 'https://evil.example', authorization: `Bearer ${d.apiKey}` });
    expect(other.status).toBe(200);
    expect(other.headers['access-control-allow-origin']).toBeUndefined();
    expect(String(other.headers.vary)).toContain('Origin');
  });

  it('refuses a malformed FLEETGW_CORS_ORIGINS at start, naming it', () => {
    const r = fleetgw(['serve', '--data-dir', d.dataDir, '--insecure-http', '--port', '0', '--grpc-port', '0'], { ...process.env, FLEETGW_CORS_ORIGINS: 'https://ok.example, *.example.com' });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('FLEETGW_CORS_ORIGINS');
    expect(r.stderr).toContain('*.example.com');
  });
});

describe('authentication and rate-limit headers', () => {
  it('a 401 names the Bearer scheme', async () => {
    const r = await send(withCors.ready.http, 'GET', '/v1/me');
    expect(r.status).toBe(401);
    expect(r.headers['www-authenticate']).toBe('Bearer realm="fleet-gateway"');
    expect(JSON.parse(r.body.toString()).code).toBe('unauthorized');
  });

  it('every authenticated answer carries RateLimit and RateLimit-Policy, down to r=0 on the 429', async () => {
    const key = { authorization: `Bearer ${d.apiKey}` };
    const seen: string[] = [];
    let limited: Answer | undefined;
    for (let i = 0; i < 6 && limited === undefined; i++) {
      const r = await send(withCors.ready.http, 'GET', '/v1/me', key);
      expect(r.headers['ratelimit-policy']).toBe('"per-key";q=3;w=3');
      seen.push(String(r.headers.ratelimit));
      if (r.status === 429) limited = r;
    }
    expect(limited).toBeDefined();
    expect(limited!.headers['retry-after']).toBeDefined();
    expect(limited!.headers.ratelimit).toMatch(/^"per-key";r=0;t=[1-9]\d*$/);
    // Remaining never rises between requests sent back to back (1 token/s refill at most).
    const remaining = seen.map((h) => Number(/;r=(\d+);/.exec(h)?.[1]));
    expect(remaining.every((r) => Number.isInteger(r))).toBe(true);
    expect(remaining[0]).toBeLessThanOrEqual(2);
    // No credential: no bucket, no RateLimit header.
    expect((await send(withCors.ready.http, 'GET', '/openapi.json')).headers.ratelimit).toBeUndefined();
  });
});

describe('prepared documents', () => {
  it('/openapi.json has a strong ETag, answers If-None-Match with 304, and compresses as asked', async () => {
    const base = withCors.ready.http;
    const identity = await send(base, 'GET', '/openapi.json');
    expect(identity.status).toBe(200);
    expect(identity.headers['content-encoding']).toBeUndefined();
    const etag = String(identity.headers.etag);
    expect(etag).toMatch(/^"sha256-[\w-]+"$/);
    expect(String(identity.headers.vary)).toContain('Accept-Encoding');
    const doc = JSON.parse(identity.body.toString()) as { openapi: string; paths: Record<string, unknown> };
    expect(doc.openapi).toBe('3.1.0');

    const br = await send(base, 'GET', '/openapi.json', { 'accept-encoding': 'gzip, br' });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.body).equals(identity.body)).toBe(true);
    expect(br.body.length).toBeLessThan(identity.body.length / 4);
    const gz = await send(base, 'GET', '/openapi.json', { 'accept-encoding': 'gzip, br;q=0' });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.body).equals(identity.body)).toBe(true);

    const again = await send(base, 'GET', '/openapi.json', { 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    expect(again.headers.etag).toBe(etag);
    const stale = await send(base, 'GET', '/openapi.json', { 'if-none-match': '"sha256-other"' });
    expect(stale.status).toBe(200);
  });

  it('/docs renders the document offline: its own files, a strict CSP, not listed as an API operation', async () => {
    const base = withCors.ready.http;
    const page = await send(base, 'GET', '/docs');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    const csp = String(page.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-eval');
    const html = page.body.toString();
    expect(html).not.toMatch(/https?:\/\//);
    for (const src of html.matchAll(/(?:src|href)="([^"]+)"/g)) {
      const asset = await send(base, 'GET', src[1]!, { 'accept-encoding': 'br' });
      expect(asset.status, src[1]).toBe(200);
    }
    const bundle = await send(base, 'GET', '/docs/swagger-ui-bundle.js', { 'accept-encoding': 'gzip' });
    expect(bundle.headers['content-encoding']).toBe('gzip');
    expect(bundle.headers['content-type']).toBe('text/javascript; charset=utf-8');
    const init = (await send(base, 'GET', '/docs/init.js')).body.toString();
    expect(init).toContain("url: '/openapi.json'");
    const doc = JSON.parse((await send(base, 'GET', '/openapi.json')).body.toString()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/docs'))).toEqual([]);
    expect((await send(base, 'HEAD', '/docs')).body.length).toBe(0);
  });
});
