/**
 * Organization/fleet/permission checks shared by every route (spec: Authentication, rule 2).
 *
 * Policy: a wrong organization in the path or body is 403; a fleet or robot that does not exist or
 * belongs to another organization is 404 (not visible, so ids cannot be probed); a fleet-scoped key
 * used on another fleet of its own organization is 403.
 */
import { apiError } from '../errors/catalog.js';
import type { AuthContext } from './context.js';
import type { IdentityReads } from '../store/identity-reads.js';
import type { FleetRecord, RobotRecord } from '../store/records.js';
import { isLivePermission } from './permissions.js';

/** Throws 403 unless the key carries `permission` (retired permissions never count). */
export function requirePermission(auth: AuthContext, permission: string): void {
  if (!isLivePermission(permission) || !auth.permissions.includes(permission)) {
    throw apiError('forbidden_permission', { permission });
  }
}

/** Throws 403 unless `orgId` is the key's organization. */
export function requireOrg(auth: AuthContext, orgId: string): void {
  if (orgId !== auth.orgId) throw apiError('forbidden_org', { orgId });
}

/**
 * Loads a fleet the key may use: 404 when missing or in another org, 403 for a fleet-scoped key
 * elsewhere. The record is shared and frozen (the registry's decode cache): read your own copy to change it.
 */
export function requireFleet(identity: Pick<IdentityReads, 'fleet'>, auth: AuthContext, fleetId: string): Readonly<FleetRecord> {
  const fleet = identity.fleet(fleetId);
  if (!fleet || fleet.orgId !== auth.orgId) throw apiError('fleet_not_found', { fleetId });
  if (auth.fleetId !== null && auth.fleetId !== fleetId) throw apiError('forbidden_fleet');
  return fleet;
}

/** Loads a robot the key may use, by the same rules as {@link requireFleet} for its fleet. */
export function requireRobot(identity: Pick<IdentityReads, 'robot'>, auth: AuthContext, robotId: string): RobotRecord {
  const robot = identity.robot(robotId);
  assertRobotVisible(auth, robotId, robot);
  return robot;
}

/** {@link requireRobot}'s rules for a record the caller already read (e.g. from a cache). */
export function assertRobotVisible(auth: AuthContext, robotId: string, robot: RobotRecord | undefined): asserts robot is RobotRecord {
  if (!robot || robot.orgId !== auth.orgId) throw apiError('robot_not_found', { robotId });
  if (auth.fleetId !== null && auth.fleetId !== robot.fleetId) throw apiError('forbidden_fleet');
}
