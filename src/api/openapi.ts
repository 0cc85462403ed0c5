/**
 * Builds the OpenAPI 3.1 document from the same RouteDefs the router serves, so the published contract
 * and the served routes cannot drift: every operation, parameter, body and response schema here is the
 * very TypeBox object ajv validates with.
 *
 * Schemas marked with a component name (schemas/named.ts) are published once under
 * `components.schemas` and referenced with `$ref` wherever they occur, so generated clients get one
 * named type per resource.
 *
 * Error responses come from the catalog, grouped by HTTP status: one shared `components.responses`
 * entry per status (listing every catalog entry with that status), referenced by each operation that
 * can return it. Each operation lists the catalog errors it can return by id (`x-errors`): the
 * router's (routerErrors) and the route's own; the contract test fails on an error an operation
 * returns without listing it.
 */
import type { TSchema } from '@sinclair/typebox';
import { SESSION_COOKIE } from '../auth/users/session-token.js';
import { ERROR_CATALOG, type ErrorId } from '../errors/catalog.js';
import type { RouteDef } from './route.js';
import { IDEMPOTENCY_KEY_SHAPE } from '../idempotency/index.js';
import { ErrorBody } from './schemas/common.js';
import { schemaName } from './schemas/named.js';

export interface OpenApiInfo {
  title: string;
  version: string;
  description?: string;
  /** Description of each tag the routes use (published in `tags`). */
  tagDescriptions?: Readonly<Record<string, string>>;
}

/**
 * `servers` of the document: the gateway's own URL once it listens. Without one (the document dumped
 * without a server, `npm run lint:openapi`) the single server is `/`: paths resolve against the origin
 * that served the document (OpenAPI 3.1, section 4.8.5).
 */
export interface OpenApiServer {
  url: string;
  description?: string;
}

export const RELATIVE_SERVER: OpenApiServer = { url: '/', description: 'The origin that served this document.' };

/** The `Idempotency-Key` header's published shape (src/idempotency checks it). */
const IDEMPOTENCY_KEY_SCHEMA = {
  type: 'string',
  pattern: IDEMPOTENCY_KEY_SHAPE.source,
  description: '1 to 255 printable ASCII characters, no space at either end; a unique value per logical request.',
};

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

/**
 * Turns TypeBox schemas into plain JSON Schema (TypeBox's symbol-keyed metadata dropped), hoisting
 * every named schema into {@link schemas} and leaving a `$ref` in its place.
 */
class SchemaComponents {
  readonly schemas: Record<string, Json> = {};
  /** Name -> the JSON text of the schema first seen under it, to refuse two different ones. */
  private readonly texts = new Map<string, string>();

  /** The plain JSON Schema of `schema`, named parts replaced by references. */
  toJson(schema: TSchema): Json {
    return this.visit(schema) as Json;
  }

  private visit(node: unknown): unknown {
    if (Array.isArray(node)) return node.map((n) => this.visit(n));
    if (node === null || typeof node !== 'object') return node;
    const name = schemaName(node);
    if (name !== undefined) {
      this.hoist(name, node);
      return { $ref: `#/components/schemas/${name}` };
    }
    return this.members(node);
  }

  private members(node: object): Json {
    const out: Json = {};
    for (const [k, v] of Object.entries(node)) out[k] = this.visit(v);
    return out;
  }

  private hoist(name: string, node: object): void {
    const text = JSON.stringify(node);
    const seen = this.texts.get(name);
    if (seen !== undefined) {
      // A copy with other content (a spread with a new description, say) must get its own name.
      if (seen !== text) throw new Error(`two different schemas are named ${name}`);
      return;
    }
    this.texts.set(name, text);
    this.schemas[name] = this.members(node);
  }
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

/**
 * One shared response per catalog status, whether or not an operation refers to it: 405 comes from
 * the router on any path, 207 and 502 also have operation-specific bodies; the set documents the catalog.
 */
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

/**
 * Catalog errors the router gives any route with these properties, before or around its handler:
 * query and body rules, path parameters, authentication, permission, rate limits, idempotency
 * (src/idempotency, for routes that declare `idempotencyKey`), and the internal error.
 */
export function routerErrors(route: RouteDef): ErrorId[] {
  const ids: ErrorId[] = ['invalid_query', 'invalid_body', 'headers_too_large', 'duplicate_header', 'internal'];
  if (route.params) ids.push('invalid_path');
  if (route.headers) ids.push('invalid_header');
  if (route.body) ids.push('malformed_json', 'unsupported_media_type', 'body_too_large');
  if (route.auth !== 'none') ids.push('unauthorized', 'rate_limited', 'auth_throttled');
  if (route.auth !== 'none' && route.auth !== 'any') ids.push('forbidden_permission');
  // A session cookie on a state-changing call needs the session's CSRF token (docs/sessions.md).
  if (route.auth !== 'none' && route.method !== 'GET') ids.push('csrf_failed');
  if (route.actors === 'user') ids.push('session_required');
  if (route.idempotencyKey !== undefined) ids.push('idempotency_key_invalid', 'idempotency_in_progress', 'idempotency_body_mismatch');
  if (route.idempotencyKey === 'required') ids.push('idempotency_key_required');
  return ids;
}

/** Every catalog error an operation may return: the router's and the route's own, sorted. */
export function publishedErrors(route: RouteDef): ErrorId[] {
  return [...new Set([...routerErrors(route), ...(route.errors ?? [])])].sort();
}

function parameters(route: RouteDef, components: SchemaComponents): Json[] {
  const out: Json[] = [];
  const pathProps = propertiesOf(route.params, components);
  for (const m of route.path.matchAll(/\{([^}]+)\}/g)) {
    const name = m[1]!;
    const schema = pathProps.get(name) ?? { type: 'string' };
    out.push({ name, in: 'path', required: true, schema, ...describe(schema) });
  }
  if (route.query) {
    const required = new Set((route.query.required as string[] | undefined) ?? []);
    for (const [name, schema] of propertiesOf(route.query, components)) {
      out.push({ name, in: 'query', required: required.has(name), schema, ...describe(schema) });
    }
  }
  if (route.headers) {
    const required = new Set((route.headers.required as string[] | undefined) ?? []);
    for (const [name, schema] of propertiesOf(route.headers, components)) {
      out.push({ name: headerName(name), in: 'header', required: required.has(name), schema, ...describe(schema) });
    }
  }
  if (route.idempotencyKey !== undefined) {
    const required = route.idempotencyKey === 'required';
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required,
      description: required
        ? 'Required (400 without it). The same key and body within 24 h replays the first answer; another body with it is 409.'
        : 'Optional; when sent, the same key and body within 24 h replays the first answer; another body with it is 409.',
      schema: IDEMPOTENCY_KEY_SCHEMA,
    });
  }
  return out;
}

