/**
 * `GET /v1/orgs/{org_id}/fleets/{fleet_id}/utilization` (`fleet:read`): per robot and for the fleet,
 * over a window the caller chooses (docs/utilization.md).
 */
import type { Logger } from 'pino';
import { apiError } from '../../errors/catalog.js';
import { utilization, type TelemetrySelect } from '../../fleet/history/utilization/utilization.js';
import { checkWindow, SLOT_MS } from '../../fleet/history/utilization/window.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { defineRoute } from '../define-route.js';
import { fleetFromPath } from '../fleet-scope.js';
import type { RouteDef } from '../route.js';
import { UtilizationParams, UtilizationQuery, UtilizationView } from '../schemas/utilization.js';

export interface UtilizationDeps {
  store: Store;
  /** Fleet and robot records for the access checks (the registry's). */
  identity: IdentityReads;
  /**
   * Bound-parameter reads on the telemetry store. Null where the process has no telemetry store (the
   * offline document, openapi-document.ts, which serves nothing): the route answers 503.
   */
  select: TelemetrySelect | null;
  now?: () => number;
  log?: Logger;
}

/** The utilization route. */
export function utilizationRoutes(deps: UtilizationDeps): RouteDef[] {
  const { store, identity } = deps;
  const now = deps.now ?? Date.now;
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/orgs/{org_id}/fleets/{fleet_id}/utilization',
      operationId: 'getUtilization',
      summary: 'Time online, running missions, idle, charging, paused/stopped and offline; missions completed and failed; distance: per robot and for the fleet, over a window of at most 24 hours.',
      tags: ['Utilization'],
      auth: 'fleet:read',
      params: UtilizationParams,
      query: UtilizationQuery,
      responses: { 200: { description: 'Utilization over the window.', schema: UtilizationView } },
      errors: ['invalid_query', 'forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'robot_not_found', 'telemetry_reads_unavailable'],
    }).handle(async ({ auth, params, query }) => {
      const fleet = fleetFromPath(identity, auth, params);
      const nowMs = now();
      const w = checkWindow(query.from_ms, query.to_ms, nowMs);
      if ('param' in w) throw apiError('invalid_query', { detail: `${w.param} ${w.detail}` });
      const robotId = query.robot_id ?? null;
      if (robotId !== null && identity.cachedRobot(robotId)?.fleetId !== fleet.fleetId) throw apiError('robot_not_found', { robotId });
      const select = deps.select;
      if (select === null) throw apiError('telemetry_reads_unavailable');
      let r;
      try {
        r = await utilization(store, select, fleet.fleetId, robotId, w, nowMs);
      } catch (err) {
        deps.log?.warn({ err, fleetId: fleet.fleetId }, 'utilization: the telemetry store query failed');
        throw apiError('telemetry_reads_unavailable');
      }
      const body: UtilizationView = {
        fleetId: fleet.fleetId,
        fromMs: r.window.fromMs,
        toMs: r.window.toMs,
        slotMs: SLOT_MS,
        runsTruncated: r.runsTruncated,
        fleet: r.fleet,
        robots: r.robots,
      };
      return { status: 200, body };
    }),
  ];
}
