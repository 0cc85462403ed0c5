/**
 * Faults (docs/faults.md): the fleet's faults (`GET …/faults`, filters `active`, `robot_id`), one
 * fault (`GET …/faults/{fault_id}`), and one robot's faults (`GET /v1/robots/{robot_id}/faults`).
 * Permission `robots:read`: faults are part of what a robot reports about itself, like its telemetry.
 */
import { assertRobotVisible } from '../../auth/access.js';
import { apiError } from '../../errors/catalog.js';
import { getFault } from '../../fleet/safety/faults/faults.js';
import { faultList, faultView } from '../fault-views.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { defineRoute } from '../define-route.js';
import { fleetFromPath } from '../fleet-scope.js';
import type { RouteDef } from '../route.js';
import { FaultPage, FaultPathParams, FaultView, FleetFaultsParams, FleetFaultsQuery, RobotFaultsQuery } from '../schemas/faults.js';
import { RobotPathParams } from '../schemas/robots.js';

/** Fault routes. */
export function faultRoutes(deps: { store: Store; identity: IdentityReads }): RouteDef[] {
  const { store, identity } = deps;
  const tags = ['Faults'];
  const list = faultList(store);
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/orgs/{org_id}/fleets/{fleet_id}/faults',
      operationId: 'listFaults',
      summary: 'The fleet\'s faults, newest first; `active` and `robot_id` filter.',
      tags,
      auth: 'robots:read',
      params: FleetFaultsParams,
      query: FleetFaultsQuery,
      responses: { 200: { description: 'One page of faults.', schema: FaultPage } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'cursor_invalid'],
    }).handle(({ auth, params, query }) => ({ status: 200, body: list.read(identity, auth, { ...query, org_id: params.org_id, fleet_id: params.fleet_id }) })),
    defineRoute({
      method: 'GET',
      path: '/v1/orgs/{org_id}/fleets/{fleet_id}/faults/{fault_id}',
      operationId: 'getFault',
      summary: 'One fault of the fleet.',
      tags,
      auth: 'robots:read',
      params: FaultPathParams,
      responses: { 200: { description: 'The fault.', schema: FaultView } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'fault_not_found'],
    }).handle(({ auth, params }) => {
      const fleet = fleetFromPath(identity, auth, params);
      const f = getFault(store, params.fault_id);
      if (f === undefined || f.fleetId !== fleet.fleetId) throw apiError('fault_not_found', { faultId: params.fault_id });
      return { status: 200, body: faultView(f) };
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/robots/{robot_id}/faults',
      operationId: 'listRobotFaults',
      summary: 'One robot\'s faults in its current fleet, newest first; `active` filters.',
      tags,
      auth: 'robots:read',
      params: RobotPathParams,
      query: RobotFaultsQuery,
      responses: { 200: { description: 'One page of the robot\'s faults.', schema: FaultPage } },
      errors: ['robot_not_found', 'forbidden_fleet', 'cursor_invalid'],
    }).handle(({ auth, params, query }) => {
      const robot = identity.cachedRobot(params.robot_id);
      assertRobotVisible(auth, params.robot_id, robot);
      return { status: 200, body: list.read(identity, auth, { ...query, fleet_id: robot.fleetId, robot_id: robot.robotId }) };
    }),
  ];
}
