/**
 * `control-mission`, `get-runtime-status`, `GET /v1/mission-schedule` and `GET /v1/mission-runs`
 * schemas (spec: Mission run control; Agent API read tools; Schedules and runs (read); Limits).
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Uuid } from './common.js';
import { AckWaitProps, DeliveryObject } from './control-robot.js';

export const ControlMissionBody = Type.Object(
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
);
export type ControlMissionBody = Static<typeof ControlMissionBody>;

export const ControlMissionResponse = Type.Object(
  { success: Type.Boolean(), robotId: Uuid, missionId: Uuid, runId: Uuid, delivery: DeliveryObject },
  { additionalProperties: false, description: '`success` is false only when the agent rejected the command (delivery `agent_rejected`).' },
);
export type ControlMissionResponse = Static<typeof ControlMissionResponse>;

export const RuntimeStatusBody = Type.Object(
  { org_id: Uuid, fleet_id: Uuid, robot_id: Type.Optional(Uuid), schedule_id: Type.Optional(Uuid) },
  { additionalProperties: false, description: 'robot_id: the robot form; schedule_id: the schedule form; neither: the fleet rollup. Both: 400. Needs robots:read and operations:read.' },
);
export type RuntimeStatusBody = Static<typeof RuntimeStatusBody>;

const Candidate = Type.Object(
  { robot_id: Uuid, name: Type.String(), eligible: Type.Boolean(), reasons: Type.Array(Type.String(), { description: 'e.g. offline, busy:<runId>, not_on_roster, missing_capability:<c>, not_active, battery_low, reserved' }) },
  { additionalProperties: false },
);

const LiveRun = Type.Object(
  {
    run_id: Uuid,
    mission_id: Uuid,
    schedule_id: Nullable(Uuid),
    robot_id: Uuid,
    state: Type.String(),
    progress_pct: Type.Number(),
    step_index: Type.Integer(),
    remaining_distance_m: Nullable(Type.Number()),
    eta_s: Nullable(Type.Number()),
  },
  { additionalProperties: false },
);

export const ScheduleStatusView = Type.Object(
  {
    kind: Type.Literal('schedule'),
    schedule_id: Uuid,
    status: Type.String({ description: 'scheduled | pending | deployed | failed' }),
    cancelled: Type.Boolean(),
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
    last_run: Nullable(LiveRun),
    correlation_id: Uuid,
  },
  { additionalProperties: false },
);

export const RobotStatusView = Type.Object(
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
);

export const FleetRollupView = Type.Object(
  {
    kind: Type.Literal('fleet'),
    fleet_id: Uuid,
    operation: Nullable(Type.Object({ operation_id: Uuid, name: Type.String(), state: Type.String() }, { additionalProperties: false })),
    robots: Type.Object({ total: Type.Integer(), active: Type.Integer(), online: Type.Integer(), available: Type.Integer(), busy: Type.Integer() }, { additionalProperties: false }),
    schedules: Type.Object({ scheduled: Type.Integer(), pending: Type.Integer(), deployed: Type.Integer(), failed: Type.Integer(), cancelled: Type.Integer() }, { additionalProperties: false }),
    active_runs: Type.Array(LiveRun),
  },
  { additionalProperties: false },
);

export const RuntimeStatusResponse = Type.Union([ScheduleStatusView, RobotStatusView, FleetRollupView]);

export const MissionScheduleQuery = Type.Object(
  {
    fleet_id: Uuid,
    id: Type.Optional(Uuid),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, description: 'Page size (default 50). Selects the paginated response.' })),
    before: Type.Optional(Type.String({ minLength: 1, maxLength: 512, description: 'next_cursor of the previous page. Selects the paginated response.' })),
  },
  { additionalProperties: false },
);
export type MissionScheduleQuery = Static<typeof MissionScheduleQuery>;

export const ScheduleRow = Type.Object({}, {
  additionalProperties: true,
  description:
    'scheduleId, fleet_id, kind (mission | command), template_mission_id, command, robot_ids, schedule, status, last_failure_reason, ' +
    'last_failure_detail, deployment_deadline_ms, retry_limit, retry_interval_secs, next_fire_at_ms, cancelled, paused_reason (creator_key_invalid while ' +
    'paused, else null), acts_as_api_key_id (the key the schedule acts as), fires_total, skipped_fires, ' +
    'last_run_id, correlation_id, created_at_ms, updated_at_ms.',
});

export const MissionRunsQuery = Type.Object(
  {
    fleet_id: Uuid,
    days: Type.Integer({ minimum: 1, maximum: 3650, description: 'Runs started within the last `days` days.' }),
    schedule_id: Type.Optional(Uuid),
    robot_id: Type.Optional(Uuid),
    limit: Type.Optional(Type.Integer({ minimum: 1, description: 'Default 100; values above 500 are capped at 500.' })),
  },
  { additionalProperties: false },
);
export type MissionRunsQuery = Static<typeof MissionRunsQuery>;

export const RunItem = Type.Object({}, {
  additionalProperties: true,
  description:
    'runId, missionId, scheduleId (runs from a schedule), robotId, fleetId, name, state (starting, running, paused, completed, failed, cancelled, ' +
    'aborted), progressPct, stepIndex, remainingDistanceM, etaS, detail, cancelRequested, correlationId, startedAtMs, endedAtMs, lastReportAtMs.',
});
