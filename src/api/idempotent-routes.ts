/**
 * Every state-changing route honours an `Idempotency-Key` (spec Conventions 3): a route that does not
 * run `withIdempotency` itself gets it here, as an optional key, so a retry of a command, a stop, an
 * acknowledgement or a deletion replays the first answer instead of doing it again. The routes listed
 * in {@link IDEMPOTENCY_EXEMPT} are left alone on purpose; docs/api-conventions.md lists both.
 */
import type { Logger } from 'pino';
import type { IdempotencyClaims } from '../idempotency/claims.js';
import { withIdempotency } from '../idempotency/index.js';
import { deriveRoute } from './define-route.js';
import type { HandlerResult, RouteContext, RouteDef } from './route.js';

/**
 * State-changing routes that take no `Idempotency-Key`, each with the reason (`METHOD path` -> why).
 * A route is state-changing when its method is POST, PUT, PATCH or DELETE under `/v1/` and it does
 * not declare `effect: 'read'`.
 */
export const IDEMPOTENCY_EXEMPT: ReadonlyMap<string, string> = new Map([
  ['POST /v1/sessions', 'login: each call is a new session whose answer holds its secret (the cookie); a retry simply logs in again'],
  ['DELETE /v1/sessions/current', 'logout: ends the calling session; a repeat finds it ended'],
  ['POST /v1/mcp', 'the MCP transport: the tool calls inside it take `idempotency_key` and get idempotency from their own routes'],
  ['DELETE /v1/mcp', 'closes the calling MCP session; a repeat finds it closed'],
  ['POST /v1/telemetry/stream-tickets', 'each answer is a new short-lived secret (a ticket), never stored; a retry simply gets another'],
  ['POST /v1/orgs/{org_id}/users', 'the body holds a password, which must not be kept (not even as a digest of the body); a repeat answers 409 user_exists'],
]);

const WRITE_METHODS = new Set<RouteDef['method']>(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether `r` changes state: a write method under `/v1/` not declared read-only. */
export function isStateChanging(r: RouteDef): boolean {
  return WRITE_METHODS.has(r.method) && r.path.startsWith('/v1/') && r.effect !== 'read';
}

/** `org_id` / `fleet_id` from the path parameters or the body, '' when neither has it. */
function scopeField(ctx: RouteContext, name: 'org_id' | 'fleet_id'): string {
  for (const src of [ctx.params, ctx.body]) {
    if (typeof src === 'object' && src !== null) {
      const v = (src as Record<string, unknown>)[name];
      if (typeof v === 'string') return v;
    }
  }
  return '';
}

/**
 * `routes` with an optional `Idempotency-Key` on every state-changing route that does not declare one
 * and is not exempt. The key's scope is the caller, organization, fleet and endpoint; what must match
 * for a replay is the whole request: path parameters, query and body (so the same key sent for another
 * robot is a conflict, never that robot's replay). An urgent request (RouteDef.urgent: a stop) checks
 * its key with one synchronous read and writes the claim behind the stop (IdempotencyClaims.claimNow).
 */
export function withRouteIdempotency(routes: RouteDef[], claims: IdempotencyClaims, log?: Logger): RouteDef[] {
  return routes.map((r) => {
    if (!isStateChanging(r) || r.idempotencyKey !== undefined || IDEMPOTENCY_EXEMPT.has(`${r.method} ${r.path}`)) return r;
    const endpoint = `${r.method} ${r.path}`;
    const inner = r.handler;
    const handler = (ctx: RouteContext): Promise<HandlerResult> => {
      if (ctx.idempotencyKey === undefined || ctx.idempotencyKey === '') return Promise.resolve(inner(ctx));
      const scope = { actor: ctx.auth.apiKeyId, orgId: scopeField(ctx, 'org_id'), fleetId: scopeField(ctx, 'fleet_id'), endpoint };
      const request = { params: ctx.params ?? null, query: ctx.query ?? null, body: ctx.body ?? null };
      return withIdempotency(claims, scope, ctx.idempotencyKey, request, async () => inner(ctx), {
        required: false,
        urgent: r.urgent?.(ctx.body) === true,
        ...(log ? { log } : {}),
      });
    };
    return deriveRoute(r, { idempotencyKey: 'optional', handler });
  });
}
