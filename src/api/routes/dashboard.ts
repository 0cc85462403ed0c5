/**
 * GET / (the browser dashboard, docs/dashboard.md) and GET /app/{file} (its script, styles and
 * images), every file served by the gateway itself: a depot's network often reaches no CDN. The files
 * are read and compressed once at start (src/gateway/dashboard-assets.ts).
 */
import { Type } from '@sinclair/typebox';
import { apiError } from '../../errors/catalog.js';
import { defineRoute } from '../define-route.js';
import type { PreparedAsset } from '../prepared-body.js';
import type { RouteDef } from '../route.js';

/**
 * What the page may load: its own script, styles and images, and requests (fetch and the telemetry
 * WebSocket) to this gateway. No inline script or style: the bundle sets styles only through the
 * CSSOM (element.style), which CSP does not restrict. `connect-src 'self'` covers ws:/wss: to the
 * same host and port (CSP Level 3, which Chromium and Firefox implement).
 */
export const DASHBOARD_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'content-security-policy': DASHBOARD_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
} as const;

const FileParams = Type.Object({ file: Type.String({ maxLength: 100, description: 'A file the page loads, e.g. app.js.' }) });

/**
 * @param assets `index.html` (the page) and the files it loads, by file name
 */
export function dashboardRoutes(assets: ReadonlyMap<string, PreparedAsset>): RouteDef[] {
  const page = assets.get('index.html');
  if (page === undefined) throw new Error('dashboard: index.html is missing');
  return [
    defineRoute({
      method: 'GET',
      path: '/',
      operationId: 'dashboardPage',
      summary: 'The browser dashboard.',
      tags: ['Discovery'],
      auth: 'none',
      browserAsset: true,
      responses: { 200: { description: 'The page.', contentType: page.contentType }, 304: { description: 'Not modified.' } },
    }).handle(() => ({ status: 200, body: page, headers: PAGE_HEADERS })),
    defineRoute({
      method: 'GET',
      path: '/app/{file}',
      operationId: 'dashboardFile',
      summary: 'A file the dashboard loads.',
      tags: ['Discovery'],
      auth: 'none',
      browserAsset: true,
      params: FileParams,
      errors: ['route_not_found'],
      responses: { 200: { description: 'The file.', contentType: 'application/octet-stream' }, 304: { description: 'Not modified.' } },
    }).handle(({ params }) => {
      const asset = params.file === 'index.html' ? undefined : assets.get(params.file);
      if (asset === undefined) throw apiError('route_not_found', { method: 'GET', path: `/app/${params.file}` });
      return { status: 200, body: asset, headers: PAGE_HEADERS };
    }),
  ];
}
