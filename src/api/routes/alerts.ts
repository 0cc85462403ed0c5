/**
 * Alerts under `/v1/orgs/{org_id}/fleets/{fleet_id}/alerts`: list (filters `state`, `kind`,
 * `robot_id`, `unresolved_from_ms`/`unresolved_to_ms`; newest first, `{items, next_cursor}`) and read with `fleet:read`, acknowledge with
 * `fleet:write` (docs/alerts.md).
 */
import type { AuthContext } from '../../auth/context.js';
import { apiError } from '../../errors/catalog.js';
import { alertsOf, type AlertActor, type AlertRecord, type AlertService } from '../../fleet/safety/alerts/index.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { defineRoute } from '../define-route.js';
import { fleetFromPath } from '../fleet-scope.js';
import { defineList, type ListQuery } from '../list-reader.js';
import type { RouteDef } from '../route.js';
import {
  AcknowledgeAlertBody, ALERTS_LIMIT, AlertListQuery, AlertListResponse, AlertPathParams, AlertsPathParams, AlertView,
} from '../schemas/alerts.js';
import { KIB } from '../schemas/body-bounds.js';

const BASE = '/v1/orgs/{org_id}/fleets/{fleet_id}/alerts';

/** The published view of an alert (the record without its internal condition key and organization). */
export function alertView(a: Readonly<AlertRecord>): AlertView {
  return {
    alertId: a.alertId,
    fleetId: a.fleetId,
    kind: a.kind,
    state: a.state,
    severity: a.severity,
    subject: { type: a.subject.type, id: a.subject.id },
    robotId: a.robotId,
    message: a.message,
    details: a.details,
    occurrences: a.occurrences,
    openedAtMs: a.openedAtMs,
    lastRaisedAtMs: a.lastRaisedAtMs,
    acknowledgedAtMs: a.acknowledgedAtMs,
    acknowledgedBy: a.acknowledgedBy === null ? null : { ...a.acknowledgedBy },
    acknowledgeNote: a.acknowledgeNote,
    resolvedAtMs: a.resolvedAtMs,
    resolution: a.resolution,
    correlationId: a.correlationId,
    updatedAtMs: a.updatedAtMs,
  };
}

function actorOf(auth: AuthContext): AlertActor {
  return {
    actorType: auth.actorType,
    apiKeyId: auth.apiKeyId,
    userId: auth.user?.userId ?? null,
    email: auth.user?.email ?? null,
  };
}

/** Alert routes. */
export function alertRoutes(deps: { store: Store; identity: IdentityReads; alerts: AlertService }): RouteDef[] {
  const { store, identity, alerts } = deps;
  const tags = ['Alerts'];
  const list = defineList<ListQuery & AlertsPathParams & AlertListQuery, AlertRecord, AlertView>({
    kind: 'alerts',
    limit: ALERTS_LIMIT,
    filters: (q) => ({ state: q.state, kind: q.kind, robot_id: q.robot_id, unresolved_from_ms: q.unresolved_from_ms, unresolved_to_ms: q.unresolved_to_ms }),
    source: (fleet, q) => alertsOf(store, fleet.fleetId, {
      ...(q.state !== undefined ? { state: q.state } : {}),
      ...(q.kind !== undefined ? { kind: q.kind } : {}),
      ...(q.robot_id !== undefined ? { robotId: q.robot_id } : {}),
      ...(q.unresolved_from_ms !== undefined ? { unresolvedFromMs: q.unresolved_from_ms } : {}),
      ...(q.unresolved_to_ms !== undefined ? { unresolvedToMs: q.unresolved_to_ms } : {}),
    }, (alertId) => alerts.live(alertId)),
    view: alertView,
  });
  return [
    defineRoute({
      method: 'GET',
      path: BASE,
      operationId: 'listAlerts',
      summary: 'The fleet\'s alerts, newest first; filter by `state`, `kind`, `robot_id` and the time they were unresolved (`unresolved_from_ms`, `unresolved_to_ms`).',
      tags,
      auth: 'fleet:read',
      params: AlertsPathParams,
      query: AlertListQuery,
      responses: { 200: { description: 'One page of alerts.', schema: AlertListResponse } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'cursor_invalid', 'invalid_query'],
    }).handle(({ auth, params, query }) => {
      if (query.unresolved_from_ms !== undefined && query.unresolved_to_ms !== undefined && query.unresolved_to_ms < query.unresolved_from_ms) {
        throw apiError('invalid_query', { detail: 'unresolved_to_ms is before unresolved_from_ms' });
      }
      return { status: 200, body: list.read(identity, auth, { ...params, ...query }) };
    }),
    defineRoute({
      method: 'GET',
      path: `${BASE}/{alert_id}`,
      operationId: 'getAlert',
      summary: 'One alert.',
      tags,
      auth: 'fleet:read',
      params: AlertPathParams,
      responses: { 200: { description: 'The alert.', schema: AlertView } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'alert_not_found'],
    }).handle(({ auth, params }) => {
      const fleet = fleetFromPath(identity, auth, params);
      const a = alerts.get(fleet.fleetId, params.alert_id);
      if (a === undefined) throw apiError('alert_not_found', { alertId: params.alert_id });
      return { status: 200, body: alertView(a) };
    }),
    defineRoute({
      method: 'POST',
      path: `${BASE}/{alert_id}/acknowledge`,
      operationId: 'acknowledgeAlert',
      summary: 'Acknowledge an alert: a person has seen it (who and when are recorded). Acknowledging an acknowledged alert answers it unchanged; a resolved alert is 409.',
      tags,
      auth: 'fleet:write',
      params: AlertPathParams,
      body: AcknowledgeAlertBody,
      maxBodyBytes: 8 * KIB,
      responses: { 200: { description: 'The alert, acknowledged (committed before the answer).', schema: AlertView } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'alert_not_found', 'alert_resolved'],
    }).handle(async ({ auth, params, body }) => {
      const fleet = fleetFromPath(identity, auth, params);
      const a = await alerts.acknowledge(fleet.fleetId, params.alert_id, actorOf(auth), body.note ?? null);
      return { status: 200, body: alertView(a) };
    }),
  ];
}
