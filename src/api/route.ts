/**
 * What a route is and what its handler sees: the contract between the API's route modules and the
 * HTTP router (src/http/router.ts), which serves them. The router depends on this, not the other way
 * round.
 */
import type { TSchema } from '@sinclair/typebox';
import type { AuthContext } from '../auth/context.js';
import type { Permission } from '../auth/permissions.js';
import type { ErrorId } from '../errors/catalog.js';

export type { AuthContext } from '../auth/context.js';

/** A handler's answer as the router sees it (a typed route's result, erased). */
export interface HandlerResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface RouteContext<P = unknown, Q = unknown, B = unknown, H = unknown> {
  params: P;
  query: Q;
  body: B;
  /** The headers the route declares (RouteDef.headers), validated; `{}` when it declares none. */
  headers: H;
  /** null only on routes with `auth: 'none'`. */
  auth: AuthContext;
  /** Resolves when the client disconnected; handlers that wait (ack waits) race against it. */
  aborted: AbortSignal;
  /** Monotonic-ish wall clock of the request start (ms). */
  nowMs: number;
  /**
   * The `Idempotency-Key` header as sent (undefined when absent, and on routes that do not declare
   * `idempotencyKey`). Routes pass it to `withIdempotency` (src/idempotency), which answers 400 when a
   * required one is missing.
   */
  idempotencyKey?: string;
  /**
   * The caller's address as throttles count it: IPv4 itself, IPv6 its /64 (src/http/auth-throttle.ts
   * `clientKey`). Computed when read.
   */
  readonly client: string;
}

/**
 * One declared response: its description and JSON body schema, or the media type of a raw body
 * (RawBody: a static file, compressed bytes); neither: no body (204, 304).
 */
export interface ResponseSpec {
  description: string;
  schema?: TSchema;
  contentType?: string;
  /** Further media types the raw body may have (a floor plan is PNG or SVG); published beside `contentType`. */
  alsoContentTypes?: readonly string[];
}

/**
 * 'read': changes nothing. Otherwise `changes` says how: 'additive' only creates (a schedule, a job, a
 * run); 'destructive' may stop, abort, cancel, delete, reset or overwrite something. `idempotent`: the
 * same call again (same arguments, same Idempotency-Key) has no further effect, so a retry is harmless.
 */
export type RouteEffect = 'read' | { changes: 'additive' | 'destructive'; idempotent: boolean };

/** Status code -> response (error responses are added from the catalog automatically). */
export type ResponseSpecs = Readonly<Record<number, ResponseSpec>>;

/**
 * One route, as the router and the OpenAPI builder see it. Routes are declared with `defineRoute`
 * (define-route.ts), which types the handler from the schemas; this is the erased form one list of
 * routes holds. `params`, `query` and `body` schemas are compiled by ajv once at start-up and
 * published in /openapi.json, with `responses`.
 */
export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'OPTIONS';
  /** OpenAPI-style template: `/v1/robots/{robot_id}`. */
  path: string;
  operationId: string;
  summary: string;
  tags: readonly string[];
  /** 'none': no credential (only /openapi.json); 'any': any valid key; otherwise the permission needed. */
  auth: 'none' | 'any' | Permission;
  /**
   * 'user': only a user session may call the route (spec Authentication 4: API-key management); an
   * API key gets 403 `session_required`. Default: API keys and user sessions alike.
   */
  actors?: 'user';
  params?: TSchema;
  query?: TSchema;
  body?: TSchema;
  /**
   * Largest request body the route accepts, in bytes: what its `body` schema can need, declared beside
   * it. A larger body gets 413 `body_too_large` naming this limit before it is read (the adapter asks
   * the router, Router.bodyLimit; an MCP tool call is held to its route's bound too). Every route
   * with a `body` declares it (test/api/route-declarations.test.ts fails otherwise; common sizes in
   * schemas/body-bounds.ts); without a body the gateway-wide limit (FLEETGW_MAX_BODY_BYTES, 1 MiB)
   * applies, and it caps this one.
   */
  maxBodyBytes?: number;
  /**
   * Request headers the route reads: an object schema keyed by lower-cased header names (`cookie`,
   * `if-none-match`, `origin`, `accept-encoding`), each a string. Only declared headers are copied
   * from the request (the adapter skips the rest), validated like the query string and published
   * as header parameters. A repeated header line is joined with `, ` (`; ` for cookie).
   */
  headers?: TSchema;
  /**
   * The route reads the `Idempotency-Key` header (src/idempotency): 'required' answers 400 without it,
   * 'optional' honours it when sent. Published as a header parameter; only routes that declare it see
   * the header (RouteContext.idempotencyKey).
   */
  idempotencyKey?: 'required' | 'optional';
  /**
   * What a call does to state, declared where the route is (route-effect.ts derives the MCP tool
   * annotations from it). Default: GET and OPTIONS read; any other method is taken as
   * destructive and not idempotent, the reading that makes an unattended client ask first.
   */
  effect?: RouteEffect;
  responses: ResponseSpecs;
  /**
   * A page or file for browsers (the API docs, the dashboard's assets): served through the same
   * pipeline as every route (HEAD, ETag, compression, access log) but not an API operation, so it is
   * left out of /openapi.json.
   */
  browserAsset?: true;
  /**
   * Catalog errors this route may return beyond the ones the router adds by itself (authentication,
   * permission, validation, rate limit, idempotency, internal: openapi.ts routerErrors); published in
   * /openapi.json. The contract test fails when an operation returns an error its list lacks.
   */
  errors?: readonly ErrorId[];
  /**
   * Safety valve for the per-key rate limit: when it returns true for a validated body (a stop, a
   * stop-all, a mission pause), the request is served even past the key's limit, so a busy automation
   * key can always halt its robots. Still authenticated, authorized and validated as usual.
   */
  urgent?: (body: unknown) => boolean;
  /**
   * Whether a validated request spends the key's rate limit (default: every request does, before
   * validation). The MCP endpoint answers false for `tools/call`: the tool's own route spends it when
   * the call is dispatched through the router (Router.dispatch), so a tool call is counted once, under
   * that route's `urgent` rule, and a stop over MCP passes a spent limit as it does over REST.
   */
  rateLimited?: (body: unknown) => boolean;
  // Properties, not methods: a handler typed for one route's context is not assignable here (strict
  // function types), so a typed handler enters a RouteDef only through defineRoute.
  handler: (ctx: RouteContext) => Promise<HandlerResult> | HandlerResult;
}
