// The dashboard's routes (src/api/routes/dashboard.ts) over real HTTP with a bundle directory made by
// the test: the page at / and its files at /app/{file} with the CSP, ETag and types; nothing else of
// the directory, no source maps; kept out of /openapi.json; a missing bundle refused at load.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DASHBOARD_CSP, dashboardRoutes } from '../../src/api/routes/dashboard.js';
import { loadDashboardAssets } from '../../src/gateway/dashboard-assets.js';
import { call, startFixture, type Fixture } from './fixture.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetgw-dashboard-bundle-'));
let fx: Fixture;

/** A GET whose body is not JSON (the fixture's `call` parses JSON). */
async function get(path: string, headers: Record<string, string> = {}): Promise<{ status: number; headers: Headers; text: string }> {
  const res = await fetch(`${fx.server.url}${path}`, { headers });
  return { status: res.status, headers: res.headers, text: await res.text() };
}

beforeAll(async () => {
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>t</title><script src="/app/app.js"></script>');
  writeFileSync(join(dir, 'app.js'), `console.log(${JSON.stringify('x'.repeat(4000))});`);
  writeFileSync(join(dir, 'app.js.map'), '{}');
  writeFileSync(join(dir, 'app.css'), 'body{}');
  fx = await startFixture({ extraRoutes: dashboardRoutes(await loadDashboardAssets(dir)) });
});

afterAll(async () => {
  await fx?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('dashboard routes', () => {
  it('serves the page at / and its files at /app/{file}, with the CSP and an ETag, without a credential', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    expect(page.text).toContain('/app/app.js');
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('etag')).toMatch(/^"sha256-/);
    expect(DASHBOARD_CSP).toContain("script-src 'self'");
    expect(DASHBOARD_CSP).toContain("frame-ancestors 'none'");
    expect(DASHBOARD_CSP).not.toContain('unsafe');

    const js = await get('/app/app.js', { 'accept-encoding': 'gzip' });
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('content-security-policy')).toBe(DASHBOARD_CSP);
    expect(js.text).toContain('console.log');
    expect((await get('/app/app.js', { 'if-none-match': js.headers.get('etag') ?? '' })).status).toBe(304);
    expect((await get('/app/app.css')).headers.get('content-type')).toBe('text/css; charset=utf-8');
  });

  it('answers 404 for a file not in the bundle, a source map, and the page under /app/', async () => {
    for (const path of ['/app/nope.js', '/app/app.js.map', '/app/index.html', '/app/..%2Fpackage.json']) {
      const r = await call(fx, 'GET', path);
      expect(r.status, path).toBe(404);
      expect((r.json as { code: string }).code).toBe('not_found');
    }
  });

  it('is not an API operation: /openapi.json lists neither / nor /app/{file}', () => {
    const paths = Object.keys((fx.document as { paths: Record<string, unknown> }).paths);
    expect(paths).not.toContain('/');
    expect(paths).not.toContain('/app/{file}');
  });

  it('refuses a bundle directory without index.html, or none at all', async () => {
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    await expect(loadDashboardAssets(empty)).rejects.toThrow(/no index.html/);
    await expect(loadDashboardAssets(join(dir, 'missing'))).rejects.toThrow(/cannot read/);
  });
});
