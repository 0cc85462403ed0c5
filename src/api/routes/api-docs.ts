/**
 * GET /docs: the API reference, rendered in the browser from /openapi.json by Swagger UI
 * (swagger-ui-dist), every file served by the gateway itself: a depot's network often reaches no CDN.
 * The files are read and compressed once at start (src/gateway/api-docs-assets.ts).
 */
import { browserPageRoutes } from '../browser-page-routes.js';
import type { PreparedAsset } from '../prepared-body.js';
import type { RouteDef } from '../route.js';

/**
 * What the page may load: its own scripts and styles only, and requests to this gateway. Swagger UI
 * sets some styles from script, hence 'unsafe-inline' for styles (never for scripts).
 */
export const API_DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE_HEADERS = {
  'content-security-policy': API_DOCS_CSP,
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

/**
 * @param assets `index.html` (the page) and the files it loads, by file name
 */
export function apiDocsRoutes(assets: ReadonlyMap<string, PreparedAsset>): RouteDef[] {
  return browserPageRoutes(
    {
      name: 'API docs',
      pagePath: '/docs',
      filesPrefix: '/docs',
      pageOperationId: 'apiDocsPage',
      fileOperationId: 'apiDocsFile',
      pageSummary: 'The API reference page.',
      fileSummary: 'A file the API reference page loads.',
      fileExample: 'swagger-ui-bundle.js',
      headers: PAGE_HEADERS,
    },
    assets,
  );
}
