/** GET /v1/orgs/{org_id}/fleets: the fleets a key can use (spec: Discovery). */
import { requireOrg } from '../../auth/access.js';
import { defineRoute } from '../define-route.js';
import type { RouteDef } from '../route.js';
import type { Store } from '../../store/lmdb.js';
import { listFleets } from '../../store/identity.js';
import { FleetListResponse, OrgPathParams } from '../schemas/fleets.js';

/** Fleet discovery routes. */
export function fleetRoutes(deps: { store: Store }): RouteDef[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/orgs/{org_id}/fleets',
      operationId: 'listFleets',
      summary: "Fleets the key can use. org_id must be the key's organization; a fleet-scoped key sees only its fleet.",
      tags: ['Discovery'],
      auth: 'fleet:read',
      params: OrgPathParams,
      responses: { 200: { description: 'The reachable fleets.', schema: FleetListResponse } },
      errors: ['forbidden_org'],
    }).handle(
      ({ auth, params }) => {
        requireOrg(auth, params.org_id);
        const fleets = listFleets(deps.store, params.org_id).filter((f) => auth.fleetId === null || f.fleetId === auth.fleetId);
        const body: FleetListResponse = { items: fleets.map((f) => ({ fleetId: f.fleetId, name: f.name })) };
        return { status: 200, body };
      },
    ),
  ];
}
