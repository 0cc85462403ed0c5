/**
 * Mission-side records kept in LMDB: features, mission templates, the fleet operation, schedules,
 * their fires, mission runs and events. Shared by the catalog (features, templates, operation), the
 * scheduler and the run tracker, so every module reads and writes one shape. msgpack-safe only.
 */

/** GeoJSON Polygon or MultiPolygon (validated on input). */
export type Geometry =
  | { type: 'Polygon'; coordinates: number[][][] }
  | { type: 'MultiPolygon'; coordinates: number[][][][] };

/** A work area that templates and jobs refer to (`feature_id`). */
export interface FeatureRecord {
  featureId: string;
  orgId: string;
  fleetId: string;
  name: string;
  geometry: Geometry;
  locked: boolean;
  lockReason: string | null;
  /** Robots currently working in the area (claimed by their runs); `control-feature reset` clears them. */
  holders: string[];
  /**
   * Bumped by `control-feature reset`, `reset_step` and `reset_decomposers`: work split from the area
   * under an older epoch is void, robots re-decompose it from scratch on their next run.
   */
  decompositionEpoch: number;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface MissionStepRecord {
  /** Stable id of the step within the template (kept across edits). */
  stepId: string;
  /** e.g. "drive_to", "mow_area", "wait", "dock". */
  kind: string;
  config: Record<string, unknown>;
}

/** A mission template: one step of the fleet's operation. */
export interface TemplateRecord {
  missionId: string;
  orgId: string;
  fleetId: string;
  name: string;
  featureId: string | null;
  enabled: boolean;
  /** Capabilities a robot must advertise to take the template. */
  capabilities: string[];
  /** Robot ids allowed to take it; empty = every active robot of the fleet. */
  roster: string[];
  steps: MissionStepRecord[];
  parameters: Record<string, unknown>;
  /** Conditions checked before dispatch (e.g. minimum battery). */
  prerequisites: { minBatteryPct?: number; requiresDocked?: boolean };
  /** Higher runs first when several schedules compete for robots. */
  priority: number;
  createdAtMs: number;
  updatedAtMs: number;
  /** Increments on every change; the live operation reports the version it has adopted. */
  version: number;
}

export type OperationState = 'running' | 'paused' | 'stopped';

/** The fleet's one long-lived operation, created with the fleet's first template. */
export interface OperationRecord {
  operationId: string;
  orgId: string;
  fleetId: string;
  name: string;
  state: OperationState;
  /** Bumped by `reset` and `restart`: work of an older epoch is not resumed. */
  epoch: number;
  createdAtMs: number;
  updatedAtMs: number;
}

export type ScheduleStatus = 'scheduled' | 'pending' | 'deployed' | 'failed';

/** Recurrence, as the spec's schedule object. */
export type ScheduleKind = 'once' | { interval: { everySeconds: number } } | { cron: { expr: string } };

export interface ScheduleSpec {
  owner: string;
  timezone: string;
  startTimeMs: number;
  kind: ScheduleKind;
}

/** The command a command schedule sends at each fire (`schedule-command`'s `command` without its robots). */
export interface ScheduledCommandRecord {
  action: 'stop' | 'start' | 'release' | 'mode';
  /** For `mode`. */
  mode?: string;
  /** For `stop`. */
  reason?: string;
}

/** A registered mission run or command (spec: Schedule). */
export interface ScheduleRecord {
  scheduleId: string;
  orgId: string;
  fleetId: string;
  /** What fires: a mission template, or a non-mission command. */
  target: { type: 'mission'; missionId: string } | { type: 'command'; command: ScheduledCommandRecord };
  robotIds: string[];
  /** null: fire now (submit-job without schedule, deploy-mission). */
  schedule: ScheduleSpec | null;
  status: ScheduleStatus;
  lastFailureReason: string | null;
  lastFailureDetail: string | null;
  deploymentDeadlineMs: number | null;
  retryLimit: number;
  retryIntervalSecs: number;
  /** Next due fire, or null when none is left. */
  nextFireAtMs: number | null;
  cancelled: boolean;
  /** Shared by every event of this schedule's chain (accepted -> ... -> run done). */
  correlationId: string;
  /**
   * The API key the schedule acts as: its creator, or the key that re-bound it (edit-schedule
   * `rebind_to_caller`). Every fire's commands are sent, and audited, as this key, and only while it
   * may still act (acting-key.ts).
   */
  createdBy: { apiKeyId: string };
  /**
   * Set while the schedule is paused because its acting key may no longer act (`creator_key_invalid`):
   * no fire until it is re-bound. Absent on records written before this existed (= null).
   */
  pausedReason?: string | null;
  createdAtMs: number;
  updatedAtMs: number;
  /** Key (in `fires`) of the occurrence still being worked on, or null; at most one per schedule. */
  openFireKey: string | null;
  /** Occurrences that fell due (fired, skipped or missed). */
  firesTotal: number;
  /** Occurrences not worked on: one was still open, or they fell due while the gateway was down. */
  skippedFires: number;
  /** Run created by the latest deployed fire. */
  lastRunId: string | null;
}

/**
 * Phase of one due occurrence. `selecting`: looking for a robot; `sent`: MissionStart (or the
 * command) handed to the robot, waiting for its acknowledgement; `retry_wait`: an attempt failed and
 * another follows at `retryAtMs`; then `deployed` or `failed` (final), or `cancelled` with its schedule.
 */
export type FirePhase = 'selecting' | 'sent' | 'retry_wait' | 'deployed' | 'failed' | 'cancelled';

/** One due occurrence of a schedule (`fires` db, key `<scheduleId>/<dueAtMs 16 hex>`). */
export interface FireRecord {
  fireKey: string;
  scheduleId: string;
  orgId: string;
  fleetId: string;
  dueAtMs: number;
  /** When the fire was committed (lateness = firedAtMs - dueAtMs). */
  firedAtMs: number;
  phase: FirePhase;
  /** 0 for the first attempt; retries count up to the schedule's retryLimit. */
  attempt: number;
  /** End of the current attempt's deployment window (null: no deadline). */
  attemptDeadlineMs: number | null;
  retryAtMs: number | null;
  robotId: string | null;
  runId: string | null;
  commandIds: string[];
  failureReason: string | null;
  failureDetail: string | null;
  endedAtMs: number | null;
}

export type RunState = 'starting' | 'running' | 'paused' | 'completed' | 'failed' | 'cancelled' | 'aborted';

/** One robot's execution of a template (spec: Mission run). */
export interface RunRecord {
  runId: string;
  orgId: string;
  fleetId: string;
  missionId: string;
  scheduleId: string | null;
  robotId: string;
  state: RunState;
  progressPct: number;
  stepIndex: number;
  remainingDistanceM: number | null;
  etaS: number | null;
  /** Robot-reported failure detail, or why a cancel/abort was requested. */
  detail: string | null;
  cancelRequested: 'cancel' | 'abort' | null;
  correlationId: string;
  startedAtMs: number;
  endedAtMs: number | null;
  lastReportAtMs: number | null;
  /** The fire that created the run (null for runs not started by a schedule). */
  fireKey: string | null;
  /** MissionStart command id (its delivery state is in the command service). */
  startCommandId: string | null;
  name: string;
}

/** One entry of a fleet's correlated timeline (GET /v1/events). */
export interface EventRecord {
  eventId: string;
  fleetId: string;
  correlationId: string;
  /** Global append order (monotonic), so a timeline reads back in order. */
  seq: number;
  atMs: number;
  /** e.g. "schedule.accepted", "schedule.pending", "run.robot_chosen", "run.progress", "operation.paused", "robot.link_conflict". */
  kind: string;
  subject: { type: 'schedule' | 'run' | 'operation' | 'template' | 'feature' | 'command' | 'robot'; id: string };
  data: Record<string, unknown>;
}
