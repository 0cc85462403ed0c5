/**
 * The request pipeline, on plain objects (no sockets): match -> authenticate -> rate limit -> permission
 * -> validate params/query/body -> handler -> JSON response. Every failure leaves as the catalog's
 * `{error, code}` body, so unknown routes, bad methods and bad JSON look like any other API error.
 *
 * All schemas are compiled here, once, when the router is created.
 */
import type { ValidateFunction } from 'ajv';
import { requirePermission } from '../auth/access.js';
import { authenticate } from '../auth/authenticate.js';
import { ApiError, apiError } from '../errors/catalog.js';
import type { Store } from '../store/lmdb.js';
import { compilePath, type CompiledPath } from './path-template.js';
import type { RateLimiter } from './rate-limit.js';
import type { AuthContext, PlainRequest, PlainResponse, RouteDef } from './types.js';
import { describeErrors, RequestValidators } from './validation.js';

export interface RouterDeps {
  store: Store;
  rateLimiter: RateLimiter;
  /** Wall clock (ms); injectable for expiry and rate-limit tests. */
  now?: () => number;
  /** Sink for internal-error lines; never receives credentials. */
  log?: (line: string) => void;
}

/** A request handler plus the (method, path template) pairs it serves. */
export interface Router {
  (req: PlainRequest, signal: AbortSignal): Promise<PlainResponse>;
  readonly routes: readonly { method: string; path: string }[];
}

interface CompiledRoute {
  def: RouteDef;
  path: CompiledPath;
  params: ValidateFunction | null;
  query: ValidateFunction | null;
  body: ValidateFunction | null;
}

const JSON_HEADERS = { 'content-type': 'application/json' } as const;
const JSON_TYPE = /^application\/json\s*(;|$)/i;

/**
 * Builds the request handler for `routes`.
 * @throws Error when two routes share a method and path, or a schema does not compile
 */
