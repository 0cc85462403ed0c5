/**
 * The request pipeline, on plain objects (no sockets): match -> body bound -> authenticate -> rate
 * limit (body bytes count, before parsing) -> permission -> validate params/query/body (a large body in its own event-loop turn,
 * body-lane.ts) -> handler -> JSON response. Every failure leaves as the catalog's
 * `{error, code}` body, so unknown routes, bad methods and bad JSON look like any other API error.
 *
 * All schemas are compiled here, once, when the router is created.
 *
 * A handler that answers synchronously gets its response back synchronously (no promise, no
 * microtask hop), and the abort signal is only created if a handler reads it: both matter on the
 * hot read routes (bench/README.md#http-read).
 */
import type { ValidateFunction } from 'ajv';
import { pino, type Logger } from 'pino';
import { ApiError, apiError } from '../errors/catalog.js';
import { scanJsonText } from './json-scan.js';
import { JsonText } from '../api/json-text.js';
import { RawBody } from '../api/raw-body.js';
import { ResponseStream } from '../api/stream-body.js';
import { isPrepared } from '../api/prepared-body.js';
import { preparedResponse } from './conditional.js';
import { CorsPolicy } from './cors.js';
import { compilePath, type CompiledPath } from './path-template.js';
import { clientKey, type AuthThrottle } from './auth-throttle.js';
import { requestCost, type RateLimiter } from './rate-limit.js';
import { BodyLane, ClientGone, LARGE_BODY_BYTES } from './body-lane.js';
import { CLIENT_CLOSED_STATUS } from './request-done.js';
import { RouteTable } from './route-table.js';
import type { AuthContext, HandlerResult, RouteContext, RouteDef } from '../api/route.js';
import type { PlainRequest, PlainResponse } from './types.js';
import { describeErrors, describeProblem, RequestValidators } from './validation.js';

/**
 * Who is calling and what they may do. The router knows no credential format and no store: the
 * composition root (src/gateway) passes the API-key verifier of src/auth.
 */
export interface RequestAuth {
  /**
   * Resolves the caller from the raw Authorization header (undefined when absent).
   * @throws ApiError 401 `unauthorized` for a missing, malformed, unknown, wrong, revoked or expired credential
   */
  authenticate(authorization: string | undefined, nowMs: number): AuthContext;
  /** @throws ApiError 403 unless the caller holds `permission` (a route's `auth`). */
  authorize(auth: AuthContext, permission: string): void;
  /**
   * Whether the header carries a credential this process verified successfully before: the
   * failed-authentication throttle still checks those from a throttled address. O(1), no hashing.
   */
  isKnownCredential(authorization: string | undefined): boolean;
  /**
   * Resolves the caller from a user's session cookie; asked only when the request has no
   * Authorization header and has a Cookie header (absent: cookies authenticate nothing).
   * @param stateChanging the method changes state (POST, PUT, PATCH, DELETE): a CSRF token is required
   * @throws ApiError 401 `unauthorized`; 403 `csrf_failed` without the session's `X-CSRF-Token`
   */
  authenticateSession?(cookie: string | undefined, csrfToken: string | undefined, stateChanging: boolean, nowMs: number): AuthContext;
}

export interface RouterDeps {
  auth: RequestAuth;
  rateLimiter: RateLimiter;
  /** Per-address throttle on failed authentication; none in unit tests that do not need it. */
  authThrottle?: AuthThrottle;
  /** Wall clock (ms); injectable for expiry and rate-limit tests. */
  now?: () => number;
  /** Where internal errors are logged (with the request id); never receives credentials. */
  log?: Logger;
  /** Routes that were removed: 404 naming the replacement, also where another method is served. */
  removed?: readonly { method: string; path: string; instead: string }[];
  /** Browser origins allowed to call the API (cors.ts); absent or empty: CORS is off. */
  corsOrigins?: readonly string[];
}

/**
 * Where a handler's abort signal comes from: a signal, or an object that creates one on first use
 * (the HTTP adapter passes the latter, so requests whose handler never waits allocate no controller).
 */
export type AbortSource = AbortSignal | { readonly signal: AbortSignal };

