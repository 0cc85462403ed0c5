/**
 * `control-mission`, `get-runtime-status`, `GET /v1/mission-schedule` and `GET /v1/mission-runs`
 * schemas (spec: Mission run control; Agent API read tools; Schedules and runs (read); Limits).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { bodyProperties, type SurfaceField } from './command-fields.js';
import { Nullable, Uuid } from './common.js';
import { AckWaitProps, ActionArguments, DeliveryObject, SettingValues } from './control-robot.js';
import { CursorParam, LimitParam, Page, type ListLimit } from './list.js';
import { SCHEDULE_COMMAND_FIELDS, ScheduleKindSchema, ScheduledCommand, ScheduleStateSchema } from './mission-tools.js';
import { named } from './named.js';

export const ControlMissionBody = named('ControlMissionRequest', Type.Object(
  {
    org_id: Uuid,
    fleet_id: Uuid,
    robot_id: Uuid,
    mission_id: Uuid,
    run_id: Type.Optional(Uuid),
    action: Type.Unsafe<'pause' | 'resume' | 'cancel' | 'abort'>({ type: 'string', enum: ['pause', 'resume', 'cancel', 'abort'] }),
    ...AckWaitProps,
  },
  {
    additionalProperties: false,
    description:
      'One robot per call. Without run_id the robot\'s active run of mission_id is addressed (else its latest run of it). pause / cancel / abort to an ' +
      'offline robot: success with delivery `deferred` (sent on reconnect). resume to an offline robot: 503. Any action on a finished run (completed, ' +
      'failed, cancelled, aborted): 409. cancel and abort record the request on the run; the robot\'s later report gives the outcome.',
  },
));
export type ControlMissionBody = Static<typeof ControlMissionBody>;

export const ControlMissionResponse = named('ControlMissionResult', Type.Object(
  { success: Type.Boolean(), robotId: Uuid, missionId: Uuid, runId: Uuid, delivery: DeliveryObject },
  { additionalProperties: false, description: '`success` is false only when the agent rejected the command (delivery `agent_rejected`).' },
));
export type ControlMissionResponse = Static<typeof ControlMissionResponse>;

export const RuntimeStatusBody = named('RuntimeStatusRequest', Type.Object(
  { org_id: Uuid, fleet_id: Uuid, robot_id: Type.Optional(Uuid), schedule_id: Type.Optional(Uuid) },
  { additionalProperties: false, description: 'robot_id: the robot form; schedule_id: the schedule form; neither: the fleet rollup. Both: 400. Needs robots:read and operations:read.' },
));
export type RuntimeStatusBody = Static<typeof RuntimeStatusBody>;

const Candidate = named('CandidateRobot', Type.Object(
  { robot_id: Uuid, name: Type.String(), eligible: Type.Boolean(), reasons: Type.Array(Type.String(), { description: 'e.g. offline, busy:<runId>, not_on_roster, missing_capability:<c>, not_active, battery_low, reserved' }) },
  { additionalProperties: false },
));

export const LiveRun = named('LiveRun', Type.Object(
  {
    run_id: Uuid,
    mission_id: Uuid,
    schedule_id: Nullable(Uuid),
    robot_id: Uuid,
    state: Type.String({ description: 'The run\'s state (as `MissionRun.state`).' }),
    mission_progress_pct: Type.Number(),
    current_step_index: Type.Integer(),
    remaining_distance_m: Nullable(Type.Number()),
    estimated_time_remaining_s: Nullable(Type.Number()),
  },
  { additionalProperties: false, description: 'A run in flight; progress fields are named as on the robot form (docs/api-conventions.md).' },
));
export type LiveRunView = Static<typeof LiveRun>;

export const ScheduleStatusView = named('ScheduleRuntimeStatus', Type.Object(
  {
    kind: Type.Literal('schedule'),
    schedule_id: Uuid,
    status: ScheduleStateSchema,
    phase: Type.String({ description: 'idle (no open fire), selecting, sent (MissionStart awaiting the robot\'s ack), retry_wait, paused (its acting key may no longer act), or cancelled.' }),
    summary: Type.String(),
    next_fire_at_ms: Nullable(Type.Integer()),
    open_fire: Nullable(Type.Object({
      due_at_ms: Type.Integer(),
      attempt: Type.Integer(),
      attempt_deadline_ms: Nullable(Type.Integer()),
      retry_at_ms: Nullable(Type.Integer()),
      robot_id: Nullable(Uuid),
      run_id: Nullable(Uuid),
    }, { additionalProperties: false })),
    candidate_robots: Type.Array(Candidate),
    blocking_reasons: Type.Array(Type.String()),
    last_failure_reason: Nullable(Type.String()),
    last_failure_detail: Nullable(Type.String()),
    last_run: Type.Union([LiveRun, Type.Null()], { description: 'The latest run of the schedule (null before its first run).' }),
    correlation_id: Uuid,
  },
  { additionalProperties: false },
));
export type ScheduleRuntimeStatus = Static<typeof ScheduleStatusView>;

export const RobotStatusView = named('RobotRuntimeStatus', Type.Object(
  {
    kind: Type.Literal('robot'),
    robot_id: Uuid,
    name: Type.String(),
    online: Type.Boolean(),
    available: Type.Boolean({ description: 'Active, online and not running a mission.' }),
    assignment: Nullable(Type.Object({ run_id: Uuid, mission_id: Uuid, schedule_id: Nullable(Uuid) }, { additionalProperties: false })),
    mission_state: Nullable(Type.String()),
    mission_progress_pct: Nullable(Type.Number()),
    current_step_index: Nullable(Type.Integer()),
    remaining_distance_m: Nullable(Type.Number()),
    estimated_time_remaining_s: Nullable(Type.Number()),
  },
  { additionalProperties: false },
));
export type RobotRuntimeStatus = Static<typeof RobotStatusView>;

export const FleetRollupView = named('FleetRuntimeStatus', Type.Object(
  {
    kind: Type.Literal('fleet'),
    fleet_id: Uuid,
    operation: Nullable(Type.Object(
      {
        operation_id: Uuid,
        name: Type.String(),
        state: Type.String({ description: 'running, paused or stopped.' }),
        epoch: Type.Integer({ description: 'Bumped by reset and restart.' }),
        steps: Type.Array(
          Type.Object(
            { mission_id: Uuid, name: Type.String(), enabled: Type.Boolean(), priority: Type.Integer(), active_runs: Type.Integer({ description: 'Runs of it in flight now.' }) },
            { additionalProperties: false },
          ),
          { description: 'The operation\'s steps (its mission templates), highest priority first, then by mission_id.' },
        ),
      },
      { additionalProperties: false, description: 'The live operation; null before the fleet\'s first mission template.' },
    )),
    robots: Type.Object({ total: Type.Integer(), active: Type.Integer(), online: Type.Integer(), available: Type.Integer(), busy: Type.Integer() }, { additionalProperties: false }),
    schedules: Type.Object({ scheduled: Type.Integer(), pending: Type.Integer(), deployed: Type.Integer(), failed: Type.Integer(), cancelled: Type.Integer() }, { additionalProperties: false }),
    active_runs: Type.Array(LiveRun),
  },
  { additionalProperties: false },
));
export type FleetRuntimeStatus = Static<typeof FleetRollupView>;

export const RuntimeStatusResponse = named('RuntimeStatus', Type.Union([ScheduleStatusView, RobotStatusView, FleetRollupView]));
export type RuntimeStatus = Static<typeof RuntimeStatusResponse>;

export const SCHEDULES_LIMIT: ListLimit = { default: 50, max: 500 };

export const MissionScheduleQuery = Type.Object(
  {
    fleet_id: Uuid,
    id: Type.Optional(Uuid),
    limit: Type.Optional(LimitParam(SCHEDULES_LIMIT)),
    before: Type.Optional(CursorParam('The previous page\'s `next_cursor`, unchanged (bound to the fleet; numeric offsets are refused). Selects the paginated response.')),
  },
  { additionalProperties: false },
);
export type MissionScheduleQuery = Static<typeof MissionScheduleQuery>;

const TimeMs = (description: string) => Type.Integer({ minimum: 0, description: `${description} (Unix ms).` });

/** A stored schedule object: the request's `schedule` with its owner filled in. */
export const ScheduleSpecView = named('ScheduleSpec', Type.Object(
  {
    owner: Type.String({ description: 'The request\'s owner label, else the creating API key id.' }),
    timezone: Type.String({ description: 'IANA time zone name.' }),
    startTimeMs: TimeMs('No fire happens before it'),
    kind: ScheduleKindSchema,
  },
  { additionalProperties: false },
));

