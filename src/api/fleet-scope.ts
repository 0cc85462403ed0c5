/**
 * The fleet a request addresses, shared by the route modules (routes never import each other).
 */
import { requireFleet, requireOrg } from '../auth/access.js';
import type { AuthContext } from '../auth/context.js';
import type { IdentityReads } from '../store/identity-reads.js';
import type { FleetRecord } from '../store/records.js';

/** The fleet named by nested path params, checked against the key (org 403, fleet 404/403). */
export function fleetFromPath(identity: Pick<IdentityReads, 'fleet'>, auth: AuthContext, params: { org_id: string; fleet_id: string }): FleetRecord {
  requireOrg(auth, params.org_id);
  const fleet = requireFleet(identity, auth, params.fleet_id);
  // requireFleet already ties the fleet to the key's org, and requireOrg the path's org to the key.
  return fleet;
}

/** Active robots of a fleet, in id order (the `stop_all` targets). */
export function activeRobots(identity: Pick<IdentityReads, 'fleetRobotIds' | 'cachedRobot'>, fleetId: string): string[] {
  return identity.fleetRobotIds(fleetId).filter((id) => identity.cachedRobot(id)?.active === true);
}