/**
 * A request handler plus the (method, path template) pairs it serves. Never throws: every failure
 * is an error response. The response is a plain value when the route's handler answered synchronously.
 */
export interface Router {
  (req: PlainRequest, signal: AbortSource): PlainResponse | Promise<PlainResponse>;
  /**
   * Serves `req` as the caller `auth` already authenticated by this router (an MCP tool call, made
   * inside a `POST /v1/mcp` request the router authenticated): the same pipeline without the
   * authentication step, so body bound, rate limit, permission, validation and handler are the
   * route's own. The request spends one token: its body's bytes were paid for as the message it came in.
   */
  dispatch(req: PlainRequest, signal: AbortSource, auth: AuthContext): Promise<PlainResponse>;
  readonly routes: readonly { method: string; path: string }[];
  /**
   * The largest body the route serving `method` `path` accepts (RouteDef.maxBodyBytes), or null when
   * it declares none or no route serves the pair (the adapter's default limit then applies). The
   * adapter asks before it buffers a body.
   */
  bodyLimit(method: string, path: string): number | null;
  /** Lower-cased names of the request headers the core and the routes read (the adapter copies only these). */
  readonly headerNames: ReadonlySet<string>;
}

interface CompiledRoute {
  def: RouteDef;
  path: CompiledPath;
  params: ValidateFunction | null;
  query: ValidateFunction | null;
  body: ValidateFunction | null;
  headers: ValidateFunction | null;
  /** The declared header names (empty when none). */
  headerNames: readonly string[];
}

/** Headers the router itself reads, whatever the routes declare. */
const CORE_HEADERS = [
  'authorization', 'content-type', 'cookie', 'x-csrf-token',
  // Prepared bodies (conditional.ts) and CORS (cors.ts).
  'accept-encoding', 'if-none-match', 'origin', 'access-control-request-method',
] as const;
/** Methods that never change state: a session cookie needs no CSRF token on them. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

const JSON_HEADERS = { 'content-type': 'application/json' } as const;
/**
 * Largest body parsed for a key past its rate limit on an urgent route (RouteDef.urgent): a stop of
 * 100 robots by id is about 4 KB; anything larger is answered 429 unread. The same bound as a body
 * parsed inline (body-lane.ts) and as one that spends no extra token (rate-limit.ts): one size below
 * which parsing is too cheap to queue, charge or refuse.
 */
const URGENT_PARSE_BYTES = LARGE_BODY_BYTES;
/**
 * Largest body of a route without authentication (`auth: 'none'`: the login) unless it declares a
 * smaller one: such a body is parsed before anyone is known, so it is kept small enough to be parsed
 * inline, outside the body lane every key shares.
 */
export const UNAUTHENTICATED_MAX_BODY_BYTES = LARGE_BODY_BYTES;
const JSON_TYPE = /^application\/json\s*(;|$)/i;

/**
 * Builds the request handler for `routes`.
 * @throws Error when two routes share a method and path, or a schema does not compile
 */
