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
