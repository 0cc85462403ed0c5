/**
 * Nested robot command routes (spec: Nested robot commands and configuration): go-to, mode,
 * invoke-service, settings and stop-all. Every body is strict and takes the optional ack wait.
 */
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { declarationOf, DECLARATIONS, inPublishedOrder, type AnyCommandDeclaration } from '../../commands/catalog/index.js';
import { bodyProperties, fieldsOf, type SurfaceField } from './command-fields.js';
import { Uuid } from './common.js';
import {
  AckWaitProps,
  ActionArguments,
  ActionName,
  ControlRobotOutcome,
  DeliveryObject,
  ModeName,
  SettingValues,
  StopReason,
} from './control-robot.js';
import { named } from './named.js';

export const FleetPathParams = Type.Object({ org_id: Uuid, fleet_id: Uuid }, { additionalProperties: false });
export type FleetPathParams = Static<typeof FleetPathParams>;

export const RobotPathParams = Type.Object({ org_id: Uuid, fleet_id: Uuid, robot_id: Uuid }, { additionalProperties: false });
export type RobotPathParams = Static<typeof RobotPathParams>;

/** Fields published with their own schema on the nested routes (the rest: the declaration's). */
const OWN_FIELD_SCHEMAS: Record<string, TSchema> = { mode: ModeName, actionName: ActionName, arguments: ActionArguments, settings: SettingValues };

/** One nested command route: its command, the fields its body takes and the body schema. */
export interface NestedCommandRoute {
  command: AnyCommandDeclaration;
  route: NonNullable<AnyCommandDeclaration['route']>;
  fields: SurfaceField[];
  body: TObject;
}

const pascal = (segment: string): string => segment.split('-').map((w) => w.charAt(0).toUpperCase() + w.slice(1)).join('');

/**
 * The commands with a nested route (declarations with `route`), in their published order. Each
 * body is the command's fields plus the optional ack wait, published as `<Segment>Request`.
 */
export const NESTED_COMMAND_ROUTES: readonly NestedCommandRoute[] = inPublishedOrder(
  DECLARATIONS.filter((d) => d.route).map((d) => d.action),
  ['go_to', 'mode', 'invoke_action', 'update_settings'],
).map((action) => {
  const command = declarationOf(action);
  const route = command.route!;
  const fields = fieldsOf(command, OWN_FIELD_SCHEMAS);
  const body = named(`${pascal(route.segment)}Request`, Type.Object({ ...bodyProperties(fields, false), ...AckWaitProps }, { additionalProperties: false }));
  return { command, route, fields, body };
});

export const StopAllBody = named('StopAllRequest', Type.Object({ reason: Type.Optional(StopReason), ...AckWaitProps }, { additionalProperties: false }));
export type StopAllBody = Static<typeof StopAllBody>;

export const RobotCommandResponse = named('RobotCommandResult', Type.Object(
  {
    success: Type.Boolean({ description: 'Always true on 200: the command was dispatched, deferred, received, or its wait timed out (not proof of failure).' }),
    robotId: Uuid,
    action: Type.String({ description: 'The command sent: `go_to`, `mode`, `invoke_action` or `update_settings`.' }),
    delivery: DeliveryObject,
  },
  {
    additionalProperties: false,
    description:
      'A policy violation is 422 `policy_rejected` and nothing is sent; an offline robot is 503 `unavailable` (these commands are ' +
      'not kept for later); an agent rejection is 422 `policy_rejected` with `details.delivery` (state `agent_rejected`).',
  },
));
export type RobotCommandResponse = Static<typeof RobotCommandResponse>;

export const StopAllResponse = named('StopAllResult', Type.Object(
  {
    success: Type.Boolean({ description: 'True when every active robot\'s stop succeeded.' }),
    count: Type.Integer({ description: 'Active robots of the fleet, one outcome each.' }),
    outcomes: Type.Array(ControlRobotOutcome),
    error: Type.Optional(Type.String({ description: 'On 207 and 502: summary message.' })),
    code: Type.Optional(Type.Unsafe<'partial_failure' | 'unavailable'>({ type: 'string', enum: ['partial_failure', 'unavailable'] })),
  },
  {
    additionalProperties: false,
    description: 'One stop per active robot (offline robots: `deferred`, sent on reconnect). 200 / 207 / 502 as for bulk control-robot.',
  },
));
export type StopAllResponse = Static<typeof StopAllResponse>;