export function createRouter(routes: RouteDef[], deps: RouterDeps): Router {
  const now = deps.now ?? Date.now;
  const log = deps.log ?? pino({ enabled: false });
  const validators = new RequestValidators();
  const compiled: CompiledRoute[] = [];
  const seen = new Set<string>();
  const headerNames = new Set<string>(CORE_HEADERS);
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
      headers: def.headers ? validators.text(def.headers) : null,
      headerNames: declaredHeaders(def),
    });
    for (const name of declaredHeaders(def)) headerNames.add(name);
    if (def.idempotencyKey !== undefined) headerNames.add('idempotency-key');
  }

  // `/v1/agent/control-robot` must win over a `/v1/agent/{tool}` template whatever the declared order:
  // the table tries literal segments before parameters (route-table.ts).
  const table = new RouteTable<CompiledRoute>();
  for (const c of compiled) table.add(c.def.method, c.path, c);
  const removed = new RouteTable<string>();
  for (const r of deps.removed ?? []) removed.add(r.method, compilePath(r.path), r.instead);
  const cors = deps.corsOrigins !== undefined && deps.corsOrigins.length > 0 ? new CorsPolicy(deps.corsOrigins) : null;
  const rateLimitPolicy = deps.rateLimiter.policyHeader;
  const bodyLane = new BodyLane();

  const handle = (req: PlainRequest, signal: AbortSource, caller?: AuthContext): PlainResponse | Promise<PlainResponse> => {
    const nowMs = now();
    let route: CompiledRoute | undefined;
    // The key whose bucket this request spent from: its RateLimit headers go on the answer, error or not.
    const spent: Spent = { keyId: null };
    const fail = (err: unknown): PlainResponse => {
      if (err instanceof ApiError) return finish(errorResponse(err), req, spent);
      // Nobody is left to read an answer (body-lane.ts dropped the parse): nothing to log.
      if (err instanceof ClientGone) return { status: CLIENT_CLOSED_STATUS, headers: {}, body: '' };
      // Method and template only: the query string and headers may hold a secret pasted by a caller.
      const where = `${req.method} ${route?.def.path ?? '(unmatched)'}`;
      log.error({ err, requestId: req.requestId, traceId: req.traceId ?? undefined }, `internal error on ${where}`);
      return finish(errorResponse(apiError('internal')), req, spent);
    };
    try {
      if (cors !== null && CorsPolicy.isPreflight(req.method, req.headers)) {
        const allowed = table.match('', req.path);
        if (allowed.route === null && allowed.allowed.length > 0) return finish(cors.preflight(req.headers.origin as string, allowed.allowed), req, spent);
      }
      // HEAD is served wherever GET is (RFC 9110 section 9.3.2): the same handler and status; the
      // adapter sends the headers without the body.
      const found = match(table, removed, req.method === 'HEAD' ? 'GET' : req.method, req.path, req.method);
      route = found.route;
      if (req.notes !== undefined) req.notes.route = found.route.def.path;
      const result = run(found.route, found.params, req, signal, nowMs, spent, caller);
      return isPromise(result) ? result.then((r) => finish(toResponse(r, req), req, spent)).catch(fail) : finish(toResponse(result, req), req, spent);
    } catch (err: unknown) {
      return fail(err);
    }
  };

  /** Adds what every answer carries: the spent bucket's RateLimit headers, and CORS when it is on. */
  function finish(res: PlainResponse, req: PlainRequest, spent: Spent): PlainResponse {
    if (spent.keyId !== null) {
      res.headers.ratelimit = deps.rateLimiter.header(spent.keyId);
      res.headers['ratelimit-policy'] = rateLimitPolicy;
    }
    return cors === null ? res : cors.decorate(res, req.headers.origin);
  }

  function run(
    route: CompiledRoute,
    rawParams: Record<string, string>,
    req: PlainRequest,
    signal: AbortSource,
    nowMs: number,
    spent: Spent,
    caller: AuthContext | undefined,
  ): HandlerResult | Promise<HandlerResult> {
    const { def } = route;
    let auth: AuthContext | null = null;
    let limited: ApiError | null = null;
    // The route's own bound holds however the body came: the adapter checks it before reading, and an
    // MCP tool call (dispatch) carries its arguments as the body, checked here.
    const limit = bodyLimitOf(def);
    if (limit !== null && req.body.length > limit) throw apiError('body_too_large', { limit });
    // Body bytes count in the rate limit: a body's parsing costs main-thread time in proportion to its
    // size. A body dispatched for a caller (an MCP tool call) was charged as the envelope it came in.
    const cost = caller === undefined ? requestCost(req.body.length) : 1;
    if (def.auth !== 'none') {
      auth = caller ?? authenticateThrottled(req, nowMs);
      if (req.notes !== undefined) req.notes.keyId = auth.apiKeyId;
      spent.keyId = auth.apiKeyId;
      if (def.rateLimited === undefined) {
        try {
          deps.rateLimiter.consume(auth.apiKeyId, nowMs, cost);
        } catch (err: unknown) {
          // A request that may stop a robot is decided after validation: see RouteDef.urgent.
          if (def.urgent === undefined || !(err instanceof ApiError)) throw err;
          limited = err;
        }
      } else if (cost > 1) {
        // A route that decides per body whether it spends its request token (RouteDef.rateLimited)
        // still pays for the body's bytes before the body is parsed: an empty bucket parses nothing large.
        deps.rateLimiter.consume(auth.apiKeyId, nowMs, cost - 1);
      }
      if (def.auth !== 'any') deps.auth.authorize(auth, def.auth);
      if (def.actors === 'user' && auth.actorType !== 'user') throw apiError('session_required');
    }
    const params = validateParams(route, rawParams);
    const query = validateQuery(route, req.query);
    // A key past its limit is served only for a stop, and a stop is small: a larger body is not parsed.
    if (limited !== null && req.body.length > URGENT_PARSE_BYTES) throw limited;
    const rest = (): HandlerResult | Promise<HandlerResult> => {
      const body = parseBody(route, req);
      const headers = validateHeaders(route, req);
      if (limited !== null && def.urgent?.(body) !== true) throw limited;
      if (auth !== null && def.rateLimited?.(body) === true) deps.rateLimiter.consume(auth.apiKeyId, nowMs, 1);
      // RouteContext types auth as non-null for handler ergonomics; only 'none' routes see null.
      const idempotencyKey = def.idempotencyKey !== undefined ? req.headers['idempotency-key'] : undefined;
      return def.handler(new HandlerContext(params, query, body, headers, auth as AuthContext, signal, nowMs, idempotencyKey, req.remoteAddress));
    };
    // A large body waits for its own event-loop turn (body-lane.ts): requests read meanwhile go first.
    // A route that may stop a robot (RouteDef.urgent) never waits behind other keys' bodies: its body is
    // parsed inline, bounded by its own maxBodyBytes and paid for in tokens above.
    if (route.body === null || req.body.length <= LARGE_BODY_BYTES || def.urgent !== undefined) return rest();
    return bodyLane.run(req.body.length, rest, signal);
  }

  /**
   * {@link RequestAuth.authenticate} behind the per-address throttle on failed credentials (auth-throttle.ts): a
   * throttled address gets 429 for any credential this process has not verified before, unchecked;
   * a presented credential that fails counts against its address.
   */
  function authenticateThrottled(req: PlainRequest, nowMs: number): AuthContext {
    const throttle = deps.authThrottle;
    const authorization = req.headers.authorization;
    // A session cookie is consulted only without an Authorization header: the API-key path is unchanged.
    const cookie = authorization === undefined && deps.auth.authenticateSession !== undefined ? req.headers.cookie : undefined;
    const authenticate = (): AuthContext => cookie === undefined
      ? deps.auth.authenticate(authorization, nowMs)
      : (deps.auth.authenticateSession as NonNullable<RequestAuth['authenticateSession']>)(cookie, req.headers['x-csrf-token'], !SAFE_METHODS.has(req.method), nowMs);
    if (throttle === undefined) return authenticate();
    const waitS = throttle.blockedFor(req.remoteAddress, nowMs);
    if (waitS !== null && (cookie !== undefined || !deps.auth.isKnownCredential(authorization))) {
      throw apiError('auth_throttled', { retryAfterS: waitS }, { headers: { 'retry-after': String(waitS) } });
    }
    try {
      return authenticate();
    } catch (err: unknown) {
      // No credential at all guesses nothing: only presented ones count.
      if ((authorization !== undefined || cookie !== undefined) && err instanceof ApiError && err.id === 'unauthorized') throttle.failed(req.remoteAddress, nowMs);
      throw err;
    }
  }

  const router = handle as Router;
  router.dispatch = (req, signal, auth) => Promise.resolve(handle(req, signal, auth));
  Object.defineProperty(router, 'routes', { value: compiled.map((c) => ({ method: c.def.method, path: c.def.path })) });
  Object.defineProperty(router, 'headerNames', { value: headerNames });
  const bodyLimit = (method: string, path: string): number | null => {
    const found = table.match(method === 'HEAD' ? 'GET' : method, path).route;
    return found === null ? null : bodyLimitOf(found.def);
  };
  Object.defineProperty(router, 'bodyLimit', { value: bodyLimit });
  return router;
}

