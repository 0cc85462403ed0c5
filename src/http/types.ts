/**
 * The contract between the transport adapter (uws-adapter.ts), the router and feature modules.
 * Core logic sees only these plain objects, never uWS's request/response, so it is testable without
 * sockets.
 */
import type { TSchema } from '@sinclair/typebox';
import type { Permission } from '../auth/permissions.js';
import type { ErrorId } from '../errors/catalog.js';

/** What the adapter copies synchronously out of a uWS request. */
export interface PlainRequest {
  method: string;
  /** Path without the query string, e.g. `/v1/robots/…`. */
  path: string;
  /** Raw query string without `?` ('' when none). */
  query: string;
  /** Only the headers the core uses, lower-cased names. */
  headers: {
    authorization?: string;
    'content-type'?: string;
    'idempotency-key'?: string;
  };
  body: Buffer;
  remoteAddress: string;
}

export interface PlainResponse {
  status: number;
  headers: Record<string, string>;
  /** Already-serialized body (JSON text for every API response). */
  body: string;
}

/** The authenticated caller, resolved from an API key. */
export interface AuthContext {
  actorType: 'api_key';
  apiKeyId: string;
  orgId: string;
  /** Fleet the key is bound to, or null for an org-wide key. */
  fleetId: string | null;
  permissions: readonly string[];
}

export interface HandlerResult {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

export interface RouteContext<P = Record<string, string>, Q = Record<string, unknown>, B = unknown> {
  params: P;
  query: Q;
  body: B;
  /** null only on routes with `auth: 'none'`. */
  auth: AuthContext;
  /** Resolves when the client disconnected; handlers that wait (ack waits) race against it. */
  aborted: AbortSignal;
  /** Monotonic-ish wall clock of the request start (ms). */
  nowMs: number;
  /**
   * The `Idempotency-Key` header as sent (undefined when absent). Routes that require it pass it to
   * `withIdempotency` (src/idempotency), which answers 400 when it is missing.
   */
  idempotencyKey?: string;
}

/**
 * One route. `params`, `query` and `body` schemas are compiled by ajv once at start-up and published
 * in /openapi.json; `responses` is documentation (and the source of the TS types via Static<>).
 */
export interface RouteDef {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** OpenAPI-style template: `/v1/robots/{robot_id}`. */
  path: string;
  operationId: string;
  summary: string;
  tags: string[];
  /** 'none': no credential (only /openapi.json); 'any': any valid key; otherwise the permission needed. */
  auth: 'none' | 'any' | Permission;
  params?: TSchema;
  query?: TSchema;
  body?: TSchema;
  /** Status code -> response schema (error responses are added from the catalog automatically). */
  responses: Record<number, { description: string; schema?: TSchema }>;
  /**
   * The route reads the `Idempotency-Key` header (src/idempotency): 'required' answers 400 without it,
   * 'optional' honours it when sent. Published as a header parameter; only routes that declare it see
   * the header (RouteContext.idempotencyKey).
   */
  idempotencyKey?: 'required' | 'optional';
  /**
   * Catalog errors this route may return beyond the ones the router adds by itself (auth, validation,
   * rate limit, internal); published in /openapi.json.
   */
  errors?: ErrorId[];
  /**
   * Safety valve for the per-key rate limit: when it returns true for a validated body (a stop, a
   * stop-all, a mission pause), the request is served even past the key's limit, so a busy automation
   * key can always halt its robots. Still authenticated, authorized and validated as usual.
   */
  urgent?(body: unknown): boolean;
  // Each handler narrows params/query/body to its own schemas' Static<> types, which the router has
  // validated before the call; `any` here is what lets one RouteDef[] hold all of them.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  handler(ctx: RouteContext<any, any, any>): Promise<HandlerResult> | HandlerResult;
}