/** Fields a stored command schedule shows with their own schema (the rest: the declaration's). */
const VIEW_FIELD_SCHEMAS: Record<string, TSchema> = {
  mode: Type.String({ description: 'With `mode`.' }),
  reason: Type.String({ description: 'With `stop`, when given.' }),
  actionName: Type.String({ description: 'With `invoke_action`.' }),
  arguments: ActionArguments,
  settings: SettingValues,
};

/** The request fields a command schedule stores, as its view shows them (snake_case, in schedule-command's order). */
export const SCHEDULED_COMMAND_VIEW_FIELDS: readonly SurfaceField[] = SCHEDULE_COMMAND_FIELDS.map((f) => ({ ...f, schema: VIEW_FIELD_SCHEMAS[f.field] ?? f.schema }));

/** What a command schedule sends at each fire (`schedule-command` `command`, without its robots). */
export const ScheduledCommandView = named('ScheduledCommandSpec', Type.Object(
  { action: ScheduledCommand.properties.action, ...bodyProperties(SCHEDULED_COMMAND_VIEW_FIELDS, true) },
  { additionalProperties: false },
));

export const ScheduleRow = named('ScheduleRow', Type.Object(
  {
    scheduleId: Uuid,
    fleet_id: Uuid,
    kind: Type.Unsafe<'mission' | 'command'>({ type: 'string', enum: ['mission', 'command'], description: 'What fires: a mission template or a robot command.' }),
    template_mission_id: Nullable(Uuid),
    command: Nullable(ScheduledCommandView),
    robot_ids: Type.Array(Uuid, { description: 'Robots the schedule may use (mission: empty = any robot the roster allows); command: its targets.' }),
    schedule: Nullable(ScheduleSpecView),
    status: ScheduleStateSchema,
    last_failure_reason: Nullable(Type.String({ description: 'e.g. `deadline_passed`, `robot_rejected`, `robot_unresponsive`, `command_failed`, `missed`, `creator_key_invalid`.' })),
    last_failure_detail: Nullable(Type.String()),
    deployment_deadline_ms: Nullable(Type.Integer({ description: 'Deployment window of each fire, ms after its due time; null: none.' })),
    retry_limit: Type.Integer(),
    retry_interval_secs: Type.Integer(),
    next_fire_at_ms: Nullable(TimeMs('Next due fire; null when none is left')),
    paused_reason: Nullable(Type.String({ description: '`creator_key_invalid` while paused because the key it acts as may no longer act; else null.' })),
    acts_as_api_key_id: Uuid,
    fires_total: Type.Integer({ description: 'Occurrences that fell due (fired, skipped or missed).' }),
    skipped_fires: Type.Integer(),
    last_run_id: Nullable(Uuid),
    correlation_id: Uuid,
    created_at_ms: TimeMs('Created'),
    updated_at_ms: TimeMs('Last changed'),
  },
  { additionalProperties: false, description: 'One schedule (mission or command) as `GET /v1/mission-schedule` lists it.' },
));
export type ScheduleRow = Static<typeof ScheduleRow>;