/**
 * The handler's context. A class so that `aborted` is a prototype getter: the signal (an
 * AbortController in the HTTP adapter) is only created when a handler reads it.
 */
class HandlerContext implements RouteContext<Record<string, unknown>, Record<string, unknown>, unknown, Readonly<Record<string, unknown>>> {
  idempotencyKey?: string;

  constructor(
    readonly params: Record<string, unknown>,
    readonly query: Record<string, unknown>,
    readonly body: unknown,
    readonly headers: Readonly<Record<string, unknown>>,
    readonly auth: AuthContext,
    private readonly abortSource: AbortSource,
    readonly nowMs: number,
    idempotencyKey: string | undefined,
    private readonly remoteAddress: string,
  ) {
    if (idempotencyKey !== undefined) this.idempotencyKey = idempotencyKey;
  }

  get client(): string {
    return clientKey(this.remoteAddress);
  }

  get aborted(): AbortSignal {
    return this.abortSource instanceof AbortSignal ? this.abortSource : this.abortSource.signal;
  }
}

/**
 * The largest body `def` accepts: its maxBodyBytes, and for a route without authentication at most
 * {@link UNAUTHENTICATED_MAX_BODY_BYTES}; null when the gateway-wide bound applies.
 */
function bodyLimitOf(def: RouteDef): number | null {
  if (def.auth === 'none') return Math.min(def.maxBodyBytes ?? UNAUTHENTICATED_MAX_BODY_BYTES, UNAUTHENTICATED_MAX_BODY_BYTES);
  return def.maxBodyBytes ?? null;
}