export function createRouter(routes: RouteDef[], deps: RouterDeps): Router {
  const now = deps.now ?? Date.now;
  const log = deps.log ?? ((): void => {});
  const validators = new RequestValidators();
  const compiled: CompiledRoute[] = [];
  const seen = new Set<string>();
  for (const def of routes) {
    const id = `${def.method} ${def.path}`;
    if (seen.has(id)) throw new Error(`duplicate route ${id}`);
    seen.add(id);
    compiled.push({
      def,
      path: compilePath(def.path),
      params: def.params ? validators.text(def.params) : null,
      query: def.query ? validators.text(def.query) : null,
      body: def.body ? validators.body(def.body) : null,
    });
  }

  // `/v1/agent/control-robot` must win over a `/v1/agent/{tool}` template whatever the declared order.
  const byPrecedence = [...compiled].sort((a, b) => (a.path.specificity < b.path.specificity ? -1 : a.path.specificity > b.path.specificity ? 1 : 0));

  const handle = async (req: PlainRequest, signal: AbortSignal): Promise<PlainResponse> => {
    const nowMs = now();
    let route: CompiledRoute | undefined;
    try {
      const found = match(byPrecedence, req.method, req.path);
      route = found.route;
      return await run(found.route, found.params, req, signal, nowMs);
    } catch (err: unknown) {
      if (err instanceof ApiError) return errorResponse(err);
      // Method and template only: the query string and headers may hold a secret pasted by a caller.
      const where = `${req.method} ${route?.def.path ?? '(unmatched)'}`;
      log(`internal error on ${where}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
      return errorResponse(apiError('internal'));
    }
  };

  async function run(
    route: CompiledRoute,
    rawParams: Record<string, string>,
    req: PlainRequest,
    signal: AbortSignal,
    nowMs: number,
  ): Promise<PlainResponse> {
    const { def } = route;
    let auth: AuthContext | null = null;
    if (def.auth !== 'none') {
      auth = authenticate(deps.store, req.headers.authorization, nowMs);
      deps.rateLimiter.consume(auth.apiKeyId, nowMs);
      if (def.auth !== 'any') requirePermission(auth, def.auth);
    }
    const params = validateParams(route, rawParams);
    const query = validateQuery(route, req.query);
    const body = parseBody(route, req);
    const result = await def.handler({
      params,
      query,
      body,
      // RouteContext types auth as non-null for handler ergonomics; only 'none' routes see null.
      auth: auth as AuthContext,
      aborted: signal,
      nowMs,
    });
    const headers = { ...result.headers, ...JSON_HEADERS };
    const text = result.status === 204 ? '' : JSON.stringify(result.body);
    return { status: result.status, headers, body: text };
  }

  const router = handle as Router;
  Object.defineProperty(router, 'routes', { value: compiled.map((c) => ({ method: c.def.method, path: c.def.path })) });
  return router;
}

function match(routes: CompiledRoute[], method: string, path: string): { route: CompiledRoute; params: Record<string, string> } {
  const allowed: string[] = [];
  for (const r of routes) {
    const params = r.path.match(path);
    if (params === null) continue;
    if (r.def.method === method) return { route: r, params };
    if (!allowed.includes(r.def.method)) allowed.push(r.def.method);
  }
  if (allowed.length === 0) throw apiError('route_not_found', { method: safeText(method), path: safeText(path) });
  throw apiError('method_not_allowed', { method: safeText(method), path: safeText(path) }, { headers: { allow: allowed.join(', ') } });
}

function validateParams(route: CompiledRoute, raw: Record<string, string>): Record<string, unknown> {
  if (route.params === null) return raw;
  const value: Record<string, unknown> = { ...raw };
  if (!route.params(value)) {
    const e = route.params.errors?.[0];
    const param = e ? e.instancePath.slice(1) || 'path' : 'path';
    throw apiError('invalid_path', { param, detail: e?.message ?? 'is invalid' });
  }
  return value;
}

function validateQuery(route: CompiledRoute, raw: string): Record<string, unknown> {
  const value = parseQuery(raw);
  if (route.query === null) {
    const first = Object.keys(value)[0];
    if (first !== undefined) throw apiError('invalid_query', { detail: `unknown parameter '${safeText(first)}'` });
    return value;
  }
  if (!route.query(value)) throw apiError('invalid_query', { detail: safeText(describeErrors(route.query.errors)) });
  return value;
}

function parseBody(route: CompiledRoute, req: PlainRequest): unknown {
  if (route.body === null) {
    if (req.body.length > 0) throw apiError('invalid_body', { detail: 'this route takes no body' });
    return undefined;
  }
  const type = req.headers['content-type'];
  if (type === undefined || !JSON_TYPE.test(type)) throw apiError('unsupported_media_type');
  let value: unknown;
  try {
    value = JSON.parse(req.body.toString('utf8'));
  } catch {
    throw apiError('malformed_json');
  }
  if (!route.body(value)) throw apiError('invalid_body', { detail: safeText(describeErrors(route.body.errors)) });
  return value;
}

/**
 * Parses a raw query string. A repeated name becomes an array; `+` and %-escapes are decoded.
 * @throws ApiError 400 when the string is not valid percent-encoding
 */
export function parseQuery(raw: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  if (raw === '') return out;
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(raw);
  } catch {
    throw apiError('invalid_query', { detail: 'malformed query string' });
  }
  for (const [k, v] of params) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

/** Serializes an ApiError as the spec's error response. */
export function errorResponse(err: ApiError): PlainResponse {
  return { status: err.status, headers: { ...err.headers, ...JSON_HEADERS }, body: JSON.stringify(err.toBody()) };
}

// Echoed request text is capped, stripped of control characters and has anything shaped like an API
// key blanked, so an error body never carries a secret a caller pasted into a path or field name.
function safeText(s: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = s.replace(/[\u0000-\u001f\u007f]/g, '?').replace(/fgk_[^/?&\s'"]*/gi, 'fgk_<redacted>');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}
