/** GET /v1/orgs/{org_id}/fleets (spec: Endpoints, Discovery). */
import { Type, type Static } from '@sinclair/typebox';
import { Uuid } from './common.js';
import { CursorParam, LimitParam, Page, type ListLimit } from './list.js';
import { named } from './named.js';

export const OrgPathParams = Type.Object({ org_id: Uuid }, { additionalProperties: false });
export type OrgPathParams = Static<typeof OrgPathParams>;

export const FleetSummary = named('Fleet', Type.Object({ fleetId: Uuid, name: Type.String() }, { additionalProperties: false }));
export type FleetSummary = Static<typeof FleetSummary>;

export const FLEETS_LIMIT: ListLimit = { default: 100, max: 500 };

export const FleetListQuery = Type.Object(
  { limit: Type.Optional(LimitParam(FLEETS_LIMIT)), cursor: Type.Optional(CursorParam()) },
  { additionalProperties: false },
);
export type FleetListQuery = Static<typeof FleetListQuery>;

/** The spec leaves the wrapper open: the page shape of every list (docs/api-conventions.md). */
export const FleetListResponse = Page('FleetList', FleetSummary, 'Fleets the key can use, ordered by fleetId.');
export type FleetListResponse = Static<typeof FleetListResponse>;
