/** `PATCH /v1/robots/{robot_id}` (docs/robot-admin.md). */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Uuid } from './common.js';
import { named } from './named.js';
import { RobotLabels } from './robots.js';
import { Vda5050Identity } from './vda5050-identity.js';

export const RobotPatchBody = named('RobotPatchRequest', Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    labels: Type.Optional(RobotLabels),
    notes: Type.Optional(Nullable(Type.String({ maxLength: 2000, description: 'null clears the notes.' }))),
    active: Type.Optional(Type.Boolean({ description: 'False takes the robot out of the fleet working set (no new runs); a run in progress finishes.' })),
    fleet_id: Type.Optional(Uuid),
    vda5050: Type.Optional(Nullable(Vda5050Identity)),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    description:
      'Omitted fields are kept; `labels` replaces the whole map. `fleet_id` (another fleet of the organization that the key may use) ' +
      'moves an idle robot there: 409 `robot_not_idle` while it runs a mission or has commands it has not acknowledged. The move is one ' +
      'transaction; an online robot is reconnected into its new fleet. `vda5050` binds the robot to a VDA 5050 identity (409 `conflict` when ' +
      'another robot holds it; null unbinds; docs/vda5050.md). docs/robot-admin.md.',
  },
));
export type RobotPatchBody = Static<typeof RobotPatchBody>;
