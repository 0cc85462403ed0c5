/**
 * Nested robot command routes (spec: Nested robot commands and configuration): go-to, mode,
 * invoke-service, settings and stop-all. Every body is strict and takes the optional ack wait.
 */
import { Type, type Static } from '@sinclair/typebox';
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

export const GoToBody = named('GoToRequest', Type.Object(
  {
    latitude: Type.Number({ minimum: -90, maximum: 90, description: 'WGS84; the target must lie inside the robot\'s advertised go-to area.' }),
    longitude: Type.Number({ minimum: -180, maximum: 180 }),
    heading_deg: Type.Optional(Type.Number({ minimum: 0, exclusiveMaximum: 360, description: 'Heading on arrival, degrees clockwise from north; omitted: any.' })),
    max_speed_mps: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 20, description: 'Speed cap for this trip, m/s; omitted: the robot\'s default.' })),
    ...AckWaitProps,
  },
  { additionalProperties: false },
));
export type GoToBody = Static<typeof GoToBody>;

export const ModeBody = named('ModeRequest', Type.Object({ mode: ModeName, ...AckWaitProps }, { additionalProperties: false }));
export type ModeBody = Static<typeof ModeBody>;

export const InvokeServiceBody = named('InvokeServiceRequest', Type.Object(
  { action_name: ActionName, arguments: Type.Optional(ActionArguments), ...AckWaitProps },
  { additionalProperties: false },
));
export type InvokeServiceBody = Static<typeof InvokeServiceBody>;

export const SettingsBody = named('SettingsRequest', Type.Object({ settings: SettingValues, ...AckWaitProps }, { additionalProperties: false }));
export type SettingsBody = Static<typeof SettingsBody>;

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
