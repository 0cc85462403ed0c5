/**
 * `PATCH /v1/robots/{robot_id}`: a robot's metadata, or its move to another fleet
 * of the organization (src/fleet/robots/admin; docs/robot-admin.md). Permission `robots:write`; a
 * transfer also needs the key to be able to use the target fleet (an org-wide key).
 */
import { requireFleet, requireRobot } from '../../auth/access.js';
import { patchRobot, type RobotAdminDeps } from '../../fleet/robots/admin/patch-robot.js';
import { decodeSnapshot } from '../../telemetry/sample/index.js';
import { defineRoute } from '../define-route.js';
import type { RouteDef } from '../route.js';
import { toRobotView } from '../robot-view.js';
import { RobotPatchBody } from '../schemas/robot-admin.js';
import { RobotPathParams, RobotView } from '../schemas/robots.js';
import { KIB } from '../schemas/body-bounds.js';

export interface RobotAdminRouteDeps extends RobotAdminDeps {
  isOnline(robotId: string): boolean;
}

/** The robot administration route. */
export function robotAdminRoutes(deps: RobotAdminRouteDeps): RouteDef[] {
  const { store } = deps;
  return [
    defineRoute({
      method: 'PATCH',
      path: '/v1/robots/{robot_id}',
      operationId: 'patchRobot',
      summary: 'Edit a robot\'s name, labels, notes or active flag, or move an idle robot to another fleet of the organization.',
      tags: ['Robots'],
      auth: 'robots:write',
      params: RobotPathParams,
      body: RobotPatchBody,
      maxBodyBytes: 32 * KIB,
      responses: { 200: { description: 'The robot after the change.', schema: RobotView } },
      errors: ['robot_not_found', 'forbidden_fleet', 'fleet_not_found', 'robot_not_idle', 'robot_rostered_alone', 'robot_identity_taken'],
    }).handle(async ({ auth, params, body, nowMs }) => {
      const robot = requireRobot(store, auth, params.robot_id);
      // The target fleet by the same rules as any fleet the key names: another org's is 404, a
      // fleet-scoped key cannot reach another fleet (403).
      const fleet = body.fleet_id !== undefined ? requireFleet(store, auth, body.fleet_id) : undefined;
      const out = await patchRobot(
        deps,
        auth,
        robot,
        {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.labels !== undefined ? { labels: body.labels } : {}),
          ...(body.notes !== undefined ? { notes: body.notes } : {}),
          ...(body.active !== undefined ? { active: body.active } : {}),
          ...(fleet !== undefined ? { fleet } : {}),
          ...(body.vda5050 !== undefined ? { vda5050: body.vda5050 } : {}),
        },
        nowMs,
      );
      const view = toRobotView(out.robot, decodeSnapshot(store.snapshots.get(out.robot.robotId)), deps.isOnline(out.robot.robotId), null);
      return { status: 200, body: view };
    }),
  ];
}
