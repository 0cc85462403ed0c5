/**
 * Agent API mission tools (spec: Agent API, mission tools; Schedule; Conventions 2 and 3): request
 * and response schemas of submit-job, deploy-mission, schedule-mission, edit-schedule,
 * schedule-command, cancel-schedule and set-mission-priorities. Every body is strict.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { declarationOf } from '../../commands/catalog/index.js';
import { MAX_INTERVAL_S, MAX_TIME_MS, MIN_INTERVAL_S } from '../../missions/scheduling/recurrence.js';
import { SCHEDULABLE_ACTIONS, type SchedulableAction } from '../../missions/scheduling/command-fires.js';
import { FreeForm, Nullable, Uuid } from './common.js';
import { bodyProperties, fieldsOfAll, type SurfaceField } from './command-fields.js';
import { ActionArguments, ActionName, SettingValues } from './control-robot.js';
import { named } from './named.js';

export const MAX_ROBOT_IDS = 100;

export const ScheduleKindSchema = named('ScheduleKind', Type.Union(
  [
    Type.Literal('once', { description: 'Fire once at startTimeMs (at once when it has passed).' }),
    Type.Object(
      { interval: Type.Object({ everySeconds: Type.Integer({ minimum: MIN_INTERVAL_S, maximum: MAX_INTERVAL_S }) }, { additionalProperties: false }) },
      { additionalProperties: false, description: 'Every everySeconds of elapsed time from startTimeMs (daylight-saving changes do not move it).' },
    ),
    Type.Object(
      { cron: Type.Object({ expr: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false }) },
      {
        additionalProperties: false,
        description:
          'Five-field cron (minute hour day-of-month month day-of-week; lists, ranges, steps, JAN-DEC, SUN-SAT, @hourly/@daily/@weekly/@monthly/@yearly) ' +
          'evaluated in `timezone`, from startTimeMs. Daylight saving: a wall time inside a spring-forward gap fires once, shifted forward by the gap ' +
          '(02:30 -> 03:30); in a fall-back overlap a wall time fires once, at its first occurrence. When both day fields are restricted a day matches either.',
      },
    ),
  ],
  { description: 'Recurrence.' },
));

export const ScheduleObject = named('Schedule', Type.Object(
  {
    owner: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Free-form owner label; default: the calling API key id.' })),
    timezone: Type.String({ minLength: 1, maxLength: 64, description: 'IANA time zone name (e.g. Europe/Berlin); cron is evaluated in it.' }),
    startTimeMs: Type.Integer({
      minimum: 0,
      maximum: MAX_TIME_MS,
      description: `Epoch ms; no fire happens before it. At most ${MAX_TIME_MS} (9999-12-31T23:59:59.999Z); a recurrence has no occurrence after that instant.`,
    }),
    kind: ScheduleKindSchema,
  },
  { additionalProperties: false },
));
export type ScheduleObject = Static<typeof ScheduleObject>;

const RobotIds = Type.Array(Uuid, {
  maxItems: MAX_ROBOT_IDS,
  description:
    'Empty: any robot the template roster allows. One id: only that robot; it must be an active fleet member advertising every capability the template ' +
    'requires (404 / 400 otherwise). Several: only those robots; each must belong to the fleet (404 otherwise).',
});

const DeadlineMs = Type.Integer({
  minimum: 1,
  maximum: 7 * 86_400_000,
  description:
    'Deployment window of each fire, in ms after its due time: the scheduler looks for an eligible robot until then, and the attempt fails with ' +
    '`deadline_passed` (last_failure_detail says why no robot was eligible). Default 300000 (5 min) where optional.',
});

export const DeploymentOptions = {
  deployment_deadline_ms: Type.Optional(DeadlineMs),
  retry_limit: Type.Optional(Type.Integer({
    minimum: 0,
    maximum: 100,
    description:
      'How many times a failed attempt of a fire (deadline passed, robot rejected MissionStart, robot unresponsive) is retried, each with a fresh ' +
      'deployment window. Default 0. Applies to fires from the moment it is set (also the open one).',
  })),
  retry_interval_secs: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400, description: 'Wait between a failed attempt and its retry. Default 30.' })),
};

const Base = { org_id: Uuid, fleet_id: Uuid };

const StepIn = Type.Object(
  { kind: Type.String({ minLength: 1, maxLength: 64 }), config: Type.Optional(FreeForm()) },
  { additionalProperties: false },
);

export const SubmitJobBody = named('SubmitJobRequest', Type.Object(
  {
    ...Base,
    name: Type.String({ minLength: 1, maxLength: 200 }),
    feature_id: Uuid,
    capabilities: Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 64 }),
    robot_ids: RobotIds,
    schedule: Type.Optional(Nullable(ScheduleObject)),
    deployment_deadline_ms: DeadlineMs,
    retry_limit: DeploymentOptions.retry_limit,
    retry_interval_secs: DeploymentOptions.retry_interval_secs,
    steps: Type.Optional(Type.Array(StepIn, { minItems: 1, maxItems: 100, description: 'Steps of the created template; default one `mow_area` step over the feature.' })),
    parameters: Type.Optional(FreeForm()),
  },
  { additionalProperties: false },
));
export type SubmitJobBody = Static<typeof SubmitJobBody>;

export const DeployMissionBody = named('DeployMissionRequest', Type.Object({ ...Base, mission_id: Uuid, robot_ids: RobotIds, ...DeploymentOptions }, { additionalProperties: false }));
export type DeployMissionBody = Static<typeof DeployMissionBody>;

export const ScheduleMissionBody = named('ScheduleMissionRequest', Type.Object({ ...Base, mission_id: Uuid, robot_ids: RobotIds, schedule: ScheduleObject, ...DeploymentOptions }, { additionalProperties: false }));
export type ScheduleMissionBody = Static<typeof ScheduleMissionBody>;

export const EditScheduleBody = named('EditScheduleRequest', Type.Object(
  {
    ...Base,
    schedule_id: Uuid,
    robot_ids: Type.Optional(RobotIds),
    schedule: Type.Optional(Nullable(ScheduleObject)),
    ...DeploymentOptions,
    rebind_to_caller: Type.Optional(Type.Boolean({
      description:
        'true: the schedule acts as the calling API key from now on (its fires\' commands are sent and audited as it; the key needs what creating the ' +
        'schedule needs: missions:write, or operations:control and robots:write for a command schedule). Resumes a schedule paused with ' +
        '`creator_key_invalid` (its acting key was revoked, expired or lost a permission): from the new `schedule` when one is given, else from its ' +
        'next occurrence after now.',
    })),
  },
  {
    additionalProperties: false,
    description:
      'Omitted fields are kept. A new `schedule` (null: fire now) re-arms the schedule from now. The id never changes. A schedule paused with ' +
      '`creator_key_invalid` stays paused (no fire) until `rebind_to_caller` is true.',
  },
));
export type EditScheduleBody = Static<typeof EditScheduleBody>;

/** Fields published with their own schema on schedule-command (the rest: the declaration's). */
const OWN_FIELD_SCHEMAS: Record<string, TSchema> = {
  mode: Type.String({ minLength: 1, maxLength: 64, description: 'For `mode` (required): the mode to set.' }),
  reason: Type.String({ maxLength: 200, description: 'For `stop`.' }),
  actionName: ActionName,
  arguments: ActionArguments,
  settings: SettingValues,
};

