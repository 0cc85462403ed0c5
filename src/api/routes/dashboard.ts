/**
 * GET / (the browser dashboard, docs/dashboard.md) and GET /app/{file} (its script, styles and
 * images), every file served by the gateway itself: a depot's network often reaches no CDN. The files
 * are read and compressed once at start (src/gateway/dashboard-assets.ts).
 */
import { browserPageRoutes } from '../browser-page-routes.js';
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

/**
 * @param assets `index.html` (the page) and the files it loads, by file name
 */
export function dashboardRoutes(assets: ReadonlyMap<string, PreparedAsset>): RouteDef[] {
  return browserPageRoutes(
    {
      name: 'dashboard',
      pagePath: '/',
      filesPrefix: '/app',
      pageOperationId: 'dashboardPage',
      fileOperationId: 'dashboardFile',
      pageSummary: 'The browser dashboard.',
      fileSummary: 'A file the dashboard loads.',
      fileExample: 'app.js',
      headers: PAGE_HEADERS,
    },
    assets,
  );
}
