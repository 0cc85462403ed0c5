/**
 * `GET /v1/robots/{robot_id}/details` (`robots:read`): usage totals and the latest health of each
 * device the robot reports, with its active faults (docs/faults.md).
 */
import { assertRobotVisible } from '../../auth/access.js';
import { robotDetails } from '../../fleet/robots/details/details.js';
import type { RobotUsageRecord } from '../../fleet/robots/details/usage.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import type { Store } from '../../store/lmdb.js';
import type { LatestSnapshots } from '../../telemetry/snapshots/index.js';
import { defineRoute } from '../define-route.js';
import { faultView } from '../fault-views.js';
import type { RouteDef } from '../route.js';
import { RobotDetailsView } from '../schemas/robot-details.js';
import { RobotPathParams } from '../schemas/robots.js';

export interface RobotDetailsDeps {
  store: Store;
  /** Robot records for the access check (the registry's). */
  identity: Pick<IdentityReads, 'robot'>;
  /** Latest snapshots (telemetry's). */
  snapshots: Pick<LatestSnapshots, 'latest'>;
  isOnline(robotId: string): boolean;
  /** The usage meter's current totals for a robot (saved plus not yet saved). */
  usage(robotId: string): RobotUsageRecord | undefined;
}

/** The robot details route. */
export function robotDetailsRoutes(deps: RobotDetailsDeps): RouteDef[] {
  const { store } = deps;
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/robots/{robot_id}/details',
      operationId: 'getRobotDetails',
      summary: 'Usage totals (distance, operating time, missions completed and failed, first and last seen) and the latest health of each device, with active faults.',
      tags: ['Robots'],
      auth: 'robots:read',
      params: RobotPathParams,
      responses: { 200: { description: 'The robot\'s details.', schema: RobotDetailsView } },
      errors: ['robot_not_found', 'forbidden_fleet'],
    }).handle(({ auth, params }) => {
      const robot = deps.identity.robot(params.robot_id);
      assertRobotVisible(auth, params.robot_id, robot);
      const d = robotDetails(store, robot, deps.snapshots.latest(robot.robotId), deps.usage(robot.robotId));
      const body: RobotDetailsView = {
        robotId: robot.robotId,
        name: robot.name,
        fleetId: robot.fleetId,
        online: deps.isOnline(robot.robotId),
        usage: {
          distanceM: Math.round(d.distanceM * 10) / 10,
          operatingS: Math.floor(d.operatingMs / 1000),
          missionsCompleted: d.missionsCompleted,
          missionsFailed: d.missionsFailed,
          firstSeenAtMs: d.firstSeenAtMs,
          lastSeenAtMs: d.lastSeenAtMs,
        },
        health: {
          reportedAtMs: d.deviceHealth?.reportedAtMs ?? null,
          devices: (d.deviceHealth?.devices ?? []).map((x) => ({
            deviceId: x.deviceId,
            kind: x.kind,
            level: x.level,
            status: x.status,
            metrics: Object.entries(x.metrics).map(([name, value]) => ({ name, value })),
          })),
          activeFaults: d.activeFaults.map(faultView),
        },
      };
      return { status: 200, body };
    }),
  ];
}