/** Every command field schedule-command takes (of the schedulable commands' declarations), in its published order. */
export const SCHEDULE_COMMAND_FIELDS: readonly SurfaceField[] = fieldsOfAll(
  SCHEDULABLE_ACTIONS.map((a) => declarationOf(a)),
  OWN_FIELD_SCHEMAS,
  ['mode', 'reason', 'action_name', 'arguments', 'settings'],
);

export const ScheduledCommand = named('ScheduledCommand', Type.Object(
  {
    action: Type.Unsafe<SchedulableAction>({ type: 'string', enum: [...SCHEDULABLE_ACTIONS] }),
    robot_ids: Type.Array(Uuid, { minItems: 1, maxItems: MAX_ROBOT_IDS, description: 'Robots of the target fleet; exactly one for `force_reset`.' }),
    ...bodyProperties(SCHEDULE_COMMAND_FIELDS, true),
  },
  {
    additionalProperties: false,
    description:
      'The command sent at each fire, as control-robot would send it: `mode` needs `mode`; `invoke_action` needs `action_name` (optional `arguments`); ' +
      '`update_settings` needs `settings`; `stop` takes an optional `reason`; `force_reset` takes exactly one robot. A field of another action is 400.',
  },
));

export const ScheduleCommandBody = named('ScheduleCommandRequest', Type.Object(
  { ...Base, command: ScheduledCommand, schedule: Type.Optional(Nullable(ScheduleObject)), ...DeploymentOptions },
  {
    additionalProperties: false,
    description:
      'Needs `operations:control` and `robots:write`. At each fire the command is submitted to every robot with the checks of an immediate ' +
      'control-robot command: the robot must be active; stop is kept for an offline robot, every other action needs it online; mode, ' +
      'invoke_action and update_settings are checked against the policy the robot advertises at that moment (422 `policy_rejected` reasons). ' +
      'Robots that could not take it fail the attempt (`command_failed`, the reasons in `last_failure_detail`) and a retry submits to them only.',
  },
));
export type ScheduleCommandBody = Static<typeof ScheduleCommandBody>;