/** Which key's bucket a request spent from (set once authenticated). */
interface Spent {
  keyId: string | null;
}

function isPromise<T>(v: T | Promise<T>): v is Promise<T> {
  return typeof (v as { then?: unknown } | null)?.then === 'function';
}

function toResponse(result: HandlerResult, req: PlainRequest): PlainResponse {
  const raw = result.body;
  if (isPrepared(raw)) {
    const identity = raw instanceof RawBody ? { bytes: raw.bytes, contentType: raw.contentType } : { bytes: raw.text, contentType: JSON_HEADERS['content-type'] };
    return preparedResponse(result.status, raw, identity, result.headers, req.headers);
  }
  if (raw instanceof RawBody) return { status: result.status, headers: { ...result.headers, 'content-type': raw.contentType }, body: raw.bytes };
  if (raw instanceof ResponseStream) return { status: result.status, headers: { ...result.headers, 'content-type': raw.contentType }, body: '', stream: raw };
  const headers = result.headers === undefined ? { 'content-type': JSON_HEADERS['content-type'] } : { ...result.headers, ...JSON_HEADERS };
  const body = result.body;
  // 204 and 304 carry no body (RFC 9110 sections 15.3.5, 15.4.5), nor does any response declared without
  // a schema (its handler answers `body: null`: a 202 of the MCP endpoint).
  const text = result.status === 204 || result.status === 304 || body === null ? '' : body instanceof JsonText ? body.text : JSON.stringify(body);
  return { status: result.status, headers, body: text };
}

function match(
  table: RouteTable<CompiledRoute>,
  removed: RouteTable<string>,
  method: string,
  path: string,
  asSent: string,
): { route: CompiledRoute; params: Record<string, string> } {
  const found = table.match(method, path);
  if (found.route !== null) return found;
  const gone = removed.match(method, path);
  if (gone.route !== null) throw apiError('route_removed', { method: safeText(asSent), path: safeText(path), instead: gone.route });
  if (found.allowed.length === 0) throw apiError('route_not_found', { method: safeText(asSent), path: safeText(path) });
  const allowed = found.allowed.includes('GET') ? [...found.allowed, 'HEAD'] : found.allowed;
  throw apiError('method_not_allowed', { method: safeText(asSent), path: safeText(path) }, { headers: { allow: allowed.join(', ') } });
}

