/**
 * Organization and fleet manifests: `GET /v1/orgs/{org_id}` and `GET /v1/orgs/{org_id}/fleets/{fleet_id}`
 * (spec: Resources, Fleet: "a fleet manifest returns the operation as a single object").
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Uuid } from './common.js';
import { named } from './named.js';

export const FleetPathParams = Type.Object({ org_id: Uuid, fleet_id: Uuid }, { additionalProperties: false });
export type FleetPathParams = Static<typeof FleetPathParams>;

export const FleetOperationRef = named('FleetOperationRef', Type.Object(
  { operation_id: Uuid, name: Type.String() },
  { additionalProperties: false, description: "The fleet's one operation (created with its first mission template)." },
));

export const FleetManifest = named('FleetManifest', Type.Object(
  {
    fleetId: Uuid,
    orgId: Uuid,
    name: Type.String(),
    createdAtMs: Type.Integer({ description: 'Unix ms.' }),
    operation: Nullable(FleetOperationRef),
    robots: Type.Object(
      {
        total: Type.Integer({ minimum: 0, description: 'Robots registered in the fleet, inactive ones included.' }),
        active: Type.Integer({ minimum: 0, description: 'Active members of the fleet working set.' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: '`operation` is one object, or null while the fleet has no operation yet (before its first mission template).' },
));
export type FleetManifest = Static<typeof FleetManifest>;

export const OrgManifest = named('OrgManifest', Type.Object(
  {
    orgId: Uuid,
    name: Type.String(),
    createdAtMs: Type.Integer({ description: 'Unix ms.' }),
    fleets: Type.Array(FleetManifest, { description: 'The fleets the key can use (a fleet-scoped key: its fleet only), ordered by fleetId.' }),
  },
  { additionalProperties: false },
));
export type OrgManifest = Static<typeof OrgManifest>;