export const ScheduleRowList = named('ScheduleRowList', Type.Array(ScheduleRow, { description: 'Newest first.' }));
export const ScheduleRowPage = named('ScheduleRowPage', Type.Object(
  {
    items: Type.Array(ScheduleRow, { description: 'Newest first.' }),
    next_cursor: Nullable(Type.String({ description: 'Pass as `before` for the next page; null on the last page.' })),
  },
  { additionalProperties: false },
));
export type ScheduleRowPage = Static<typeof ScheduleRowPage>;

/** `GET /v1/mission-schedule`: one row (`id`), the unpaged list, or a page (`limit`/`before`). */
export const MissionScheduleResponse = Type.Union([ScheduleRow, ScheduleRowList, ScheduleRowPage]);
export type MissionScheduleResponse = Static<typeof MissionScheduleResponse>;

/** The interface caps the page at 500 (larger values are served 500, not refused). */
export const RUNS_LIMIT: ListLimit = { default: 100, max: 500 };

export const MissionRunsQuery = Type.Object(
  {
    fleet_id: Uuid,
    days: Type.Integer({ minimum: 1, maximum: 3650, description: 'Runs started within the last `days` days.' }),
    schedule_id: Type.Optional(Uuid),
    robot_id: Type.Optional(Uuid),
    limit: Type.Optional(LimitParam(RUNS_LIMIT, 'cap')),
    cursor: Type.Optional(CursorParam()),
  },
  { additionalProperties: false },
);
export type MissionRunsQuery = Static<typeof MissionRunsQuery>;

export const RUN_STATES = ['starting', 'running', 'paused', 'completed', 'failed', 'cancelled', 'aborted'] as const;

export const MissionRun = named('MissionRun', Type.Object(
  {
    runId: Uuid,
    missionId: Uuid,
    scheduleId: Nullable(Uuid),
    robotId: Uuid,
    fleetId: Uuid,
    name: Type.String({ description: 'The template\'s name when the run started.' }),
    state: Type.Unsafe<(typeof RUN_STATES)[number]>({
      type: 'string',
      enum: [...RUN_STATES],
      description: '`starting` until the robot acknowledged MissionStart; `completed`, `failed`, `cancelled` and `aborted` are final.',
    }),
    missionProgressPct: Type.Number(),
    currentStepIndex: Type.Integer(),
    remainingDistanceM: Nullable(Type.Number()),
    estimatedTimeRemainingS: Nullable(Type.Number()),
    detail: Nullable(Type.String({ description: 'The robot\'s failure detail, or why a cancel or abort was requested.' })),
    cancelRequested: Nullable(Type.Unsafe<'cancel' | 'abort'>({ type: 'string', enum: ['cancel', 'abort'], description: 'A cancel or abort asked of the robot and not yet reported done.' })),
    correlationId: Uuid,
    startedAtMs: TimeMs('Started'),
    endedAtMs: Nullable(TimeMs('Ended; null while active')),
    lastReportAtMs: Nullable(TimeMs('Latest progress report of the robot')),
  },
  { additionalProperties: false, description: 'One robot\'s execution of a template. `scheduleId` names the schedule the run came from.' },
));
export type MissionRun = Static<typeof MissionRun>;

export const MissionRunList = Page('MissionRunPage', MissionRun, 'Newest first (by start time); every run of the window is reachable page by page.');
export type MissionRunList = Static<typeof MissionRunList>;