function validateParams(route: CompiledRoute, raw: Record<string, string>): Record<string, unknown> {
  if (route.params === null) return raw;
  // `raw` is this request's own object (route-table.ts builds it per match): coerce it in place.
  const value: Record<string, unknown> = raw;
  if (!route.params(value)) {
    const { path, problem } = describeProblem(route.params.errors);
    throw apiError('invalid_path', { param: path || 'path', detail: problem });
  }
  return value;
}

/** The lower-cased header names a route declares (its `headers` schema's properties). */
function declaredHeaders(def: RouteDef): string[] {
  return Object.keys((def.headers?.properties as Record<string, unknown> | undefined) ?? {});
}

// Shared by every request of a route that declares no header (never written to).
const NO_HEADERS: Readonly<Record<string, unknown>> = Object.freeze({});

/** The declared headers of the request, validated (text coerced to the declared types). */
function validateHeaders(route: CompiledRoute, req: PlainRequest): Readonly<Record<string, unknown>> {
  if (route.headers === null) return NO_HEADERS;
  const value: Record<string, unknown> = {};
  for (const name of route.headerNames) {
    const v = req.headers[name];
    if (v !== undefined) value[name] = v;
  }
  if (!route.headers(value)) {
    const e = route.headers.errors?.[0];
    const missing = e?.keyword === 'required' ? (e.params as { missingProperty?: string }).missingProperty : undefined;
    const { path, problem } = describeProblem(route.headers.errors);
    throw apiError('invalid_header', { header: safeText(missing ?? (path || 'header')), detail: missing !== undefined ? 'is required' : problem });
  }
  return value;
}

function validateQuery(route: CompiledRoute, raw: string): Record<string, unknown> {
  if (raw === '' && route.query === null) return {};
  const value = parseQuery(raw);
  if (route.query === null) {
    const first = Object.keys(value)[0];
    if (first !== undefined) throw apiError('invalid_query', { detail: `unknown parameter '${safeText(first)}'` });
    return value;
  }
  if (!route.query(value)) throw apiError('invalid_query', { detail: safeText(describeErrors(route.query.errors)) });
  // ajv coerces `Infinity` (and `1e400`) to Infinity and then, under strictNumbers (part of `strict`),
  // skips minimum/maximum for a non-finite number instead of failing: so every coerced number is
  // checked here. An integer past 2^53 is finite but no longer exact: refused too.
  for (const name in value) {
    const v = value[name];
    for (const n of Array.isArray(v) ? v : [v]) {
      if (typeof n === 'number' && !Number.isSafeInteger(n) && (!Number.isFinite(n) || Number.isInteger(n))) {
        throw apiError('invalid_query', { detail: `${safeText(name)} must be a finite number within ±2^53` });
      }
    }
  }
  return value;
}

function parseBody(route: CompiledRoute, req: PlainRequest): unknown {
  if (route.body === null) {
    if (req.body.length > 0) throw apiError('invalid_body', { detail: 'this route takes no body' });
    return undefined;
  }
  const type = req.headers['content-type'];
  if (type === undefined || !JSON_TYPE.test(type)) throw apiError('unsupported_media_type');
  const text = req.body.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw apiError('malformed_json');
  }
  // Duplicate keys, nesting depth and out-of-range numbers: what JSON.parse lets through (json-scan.ts).
  const problem = scanJsonText(text);
  if (problem !== null) throw apiError('invalid_body', { detail: safeText(problem) });
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
  const headers: Record<string, string> = { ...err.headers, ...JSON_HEADERS };
  // RFC 9110 section 11.6.1: a 401 says which scheme to use (RFC 6750: Bearer, as API keys are sent).
  if (err.status === 401 && headers['www-authenticate'] === undefined) headers['www-authenticate'] = 'Bearer realm="fleet-gateway"';
  return { status: err.status, headers, body: JSON.stringify(err.toBody()) };
}

// Echoed request text is capped, stripped of control characters and has anything shaped like an API
// key blanked, so an error body never carries a secret a caller pasted into a path or field name.
function safeText(s: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = s.replace(/[\u0000-\u001f\u007f]/g, '?').replace(/fgk_[^/?&\s'"]*/gi, 'fgk_<redacted>');
  return clean.length > 200 ? `${clean.slice(0, 200)}…` : clean;
}
