/**
 * GET /docs: the API reference, rendered in the browser from /openapi.json by Swagger UI
 * (swagger-ui-dist), every file served by the gateway itself: a depot's network often reaches no CDN.
 * The files are read and compressed once at start (src/gateway/api-docs-assets.ts).
 */
import { Type } from '@sinclair/typebox';
import { apiError } from '../../errors/catalog.js';
import { defineRoute } from '../define-route.js';
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


/** Path parameter of a file of the page. */
const FileParams = Type.Object({ file: Type.String({ maxLength: 100, description: 'A file the page loads, e.g. swagger-ui-bundle.js.' }) });

/**
 * @param assets `index.html` (the page) and the files it loads, by file name
 */
export function apiDocsRoutes(assets: ReadonlyMap<string, PreparedAsset>): RouteDef[] {
  const page = assets.get('index.html');
  if (page === undefined) throw new Error('API docs: index.html is missing');
  return [
    defineRoute({
      method: 'GET',
      path: '/docs',
      operationId: 'apiDocsPage',
      summary: 'The API reference page.',
      tags: ['Discovery'],
      auth: 'none',
      browserAsset: true,
      responses: { 200: { description: 'The page.', contentType: page.contentType }, 304: { description: 'Not modified.' } },
    }).handle(() => ({ status: 200, body: page, headers: PAGE_HEADERS })),
    defineRoute({
      method: 'GET',
      path: '/docs/{file}',
      operationId: 'apiDocsFile',
      summary: 'A file the API reference page loads.',
      tags: ['Discovery'],
      auth: 'none',
      browserAsset: true,
      params: FileParams,
      errors: ['route_not_found'],
      responses: { 200: { description: 'The file.', contentType: 'application/octet-stream' }, 304: { description: 'Not modified.' } },
    }).handle(({ params }) => {
      const asset = params.file === 'index.html' ? undefined : assets.get(params.file);
      if (asset === undefined) throw apiError('route_not_found', { method: 'GET', path: `/docs/${params.file}` });
      return { status: 200, body: asset, headers: PAGE_HEADERS };
    }),
  ];
}