/** The properties of an object schema (path or query parameters), as plain JSON Schema. */
function propertiesOf(schema: TSchema | undefined, components: SchemaComponents): Map<string, Json> {
  const props = ((schema?.properties as Record<string, TSchema> | undefined) ?? {});
  return new Map(Object.entries(props).map(([name, s]) => [name, components.toJson(s)]));
}

/** `if-none-match` -> `If-None-Match`. */
function headerName(lower: string): string {
  return lower.replace(/(^|-)([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase());
}

function describe(schema: Json): Json {
  return typeof schema.description === 'string' ? { description: schema.description } : {};
}

function operation(route: RouteDef, components: SchemaComponents): Json {
  const responses: Json = {};
  for (const [status, r] of Object.entries(route.responses)) {
    responses[status] = r.schema
      ? { description: r.description, content: { 'application/json': { schema: components.toJson(r.schema) } } }
      : r.contentType !== undefined
        ? { description: r.description, content: Object.fromEntries([r.contentType, ...(r.alsoContentTypes ?? [])].map((t) => [t, {}])) }
        : { description: r.description };
  }
  const errors = publishedErrors(route);
  for (const status of [...new Set(errors.map((id) => ERROR_CATALOG[id].status))].sort((a, b) => a - b)) {
    if (responses[String(status)] === undefined) responses[String(status)] = { $ref: `#/components/responses/Error${status}` };
  }
  const op: Json = {
    operationId: route.operationId,
    summary: route.summary,
    tags: route.tags,
    security: route.auth === 'none' ? [] : route.actors === 'user' ? [{ sessionCookie: [] }] : [{ bearerAuth: [] }, { sessionCookie: [] }],
  };
  if (route.auth !== 'none') {
    const who = route.actors === 'user' ? 'A user session only (an API key gets 403).' : route.auth === 'any' ? 'Any valid API key or user session.' : '';
    op.description = route.auth === 'any' ? who : `${who === '' ? '' : `${who} `}Requires permission \`${route.auth}\`.`;
    if (route.auth !== 'any') op['x-permission'] = route.auth;
  }
  const params = parameters(route, components);
  if (params.length > 0) op.parameters = params;
  if (route.body) {
    const requestBody: Record<string, unknown> = { required: true, content: { 'application/json': { schema: components.toJson(route.body) } } };
    // The route's own body bound (larger: 413 before the body is read); others have the gateway-wide one.
    if (route.maxBodyBytes !== undefined) {
      requestBody.description = `At most ${route.maxBodyBytes} bytes; a larger body is answered 413 before it is read.`;
      requestBody['x-max-body-bytes'] = route.maxBodyBytes;
    }
    op.requestBody = requestBody;
  }
  op.responses = responses;
  op['x-errors'] = errors;
  return op;
}

/**
 * The OpenAPI 3.1 document for `routes`.
 * @param servers where the API is served (default: {@link RELATIVE_SERVER})
 * @throws Error when two routes share an operationId (OpenAPI requires them unique), or two different
 *   schemas share a component name
 */
export function buildOpenApi(routes: readonly RouteDef[], info: OpenApiInfo, servers: readonly OpenApiServer[] = [RELATIVE_SERVER]): Json {
  const paths: Record<string, Json> = {};
  const opIds = new Set<string>();
  const tags = new Set<string>();
  const components = new SchemaComponents();
  components.toJson(ErrorBody);
  for (const route of routes) {
    if (route.browserAsset === true) continue;
    if (opIds.has(route.operationId)) throw new Error(`duplicate operationId ${route.operationId}`);
    opIds.add(route.operationId);
    route.tags.forEach((t) => tags.add(t));
    const item = (paths[route.path] ??= {});
    item[route.method.toLowerCase()] = operation(route, components);
  }
  const { tagDescriptions = {}, ...infoFields } = info;
  return {
    openapi: '3.1.0',
    info: infoFields,
    servers: servers.map((s) => ({ ...s })),
    tags: [...tags].sort().map((name) => (tagDescriptions[name] !== undefined ? { name, description: tagDescriptions[name] } : { name })),
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', description: 'API key: `Authorization: Bearer fgk_<key id>_<secret>`. Never in a URL.' },
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description: 'User session from `POST /v1/sessions` (HttpOnly, SameSite=Strict). Calls other than GET also need the session\'s `X-CSRF-Token` header. Used only when no Authorization header is sent.',
        },
      },
      schemas: sortedByKey(components.schemas),
      responses: errorComponents(errorStatuses()),
    },
  };
}

function sortedByKey(o: Record<string, Json>): Record<string, Json> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
