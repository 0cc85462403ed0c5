/**
 * Request/response robot routes (spec: Nested robot commands and configuration): remote
 * configuration (`config`) and robot-local settings (`onboard-settings`), read and written through
 * the robot, which reports the result. The value maps are robot-defined JSON objects.
 */
import { Type, type Static } from '@sinclair/typebox';
import { FreeForm, Uuid } from './common.js';
import { named } from './named.js';

/** Default and cap of the wait for the robot's report. */
export const DEFAULT_RESULT_WAIT_MS = 10_000;
export const MAX_RESULT_WAIT_MS = 30_000;

const TimeoutMs = Type.Integer({
  minimum: 1,
  maximum: MAX_RESULT_WAIT_MS,
  description: 'How long to wait for the robot\'s report (default 10000 ms). When it elapses: 503 `unavailable`; the command stays readable at /v1/robot-commands/{command_id}.',
});

export const ConfigReadQuery = Type.Object({ timeout_ms: Type.Optional(TimeoutMs) }, { additionalProperties: false });
export type ConfigReadQuery = Static<typeof ConfigReadQuery>;

export const ConfigWriteBody = named('ConfigWriteRequest', Type.Object(
  {
    values: FreeForm({
      minProperties: 1,
      maxProperties: 100,
      description: 'Keys to change and their new values (robot-defined). The robot validates them and reports the resulting state.',
    }),
    timeout_ms: Type.Optional(TimeoutMs),
  },
  { additionalProperties: false },
));
export type ConfigWriteBody = Static<typeof ConfigWriteBody>;

export const ConfigResponse = named('RobotConfiguration', Type.Object(
  {
    robotId: Uuid,
    commandId: Uuid,
    values: FreeForm({ description: 'The configuration (or settings) as the robot now has them.' }),
  },
  {
    additionalProperties: false,
    description:
      'Sent only after the robot reported its result. Errors: 422 `policy_rejected` when the robot has not opted into remote ' +
      'configuration / onboard settings, rejected the command, or refused the values (`details.error` has its reason); 503 ' +
      '`unavailable` when the robot is offline or did not report in time (`details.commandId` to follow it).',
  },
));
export type ConfigResponse = Static<typeof ConfigResponse>;
