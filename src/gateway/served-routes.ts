/**
 * The one route list the gateway serves: the http plugin's own routes (the document, the API reference,
 * the dashboard, health, the caller's identity, MCP) and the groups every plugin declared, laid out by
 * ROUTE_GROUP_ORDER and wrapped for Idempotency-Key where declared. The router serves exactly this list
 * and /openapi.json is built from it, so the two cannot disagree.
 */
import type { Logger } from 'pino';
import { withRouteIdempotency } from '../api/idempotent-routes.js';
import { buildOpenApi, RELATIVE_SERVER } from '../api/openapi.js';
import type { PreparedAsset } from '../api/prepared-body.js';
import type { RouteDef } from '../api/route.js';
import { apiDocsRoutes } from '../api/routes/api-docs.js';
import { dashboardRoutes } from '../api/routes/dashboard.js';
import { healthRoutes } from '../api/routes/health.js';
import { mcpRoutes, type McpRouteDeps } from '../api/routes/mcp.js';
import { meRoutes } from '../api/routes/me.js';
import { openApiRoutes } from '../api/routes/openapi.js';
import type { IdempotencyClaims } from '../idempotency/claims.js';
import { API_INFO } from './api-info.js';
import { orderRouteGroups, type RouteGroup } from './route-groups.js';

export interface ServedRouteDeps {
  /** The route groups the plugins declared (route-groups.ts). */
  groups: readonly RouteGroup[];
  /** Idempotency-Key claims, for the routes that declare `idempotencyKey`. */
  idempotency: IdempotencyClaims;
  /**
   * The gateway's own REST URL, published as the document's `servers` entry ('' until the server
   * listens, and without a server at all: then the relative `/` server, see openapi.ts).
   */
  httpUrl?: () => string;
  /** Readiness behind GET /readyz (src/gateway/readiness.ts). */
  ready: () => boolean;
  /** Ready with the telemetry store down (spooling): /readyz says `degraded`. */
  degraded?: () => boolean;
  /** The files of GET /docs (api-docs-assets.ts); absent: no /docs. */
  apiDocs?: ReadonlyMap<string, PreparedAsset>;
  /** The dashboard's files for GET / (dashboard-assets.ts); absent: no dashboard. */
  dashboard?: ReadonlyMap<string, PreparedAsset>;
  /** The MCP session table behind `/v1/mcp` and the tool names (src/gateway/mcp.ts `LateMcp`: filled in once the router exists). */
  mcp: McpRouteDeps;
  log?: Logger;
}

/** Builds the served route list and the OpenAPI document describing it. */
export function composeServedRoutes(deps: ServedRouteDeps): { routes: RouteDef[]; openapi: Record<string, unknown> } {
  let doc: Record<string, unknown> = {};
  let served: Record<string, unknown> | null = null;
  const document = (): Record<string, unknown> => {
    const url = deps.httpUrl?.() ?? '';
    if (url === '') return doc;
    served ??= { ...doc, servers: [{ url, description: 'This gateway.' }, RELATIVE_SERVER] };
    return served;
  };
  const own: RouteGroup[] = [
    { name: 'openapi', routes: openApiRoutes(document) },
    ...(deps.apiDocs ? [{ name: 'api-docs', routes: apiDocsRoutes(deps.apiDocs) }] : []),
    ...(deps.dashboard ? [{ name: 'dashboard', routes: dashboardRoutes(deps.dashboard) }] : []),
    { name: 'health', routes: healthRoutes({ ready: deps.ready, ...(deps.degraded ? { degraded: deps.degraded } : {}) }) },
    { name: 'me', routes: meRoutes() },
    // The Agent API over MCP: its tools are the `POST /v1/agent/*` routes of this very list (src/gateway/mcp.ts).
    { name: 'mcp', routes: mcpRoutes(deps.mcp) },
  ];
  const listed = orderRouteGroups([...own, ...deps.groups]).flatMap((g) => g.routes);
  const routes = withRouteIdempotency(listed, deps.idempotency, deps.log);
  doc = buildOpenApi(routes, API_INFO);
  return { routes, openapi: doc };
}
