/**
 * Routes the service interface lists as removed (Versioning 3). Each answers 404 `not_found` naming
 * what replaces it, also where another method is served on the same path (flat `POST` and `DELETE
 * /v1/mission-schedule` sit next to `GET`, which would otherwise make them a 405).
 */

/** A removed (method, path template) and where its callers should go instead. */
export interface RemovedRoute {
  method: string;
  path: string;
  instead: string;
}

const NESTED_ROBOT = '/v1/orgs/{org_id}/fleets/{fleet_id}/robots/{robot_id}';
const CONTROL_ROBOT = 'use POST /v1/agent/control-robot';

export const REMOVED_ROUTES: readonly RemovedRoute[] = [
  { method: 'POST', path: '/v1/mission-schedule', instead: 'register schedules with POST /v1/agent/schedule-mission, deploy-mission, submit-job or schedule-command' },
  { method: 'DELETE', path: '/v1/mission-schedule', instead: 'cancel a schedule with POST /v1/agent/cancel-schedule' },
  { method: 'POST', path: '/v1/mission-templates', instead: 'use POST /v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates' },
  { method: 'PUT', path: '/v1/mission-templates/{mission_id}', instead: 'use PUT /v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates/{mission_id}' },
  { method: 'DELETE', path: '/v1/mission-templates/{mission_id}', instead: 'use DELETE /v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates/{mission_id}' },
  { method: 'PUT', path: '/v1/mission-templates/{mission_id}/enabled', instead: 'use PUT /v1/orgs/{org_id}/fleets/{fleet_id}/mission-templates/{mission_id}/enabled' },
  { method: 'POST', path: `${NESTED_ROBOT}/stop`, instead: CONTROL_ROBOT },
  { method: 'POST', path: `${NESTED_ROBOT}/resume`, instead: CONTROL_ROBOT },
  { method: 'POST', path: `${NESTED_ROBOT}/release`, instead: CONTROL_ROBOT },
  { method: 'POST', path: `${NESTED_ROBOT}/force-reset`, instead: CONTROL_ROBOT },
  { method: 'GET', path: `${NESTED_ROBOT}/mission-run-status`, instead: 'use POST /v1/agent/get-runtime-status with robot_id' },
  { method: 'GET', path: '/v1/orgs/{org_id}/fleets/{fleet_id}/activity-log', instead: 'read GET /v1/events or GET /v1/audit-log' },
];
