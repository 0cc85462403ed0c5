/**
 * Organization and fleet manifests: `GET /v1/orgs/{org_id}` and
 * `GET /v1/orgs/{org_id}/fleets/{fleet_id}`. The fleet manifest carries `operation` as one object
 * (`operation_id`, `name`) or null before the fleet's first mission template creates it.
 */
import { requireFleet, requireOrg } from '../../auth/access.js';
import { apiError } from '../../errors/catalog.js';
import { getOperation } from '../../missions/catalog/operation.js';
import { listFleets, listRobots } from '../../store/identity.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import type { FleetRecord } from '../../store/records.js';
import { defineRoute } from '../define-route.js';
import type { RouteDef } from '../route.js';
import { OrgPathParams } from '../schemas/fleets.js';
import { FleetManifest, FleetPathParams, OrgManifest } from '../schemas/orgs.js';
import { orgRecord } from '../../store/identity-reads.js';

function manifest(store: Store, f: Readonly<FleetRecord>): FleetManifest {
  const op = getOperation(store, f.fleetId);
  const robots = listRobots(store, f.fleetId);
  return {
    fleetId: f.fleetId,
    orgId: f.orgId,
    name: f.name,
    createdAtMs: f.createdAtMs,
    operation: op ? { operation_id: op.operationId, name: op.name } : null,
    robots: { total: robots.length, active: robots.filter((r) => r.active).length },
  };
}

/** The two manifest routes. */
export function orgRoutes(deps: { store: Store; identity: IdentityReads }): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/orgs/{org_id}',
      operationId: 'getOrg',
      summary: "The key's organization with the manifest of each fleet the key can use. org_id must be the key's organization.",
      tags: ['Discovery'],
      auth: 'fleet:read',
      params: OrgPathParams,
      responses: { 200: { description: 'The organization manifest.', schema: OrgManifest } },
      errors: ['forbidden_org'],
    }).handle(({ auth, params }) => {
      requireOrg(auth, params.org_id);
      const org = orgRecord(deps.store, params.org_id);
      // The key's organization always exists while the key does; answer as for another org if not.
      if (!org) throw apiError('forbidden_org', { orgId: params.org_id });
      const fleets = listFleets(deps.store, org.orgId).filter((f) => auth.fleetId === null || f.fleetId === auth.fleetId);
      const body: OrgManifest = { orgId: org.orgId, name: org.name, createdAtMs: org.createdAtMs, fleets: fleets.map((f) => manifest(deps.store, f)) };
      return { status: 200, body };
    }),
    defineRoute({
      method: 'GET',
      path: '/v1/orgs/{org_id}/fleets/{fleet_id}',
      operationId: 'getFleet',
      summary: 'One fleet manifest: name, its operation (one object, or null before the first mission template), robot counts.',
      tags: ['Discovery'],
      auth: 'fleet:read',
      params: FleetPathParams,
      responses: { 200: { description: 'The fleet manifest.', schema: FleetManifest } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet'],
    }).handle(({ auth, params }) => {
      requireOrg(auth, params.org_id);
      const fleet = requireFleet(deps.identity, auth, params.fleet_id);
      return { status: 200, body: manifest(deps.store, fleet) };
    }),
  ];
}
