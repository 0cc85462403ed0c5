/** `POST /v1/agent/control-operation` (spec: Agent API operation control). Strict body. */
import { Type, type Static } from '@sinclair/typebox';
import { OPERATION_ACTIONS, type OperationAction } from '../../missions/catalog/operation-control.js';
import { ErrorBody, Uuid, uuidSchema } from './common.js';
import { TemplateView } from './templates.js';
import { named } from './named.js';

const uuidWith = (description: string) => uuidSchema(description);

export const ControlOperationBody = named('ControlOperationRequest', Type.Object(
  {
    org_id: Uuid,
    fleet_id: Uuid,
    action: Type.Unsafe<OperationAction>({
      type: 'string',
      enum: [...OPERATION_ACTIONS],
      description:
        'Permission: start, pause, reset, restart, reset_step, abort_missions need operations:control; enable_mission, disable_mission, ' +
        'assign_robot, unassign_robot need missions:write; reset_decomposers needs features:write.',
    }),
    operation_id: Type.Optional(uuidWith('Asserts the fleet\'s operation id: another id answers 409 conflict.')),
    mission_id: Type.Optional(uuidWith('Required by enable_mission, disable_mission, assign_robot, unassign_robot; optional for reset_step (one step instead of all).')),
    robot_id: Type.Optional(uuidWith('Required by assign_robot and unassign_robot.')),
  },
  { additionalProperties: false },
));
export type ControlOperationBody = Static<typeof ControlOperationBody>;

export const OperationObject = named('Operation', Type.Object(
  {
    operation_id: Uuid,
    name: Type.String(),
    state: Type.Unsafe<'running' | 'paused' | 'stopped'>({ type: 'string', enum: ['running', 'paused', 'stopped'], description: '`stopped` = not running (initial and after reset).' }),
    epoch: Type.Integer({ description: 'Bumped by reset and restart.' }),
  },
  { additionalProperties: false },
));

export const ControlOperationResponse = named('ControlOperationResult', Type.Object(
  {
    success: Type.Boolean({ description: 'False on 202 (runtime sync pending) and 207 (run effect failed).' }),
    action: Type.String(),
    operation: OperationObject,
    changed: Type.Boolean({ description: 'False when there was nothing to change (e.g. start on a running operation).' }),
    persistenceState: Type.Literal('committed'),
    runtimeSync: Type.Unsafe<'applied' | 'pending'>({ type: 'string', enum: ['applied', 'pending'] }),
    runtimeSyncError: Type.Optional(Type.String()),
    template: Type.Optional(TemplateView),
    features: Type.Optional(Type.Array(Uuid, { description: 'Features whose holders or decomposition were reset.' })),
    runs: Type.Optional(
      Type.Object(
        {
          effect: Type.Unsafe<'pause' | 'resume' | 'abort'>({ type: 'string', enum: ['pause', 'resume', 'abort'] }),
          attached: Type.Boolean({ description: 'False when no run tracker is attached (the state changed, no run was touched).' }),
          applied: Type.Boolean(),
          detail: Type.Optional(Type.String()),
          count: Type.Optional(Type.Integer({ description: 'Active runs the effect addressed.' })),
          failures: Type.Optional(
            Type.Array(
              Type.Object({ runId: Uuid, robotId: Uuid, error: Type.String() }, { additionalProperties: false }),
              { description: 'Runs that could not be paused, resumed or aborted (207).' },
            ),
          ),
        },
        { additionalProperties: false, description: 'What happened to the runs in flight (pause, resume, abort actions).' },
      ),
    ),
    error: Type.Optional(Type.String({ description: 'On 207.' })),
    code: Type.Optional(ErrorBody.properties.code),
  },
  { additionalProperties: false },
));
export type ControlOperationResponse = Static<typeof ControlOperationResponse>;
