/**
 * The published views of mission runs and schedules (schemas/mission-runtime.ts MissionRun and
 * ScheduleRow), built from their LMDB records. Pure: the routes decide which records to show.
 */
import type { RunRecord, RunState } from '../missions/runs/records.js';
import type { ScheduledCommandRecord, ScheduleRecord } from '../missions/scheduling/records.js';
import { SCHEDULED_COMMAND_VIEW_FIELDS, type MissionRun, type RUN_STATES, type ScheduleRow } from './schemas/mission-runtime.js';
import type { ScheduleState } from './schemas/mission-tools.js';

// The published run states are exactly the stored ones: a state added to RunState fails to compile
// here until the schema lists it too.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const runStatesMatch: Same<RunState, (typeof RUN_STATES)[number]> = true;
void runStatesMatch;

/** A run as `GET /v1/mission-runs` lists it (active runs: pass the tracker's live record). */
export function toMissionRun(r: RunRecord): MissionRun {
  return {
    runId: r.runId,
    missionId: r.missionId,
    scheduleId: r.scheduleId,
    robotId: r.robotId,
    fleetId: r.fleetId,
    name: r.name,
    state: r.state,
    missionProgressPct: r.progressPct,
    currentStepIndex: r.stepIndex,
    remainingDistanceM: r.remainingDistanceM,
    estimatedTimeRemainingS: r.etaS,
    detail: r.detail,
    cancelRequested: r.cancelRequested,
    correlationId: r.correlationId,
    startedAtMs: r.startedAtMs,
    endedAtMs: r.endedAtMs,
    lastReportAtMs: r.lastReportAtMs,
  };
}

/**
 * The state a schedule shows: its latest fire's course (`scheduled` -> `pending` -> `deployed` |
 * `failed`). Cancellation is not a status: a cancelled schedule leaves the schedule reads
 * (docs/missions.md, Schedule states) and get-runtime-status tells it by its `phase`.
 */
export function scheduleState(s: Pick<ScheduleRecord, 'status'>): ScheduleState {
  return s.status;
}

/** A stored command schedule's command as its view shows it: the action and the fields it stores, in snake_case. */
function scheduledCommandView(c: ScheduledCommandRecord): ScheduleRow['command'] {
  const stored = c as Record<string, unknown>;
  const view: Record<string, unknown> = { action: c.action };
  for (const f of SCHEDULED_COMMAND_VIEW_FIELDS) if (stored[f.field] !== undefined) view[f.body] = stored[f.field];
  return view as ScheduleRow['command'];
}

/** A schedule as `GET /v1/mission-schedule` lists it (pass the scheduler's live view of the record). */
export function toScheduleRow(s: ScheduleRecord): ScheduleRow {
  const command = s.target.type === 'command' ? s.target.command : null;
  return {
    scheduleId: s.scheduleId,
    fleet_id: s.fleetId,
    kind: s.target.type,
    template_mission_id: s.target.type === 'mission' ? s.target.missionId : null,
    command: command === null
      ? null
      : scheduledCommandView(command),
    robot_ids: s.robotIds,
    schedule: s.schedule === null ? null : { owner: s.schedule.owner, timezone: s.schedule.timezone, startTimeMs: s.schedule.startTimeMs, kind: s.schedule.kind },
    status: scheduleState(s),
    last_failure_reason: s.lastFailureReason,
    last_failure_detail: s.lastFailureDetail,
    deployment_deadline_ms: s.deploymentDeadlineMs,
    retry_limit: s.retryLimit,
    retry_interval_secs: s.retryIntervalSecs,
    next_fire_at_ms: s.nextFireAtMs,
    paused_reason: s.pausedReason ?? null,
    acts_as_api_key_id: s.createdBy.apiKeyId,
    fires_total: s.firesTotal,
    skipped_fires: s.skippedFires,
    last_run_id: s.lastRunId,
    correlation_id: s.correlationId,
    created_at_ms: s.createdAtMs,
    updated_at_ms: s.updatedAtMs,
  };
}
