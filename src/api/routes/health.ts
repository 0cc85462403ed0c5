/**
 * GET /healthz (liveness) and GET /readyz (readiness), for load balancers, orchestrators and
 * monitoring. Unauthenticated, and they say only a status word: which part is failing is for the
 * operator (metrics, log), not for whoever can reach the port. Never cached.
 */
import { defineRoute } from '../define-route.js';
import type { RouteDef } from '../route.js';
import { Liveness, Readiness } from '../schemas/health.js';

const NO_STORE = { 'cache-control': 'no-store' };

export interface HealthRouteDeps {
  /** True when the gateway can do its work now (src/gateway computes it: telemetry store, LMDB, scheduler). */
  ready: () => boolean;
  /** True while ready with a part down that the gateway works around (the telemetry store, while spooling). */
  degraded?: () => boolean;
}

/** The two probe routes. */
export function healthRoutes(deps: HealthRouteDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/healthz',
      operationId: 'getLiveness',
      summary: 'Liveness: the process runs and answers (restart it when this fails).',
      tags: ['Health'],
      auth: 'none',
      responses: { 200: { description: 'Alive.', schema: Liveness } },
    }).handle(() => ({ status: 200, body: { status: 'ok' }, headers: NO_STORE })),
    defineRoute({
      method: 'GET',
      path: '/readyz',
      operationId: 'getReadiness',
      summary: 'Readiness: the telemetry store answers, LMDB is open and the scheduler runs (send traffic only when this is 200).',
      tags: ['Health'],
      auth: 'none',
      responses: {
        200: { description: 'Ready (`degraded`: ready, with the telemetry store down and its rows spooled to disk).', schema: Readiness },
        503: { description: 'Not ready: a check fails (the metric `fleetgw_ready` says which).', schema: Readiness },
      },
    }).handle(() => (deps.ready()
      ? { status: 200, body: { status: deps.degraded?.() === true ? 'degraded' : 'ready' }, headers: NO_STORE }
      : { status: 503, body: { status: 'not_ready' }, headers: NO_STORE })),
  ];
}
