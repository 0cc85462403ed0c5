/** GET /v1/orgs/{org_id}/fleets (spec: Endpoints, Discovery). */
import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.js';
import { named } from './named.js';

export const OrgPathParams = Type.Object({ org_id: Uuid }, { additionalProperties: false });
export type OrgPathParams = Static<typeof OrgPathParams>;

export const FleetSummary = named('Fleet', Type.Object({ fleetId: Uuid, name: Type.String() }, { additionalProperties: false }));
export type FleetSummary = Static<typeof FleetSummary>;

/** The spec leaves the wrapper open; `items` keeps room for paging fields later without a break. */
export const FleetListResponse = named('FleetList', Type.Object(
  { items: Type.Array(FleetSummary, { description: 'Fleets the key can use, ordered by fleetId.' }) },
  { additionalProperties: false },
));
export type FleetListResponse = Static<typeof FleetListResponse>;
