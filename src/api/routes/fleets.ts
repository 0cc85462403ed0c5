/** GET /v1/orgs/{org_id}/fleets: the fleets a key can use (spec: Discovery). */
import { defineRoute } from '../define-route.js';
import { defineOrgList } from '../list-reader.js';
import type { RouteDef } from '../route.js';
import type { Store } from '../../store/lmdb.js';
import { fleetsOf } from '../../store/identity.js';
import { keysetOverSorted } from '../../store/keyset.js';
import type { FleetRecord } from '../../store/records.js';
import { FLEETS_LIMIT, FleetListQuery, FleetListResponse, OrgPathParams, type FleetSummary } from '../schemas/fleets.js';
import { fleetRecord } from '../../store/identity-reads.js';

/** Fleet discovery routes. */
export function fleetRoutes(deps: { store: Store }): RouteDef[] {
  const fleets = defineOrgList<OrgPathParams & FleetListQuery, FleetRecord, FleetSummary>({
    kind: 'fleets',
    limit: FLEETS_LIMIT,
    filters: () => ({}),
    // A fleet-scoped key sees only its fleet (a key's scope is not a filter the client chose).
    // Positions are fleet ids in both keysets, so a cursor means the same in either.
    source: (orgId, auth) => {
      if (auth.fleetId === null) return fleetsOf(deps.store, orgId);
      const own = fleetRecord(deps.store, auth.fleetId);
      return keysetOverSorted(own !== undefined && own.orgId === orgId ? [own] : [], (f) => f.fleetId);
    },
    view: (f) => ({ fleetId: f.fleetId, name: f.name }),
  });
  return [
    defineRoute({
      method: 'GET',
      path: '/v1/orgs/{org_id}/fleets',
      operationId: 'listFleets',
      summary: "Fleets the key can use. org_id must be the key's organization; a fleet-scoped key sees only its fleet.",
      tags: ['Discovery'],
      auth: 'fleet:read',
      params: OrgPathParams,
      query: FleetListQuery,
      responses: { 200: { description: 'The reachable fleets.', schema: FleetListResponse } },
      errors: ['forbidden_org', 'cursor_invalid'],
    }).handle(({ auth, params, query }) => {
      const body: FleetListResponse = fleets.read(auth, { ...params, ...query });
      return { status: 200, body };
    }),
  ];
}
