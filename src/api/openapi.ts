/**
 * Builds the OpenAPI 3.1 document from the same RouteDefs the router serves, so the published contract
 * and the served routes cannot drift: every operation, parameter, body and response schema here is the
 * very TypeBox object ajv validates with.
 *
 * Error responses come from the catalog, grouped by HTTP status: one shared `components.responses`
 * entry per status (listing every catalog entry with that status), referenced by each operation that
 * can return it.
 */
import type { TSchema } from '@sinclair/typebox';
import { ERROR_CATALOG, type ErrorId } from '../errors/catalog.js';
import type { RouteDef } from './route.js';
import { ErrorBody } from './schemas/common.js';

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
}

type Json = Record<string, unknown>;

const ERROR_TITLES: Record<number, string> = {
  400: 'Bad request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflict',
  413: 'Body too large',
  415: 'Unsupported media type',
  422: 'Policy rejected',
  429: 'Rate limited',
  431: 'Request header fields too large',
  500: 'Internal error',
  502: 'All targets failed',
  503: 'Unavailable',
};

/** TypeBox schemas carry symbol-keyed metadata; JSON round-tripping leaves plain JSON Schema. */
function plain(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

function errorStatuses(): Map<number, ErrorId[]> {
  const byStatus = new Map<number, ErrorId[]>();
  for (const [id, entry] of Object.entries(ERROR_CATALOG) as [ErrorId, (typeof ERROR_CATALOG)[ErrorId]][]) {
    const list = byStatus.get(entry.status) ?? [];
    list.push(id);
    byStatus.set(entry.status, list);
  }
  return byStatus;
}

function errorComponents(byStatus: Map<number, ErrorId[]>): Json {
  const out: Json = {};
  for (const [status, ids] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    const lines = ids.map((id) => `- \`${ERROR_CATALOG[id].code}\` (${id}): ${ERROR_CATALOG[id].template}`);
    const response: Json = {
      description: `${ERROR_TITLES[status] ?? 'Error'}.\n\n${lines.join('\n')}`,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorBody' } } },
    };
    if (status === 429) {
      response.headers = { 'Retry-After': { description: 'Whole seconds to wait before retrying.', schema: { type: 'integer', minimum: 1 } } };
    } else if (status === 405) {
      response.headers = { Allow: { description: 'Methods the path supports.', schema: { type: 'string' } } };
    }
    out[`Error${status}`] = response;
  }
  return out;
}

/** Statuses of the errors a route can produce: the router's own plus the route's declared ones. */
function routeErrorStatuses(route: RouteDef): Set<number> {
  const s = new Set<number>([400, 431, 500, 503]);
  if (route.auth !== 'none') {
    s.add(401);
    s.add(429);
  }
  if (route.auth !== 'none' && route.auth !== 'any') s.add(403);
  if (route.body) {
    s.add(413);
    s.add(415);
  }
  for (const id of route.errors ?? []) s.add(ERROR_CATALOG[id].status);
  return s;
}

function parameters(route: RouteDef): Json[] {
  const out: Json[] = [];
  const pathSchema = route.params ? plain(route.params) : { properties: {} };
  const pathProps = (pathSchema.properties ?? {}) as Record<string, Json>;
  for (const m of route.path.matchAll(/\{([^}]+)\}/g)) {
    const name = m[1]!;
    const schema = pathProps[name] ?? { type: 'string' };
    out.push({ name, in: 'path', required: true, schema, ...describe(schema) });
  }
  if (route.query) {
    const q = plain(route.query);
    const required = new Set((q.required as string[] | undefined) ?? []);
    for (const [name, schema] of Object.entries((q.properties ?? {}) as Record<string, Json>)) {
      out.push({ name, in: 'query', required: required.has(name), schema, ...describe(schema) });
    }
  }
  return out;
}

function describe(schema: Json): Json {
  return typeof schema.description === 'string' ? { description: schema.description } : {};
}

function operation(route: RouteDef): Json {
  const responses: Json = {};
  for (const [status, r] of Object.entries(route.responses)) {
    responses[status] = r.schema
      ? { description: r.description, content: { 'application/json': { schema: plain(r.schema) } } }
      : { description: r.description };
  }
  for (const status of [...routeErrorStatuses(route)].sort((a, b) => a - b)) {
    if (responses[String(status)] === undefined) responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
  }
  const op: Json = {
    operationId: route.operationId,
    summary: route.summary,
    tags: route.tags,
    security: route.auth === 'none' ? [] : [{ bearerAuth: [] }],
  };
  if (route.auth !== 'none') {
    op.description = route.auth === 'any' ? 'Any valid API key.' : `Requires permission \`${route.auth}\`.`;
    if (route.auth !== 'any') op['x-permission'] = route.auth;
  }
  const params = parameters(route);
  if (params.length > 0) op.parameters = params;
  if (route.body) op.requestBody = { required: true, content: { 'application/json': { schema: plain(route.body) } } };
  op.responses = responses;
  return op;
}

/**
 * The OpenAPI 3.1 document for `routes`.
 * @throws Error when two routes share an operationId (OpenAPI requires them unique)
 */
export function buildOpenApi(routes: readonly RouteDef[], info: OpenApiInfo): Json {
  const paths: Record<string, Json> = {};
  const opIds = new Set<string>();
  const tags = new Set<string>();
  for (const route of routes) {
    if (opIds.has(route.operationId)) throw new Error(`duplicate operationId ${route.operationId}`);
    opIds.add(route.operationId);
    route.tags.forEach((t) => tags.add(t));
    const item = (paths[route.path] ??= {});
    item[route.method.toLowerCase()] = operation(route);
  }
  return {
    openapi: '3.1.0',
    info: { ...info },
    tags: [...tags].sort().map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key: `Authorization: Bearer fgk_<key id>_<secret>`. Never in a URL.' },
      },
      schemas: { ErrorBody: plain(ErrorBody) },
      responses: errorComponents(errorStatuses()),
    },
  };
}
