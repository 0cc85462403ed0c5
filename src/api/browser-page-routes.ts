/**
 * The two routes of a page the gateway serves to browsers with the files it loads (the dashboard at
 * `/`, the API reference at `/docs`): the page itself and `{prefix}/{file}`, every file read and
 * compressed once at start (prepared-body.ts), with ETag/304 and the page's security headers.
 */
import { Type } from '@sinclair/typebox';
import { apiError } from '../errors/catalog.js';
import { defineRoute } from './define-route.js';
import type { PreparedAsset } from './prepared-body.js';
import type { RouteDef } from './route.js';

export interface BrowserPage {
  /** For the start-up error when `index.html` is missing. */
  name: string;
  /** Path of the page (`/`, `/docs`). */
  pagePath: string;
  /** Path prefix of its files (`/app`, `/docs`): they are served at `{filesPrefix}/{file}`. */
  filesPrefix: string;
  pageOperationId: string;
  fileOperationId: string;
  pageSummary: string;
  fileSummary: string;
  /** A file name for the parameter's description. */
  fileExample: string;
  /** Headers of the page and of every file (Content-Security-Policy and the like). */
  headers: Readonly<Record<string, string>>;
}

/**
 * @param assets `index.html` (the page) and the files it loads, by file name
 * @throws Error naming the page when `index.html` is missing
 */
export function browserPageRoutes(page: BrowserPage, assets: ReadonlyMap<string, PreparedAsset>): RouteDef[] {
  const index = assets.get('index.html');
  if (index === undefined) throw new Error(`${page.name}: index.html is missing`);
  const FileParams = Type.Object({ file: Type.String({ maxLength: 100, description: `A file the page loads, e.g. ${page.fileExample}.` }) });
  return [
    defineRoute({
      method: 'GET',
      path: page.pagePath,
      operationId: page.pageOperationId,
      summary: page.pageSummary,
      tags: ['Discovery'],
      auth: 'none',
      browserAsset: true,
      responses: { 200: { description: 'The page.', contentType: index.contentType }, 304: { description: 'Not modified.' } },
    }).handle(() => ({ status: 200, body: index, headers: page.headers })),
    defineRoute({
      method: 'GET',
      path: `${page.filesPrefix}/{file}`,
      operationId: page.fileOperationId,
      summary: page.fileSummary,
      tags: ['Discovery'],
      auth: 'none',
      browserAsset: true,
      params: FileParams,
      errors: ['route_not_found'],
      responses: { 200: { description: 'The file.', contentType: 'application/octet-stream' }, 304: { description: 'Not modified.' } },
    }).handle(({ params }) => {
      // The page is served at its own path only, so it has one URL (and one cache entry).
      const asset = params.file === 'index.html' ? undefined : assets.get(params.file);
      if (asset === undefined) throw apiError('route_not_found', { method: 'GET', path: `${page.filesPrefix}/${params.file}` });
      return { status: 200, body: asset, headers: page.headers };
    }),
  ];
}