export const CancelScheduleBody = named('CancelScheduleRequest', Type.Object({ ...Base, schedule_id: Uuid }, { additionalProperties: false }));
export type CancelScheduleBody = Static<typeof CancelScheduleBody>;

export const SetPrioritiesBody = named('SetMissionPrioritiesRequest', Type.Object(
  {
    ...Base,
    priorities: Type.Array(
      Type.Object({ mission_id: Uuid, priority: Type.Integer({ minimum: -1000, maximum: 1000 }) }, { additionalProperties: false }),
      { minItems: 1, maxItems: 500 },
    ),
  },
  { additionalProperties: false, description: 'One batch: every mission_id must be a template of the fleet, or nothing changes (404). Higher priority is served first when fires compete for robots.' },
));
export type SetPrioritiesBody = Static<typeof SetPrioritiesBody>;

/**
 * A schedule's state as every read shows it (rows, runtime status, the rollup's buckets): exactly the
 * interface's set, the `scheduled` -> `pending` -> `deployed` | `failed` course of its latest fire. A
 * cancelled schedule leaves the schedule reads instead (docs/missions.md, Schedule states).
 */
export const SCHEDULE_STATES = ['scheduled', 'pending', 'deployed', 'failed'] as const;
export type ScheduleState = (typeof SCHEDULE_STATES)[number];
export const ScheduleStateSchema = named('ScheduleStatus', Type.Unsafe<ScheduleState>({
  type: 'string',
  enum: [...SCHEDULE_STATES],
  description: '`scheduled` (accepted, no fire yet), `pending` (a fire is looking for or waiting on a robot), `deployed` or `failed` (outcome of the latest fire). A cancelled schedule is not listed.',
}));

export const ScheduleAccepted = named('ScheduleAccepted', Type.Object(
  {
    missionId: Nullable(Uuid),
    scheduleId: Uuid,
    status: ScheduleStateSchema,
    detail: Type.String(),
    correlationId: Type.String({ format: 'uuid', description: 'Shared by every event of this schedule\'s chain: GET /v1/events?fleet_id=…&correlation_id=….' }),
    runtimeSync: Type.Optional(Type.Unsafe<'applied' | 'pending'>({ type: 'string', enum: ['applied', 'pending'] })),
    runtimeSyncError: Type.Optional(Type.String()),
  },
  { additionalProperties: false },
));
export type ScheduleAccepted = Static<typeof ScheduleAccepted>;

export const CancelScheduleResponse = named('CancelScheduleResult', Type.Object(
  { scheduleId: Uuid, status: Type.Literal('cancelled'), detail: Type.String() },
  { additionalProperties: false },
));
export type CancelScheduleResponse = Static<typeof CancelScheduleResponse>;

export const SetPrioritiesResponse = named('SetMissionPrioritiesResult', Type.Object(
  { success: Type.Literal(true), items: Type.Array(Type.Object({ missionId: Uuid, priority: Type.Integer() }, { additionalProperties: false })) },
  { additionalProperties: false },
));
export type SetPrioritiesResponse = Static<typeof SetPrioritiesResponse>;
