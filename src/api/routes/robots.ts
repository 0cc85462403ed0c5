/**
 * Compatibility robot routes (spec: Endpoints, "Robots (compatibility routes)"): the robot records of a
 * fleet and one robot, each with its latest telemetry snapshot from LMDB and live link state.
 */
import { requireFleet } from '../../auth/access.js';
import { JsonText } from '../json-text.js';
import { defineRoute } from '../define-route.js';
import type { RouteDef } from '../route.js';
import type { LinkConflictView } from '../../protocol/robot-link.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import type { RobotRecord } from '../../store/records.js';
import type { LatestSnapshots } from '../../telemetry/snapshots/index.js';
import { RobotViewCache } from '../robot-view-cache.js';
import { toRobotView } from '../robot-view.js';
import { RobotListQuery, RobotListResponse, RobotPathParams, RobotView } from '../schemas/robots.js';

export interface RobotRouteDeps {
  /** Robot and fleet records (the registry's). */
  identity: IdentityReads;
  /** Latest snapshots (telemetry's). */
  snapshots: LatestSnapshots;
  /** True while the robot holds a live link (from the RobotLink registry). */
  isOnline(robotId: string): boolean;
  /** The robot's link conflict, or null (from the RobotLink registry). */
  linkConflict(robotId: string): LinkConflictView | null;
}

/** GET /v1/robots and GET /v1/robots/{robot_id}. */
export function robotRoutes(deps: RobotRouteDeps): RouteDef[] {
  const conflictOf = (id: string): LinkConflictView | null => deps.linkConflict(id);
  const view = (r: RobotRecord): RobotView =>
    toRobotView(r, deps.snapshots.latest(r.robotId), deps.isOnline(r.robotId), conflictOf(r.robotId));
  // The single-robot read is the hot one (dashboards poll it): served from a change-checked cache.
  const views = new RobotViewCache(deps.identity, deps.snapshots, (id) => deps.isOnline(id), undefined, conflictOf);
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/robots',
      operationId: 'listRobots',
      summary: 'Every robot record of a fleet, including robots not yet active, with latest telemetry.',
      tags: ['Robots'],
      auth: 'robots:read',
      query: RobotListQuery,
      responses: { 200: { description: 'Robot records, ordered by id.', schema: RobotListResponse } },
      errors: ['fleet_not_found', 'forbidden_fleet'],
    }).handle(
      ({ auth, query }) => {
        const fleet = requireFleet(deps.identity, auth, query.fleet_id);
        const body: RobotListResponse = deps.identity.robotsOfFleet(fleet.fleetId).map(view);
        return { status: 200, body };
      },
    ),
    defineRoute({
      method: 'GET',
      path: '/v1/robots/{robot_id}',
      operationId: 'getRobot',
      summary: 'One robot record with its latest telemetry.',
      tags: ['Robots'],
      auth: 'robots:read',
      params: RobotPathParams,
      responses: { 200: { description: 'The robot record.', schema: RobotView } },
      errors: ['robot_not_found', 'forbidden_fleet'],
    }).handle(
      ({ auth, params }) => {
        return { status: 200, body: new JsonText(views.json(auth, params.robot_id)) };
      },
    ),
  ];
}
