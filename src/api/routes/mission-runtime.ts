/**
 * Live mission routes: `control-mission` (one robot's run), `get-runtime-status` (schedule, robot or
 * fleet rollup), and the reads `GET /v1/mission-schedule` and `GET /v1/mission-runs`.
 */
import { requesterOfCaller } from '../../commands/requester.js';
import { requireFleet, requireOrg, requirePermission } from '../../auth/access.js';
import { apiError } from '../../errors/catalog.js';
import { defineRoute } from '../define-route.js';
import type { ContextFor } from '../define-route.js';
import type { RouteDef } from '../route.js';
import type { RunRecord } from '../../missions/runs/records.js';
import type { ScheduleRecord } from '../../missions/scheduling/records.js';
import { listTemplates } from '../../missions/catalog/templates.js';
import { controlRun } from '../../missions/runs/run-control.js';
import { runsOf, type RunQuery } from '../../missions/runs/runs.js';
import { CREATOR_KEY_INVALID } from '../../missions/scheduling/acting-key.js';
import { activeSchedulesOf, countFleetSchedules, fireRecord, requireSchedule, schedulesOf } from '../../missions/scheduling/schedules.js';
import type { MissionScheduling } from '../../missions/scheduling/scheduling-service.js';
import type { RobotLink } from '../../protocol/robot-link.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import type { CatalogReads } from '../../missions/catalog/catalog-reads.js';
import { ackWaitMs, publicDelivery } from '../command-dispatch.js';
import { SMALL_BODY_MAX_BYTES } from '../schemas/control-robot.js';
import { defineList } from '../list-reader.js';
import {
  ControlMissionBody,
  ControlMissionResponse,
  MissionRunList,
  MissionRunsQuery,
  MissionScheduleQuery,
  MissionScheduleResponse,
  RUNS_LIMIT,
  RuntimeStatusBody,
  SCHEDULES_LIMIT,
  type MissionRun,
  RuntimeStatusResponse,
  type FleetRuntimeStatus,
  type LiveRunView,
  type RobotRuntimeStatus,
  type RuntimeStatus,
  type ScheduleRow,
  type ScheduleRuntimeStatus,
} from '../schemas/mission-runtime.js';
import { scheduleState, toMissionRun, toScheduleRow } from '../mission-views.js';

export interface MissionRuntimeDeps {
  store: Store;
  /** Fleet and robot records for the access checks (the registry's). */
  identity: IdentityReads;
  /** Each fleet's operation (the catalog's). */
  catalog: Pick<CatalogReads, 'operation'>;
  missions: MissionScheduling;
  link: Pick<RobotLink, 'isOnline'>;
}

/** Largest unpaged `GET /v1/mission-schedule` list (newest first); page with `limit`/`before` for more. */
export const MAX_UNPAGED_SCHEDULES = 1000;
const DAY_MS = 86_400_000;

function liveRun(r: RunRecord): LiveRunView {
  return {
    run_id: r.runId,
    mission_id: r.missionId,
    schedule_id: r.scheduleId,
    robot_id: r.robotId,
    state: r.state,
    mission_progress_pct: r.progressPct,
    current_step_index: r.stepIndex,
    remaining_distance_m: r.remainingDistanceM,
    estimated_time_remaining_s: r.etaS,
  };
}

/** The routes. */
export function missionRuntimeRoutes(deps: MissionRuntimeDeps): RouteDef[] {
  const { store, identity, missions, link } = deps;

  const scheduleList = defineList<MissionScheduleQuery, ScheduleRecord, ScheduleRow>({
    kind: 'mission-schedule',
    limit: SCHEDULES_LIMIT,
    cursorParam: 'before',
    filters: () => ({}),
    // A cancelled schedule leaves the list (its state is not one of the interface's statuses); its
    // events timeline and get-runtime-status still answer for it.
    source: (fleet) => schedulesOf(store, fleet.fleetId, (s) => !s.cancelled),
    view: (s) => toScheduleRow(missions.scheduler.liveView(s)),
  });

  const runQuery = (fleetId: string, q: MissionRunsQuery): RunQuery => ({
    fleetId,
    sinceMs: Math.max(0, missions.clock.now() - q.days * DAY_MS),
    ...(q.schedule_id !== undefined ? { scheduleId: q.schedule_id } : {}),
    ...(q.robot_id !== undefined ? { robotId: q.robot_id } : {}),
  });
  const runFilters = (q: MissionRunsQuery) => ({ days: q.days, schedule_id: q.schedule_id, robot_id: q.robot_id });
  // Every run of the window, active and finished: `fleet:read` reads them all (history:read gates
  // only the Agent API's mission_history kind).
  const runList = defineList<MissionRunsQuery, RunRecord, MissionRun>({
    kind: 'mission-runs',
    limit: RUNS_LIMIT,
    filters: runFilters,
    source: (fleet, q) => runsOf(store, runQuery(fleet.fleetId, q)),
    // Active runs carry their live (in-memory) progress.
    view: (r) => toMissionRun(missions.tracker.get(r.runId) ?? r),
  });

  async function controlMission(ctx: ContextFor<undefined, undefined, typeof ControlMissionBody>): Promise<{ status: 200; body: ControlMissionResponse }> {
    const { body, auth } = ctx;
    requireOrg(auth, body.org_id);
    const fleet = requireFleet(identity, auth, body.fleet_id);
    const robot = identity.robot(body.robot_id);
    if (!robot || robot.fleetId !== fleet.fleetId) throw apiError('robot_not_found', { robotId: body.robot_id });
    let waitMs = ackWaitMs(body);
    if (waitMs !== null && missions.opts.commands.waiterRoom() < 1) {
      // A pause is still sent when no ack wait fits (answered without waiting); the rest are refused.
      if (body.action !== 'pause') throw apiError('ack_waiters_full');
      waitMs = null;
    }
    const { run, submitted } = controlRun(store, missions.tracker, missions.opts.commands, link, {
      fleetId: fleet.fleetId,
      orgId: fleet.orgId,
      robotId: body.robot_id,
      missionId: body.mission_id,
      ...(body.run_id !== undefined ? { runId: body.run_id } : {}),
      verb: body.action,
      requestedBy: requesterOfCaller(auth),
    });
    const delivery = waitMs === null ? submitted.delivery : await missions.opts.commands.waitForAck(submitted.commandId, waitMs, ctx.aborted);
    // Whatever the answer says (an ack too), the command must exist after a crash: src/commands/service.ts.
    await submitted.persisted;
    const out: ControlMissionResponse = {
      success: delivery.state !== 'agent_rejected',
      robotId: body.robot_id,
      missionId: run.missionId,
      runId: run.runId,
      delivery: publicDelivery(delivery),
    };
    return { status: 200, body: out };
  }

  function scheduleStatus(s: ScheduleRecord): ScheduleRuntimeStatus {
    const fire = missions.dispatcher.openFire(s.openFireKey) ?? (s.openFireKey !== null ? fireRecord(store, s.openFireKey) : undefined);
    const sel = !s.cancelled && s.target.type === 'mission' ? missions.dispatcher.explain(s) : null;
    const lastRun = s.lastRunId !== null ? missions.tracker.get(s.lastRunId) : fire?.runId ? missions.tracker.get(fire.runId) : undefined;
    const paused = !s.cancelled && (s.pausedReason ?? null) !== null;
    const phase = s.cancelled ? 'cancelled' : fire ? fire.phase : paused ? 'paused' : 'idle';
    const summary = s.cancelled
      ? 'Cancelled; no further fires.'
      : phase === 'paused' ? `Paused: ${s.lastFailureDetail ?? ''}. edit-schedule with rebind_to_caller resumes it.`
      : phase === 'selecting'
        ? sel && sel.blocking.length > 0 ? `Looking for a robot; blocked: ${sel.blocking.join('; ')}.` : 'Looking for a robot.'
        : phase === 'sent' ? `MissionStart sent to robot ${fire?.robotId ?? ''}; waiting for its acknowledgement.`
          : phase === 'retry_wait' ? `Attempt failed (${s.lastFailureReason ?? ''}); retry at ${new Date(fire?.retryAtMs ?? 0).toISOString()}.`
            : s.nextFireAtMs !== null ? `Idle (${s.status}); next fire at ${new Date(s.nextFireAtMs).toISOString()}.` : `Idle (${s.status}); no further fire.`;
    return {
      kind: 'schedule',
      schedule_id: s.scheduleId,
      status: scheduleState(s),
      phase,
      summary,
      next_fire_at_ms: s.nextFireAtMs,
      open_fire: fire
        ? { due_at_ms: fire.dueAtMs, attempt: fire.attempt, attempt_deadline_ms: fire.attemptDeadlineMs, retry_at_ms: fire.retryAtMs, robot_id: fire.robotId, run_id: fire.runId }
        : null,
      candidate_robots: (sel?.candidates ?? []).map((c) => ({ robot_id: c.robotId, name: c.name, eligible: c.eligible, reasons: c.reasons })),
      blocking_reasons: paused ? [CREATOR_KEY_INVALID] : sel?.blocking ?? [],
      last_failure_reason: s.lastFailureReason,
      last_failure_detail: s.lastFailureDetail,
      last_run: lastRun ? liveRun(lastRun) : null,
      correlation_id: s.correlationId,
    };
  }

  function robotStatus(robotId: string, fleetId: string): RobotRuntimeStatus {
    const r = identity.cachedRobot(robotId);
    if (!r || r.fleetId !== fleetId) throw apiError('robot_not_found', { robotId });
    const online = link.isOnline(robotId);
    const run = missions.tracker.activeRunOf(robotId);
    return {
      kind: 'robot',
      robot_id: robotId,
      name: r.name,
      online,
      available: r.active && online && !run,
      assignment: run ? { run_id: run.runId, mission_id: run.missionId, schedule_id: run.scheduleId } : null,
      mission_state: run?.state ?? null,
      mission_progress_pct: run?.progressPct ?? null,
      current_step_index: run?.stepIndex ?? null,
      remaining_distance_m: run?.remainingDistanceM ?? null,
      estimated_time_remaining_s: run?.etaS ?? null,
    };
  }

  function fleetRollup(fleetId: string): FleetRuntimeStatus {
    const robots = { total: 0, active: 0, online: 0, available: 0, busy: 0 };
    for (const id of identity.fleetRobotIds(fleetId)) {
      const r = identity.cachedRobot(id);
      if (!r || r.fleetId !== fleetId) continue;
      const online = link.isOnline(id);
      const busy = missions.tracker.activeRunOf(id) !== undefined;
      robots.total++;
      if (r.active) robots.active++;
      if (online) robots.online++;
      if (busy) robots.busy++;
      if (r.active && online && !busy) robots.available++;
    }
    // Only live schedules are decoded (the `activeSchedules` index); cancelled ones are counted by
    // key, so a fleet's long history costs a key count, not a read per schedule ever created.
    const schedules = { scheduled: 0, pending: 0, deployed: 0, failed: 0, cancelled: 0 };
    let active = 0;
    for (const s of activeSchedulesOf(store, fleetId)) {
      active++;
      schedules[s.status]++;
    }
    schedules.cancelled = Math.max(0, countFleetSchedules(store, fleetId) - active);
    const op = deps.catalog.operation(fleetId);
    const activeRuns = missions.tracker.activeRunsOfFleet(fleetId);
    const runsOf = new Map<string, number>();
    for (const r of activeRuns) runsOf.set(r.missionId, (runsOf.get(r.missionId) ?? 0) + 1);
    const steps = op
      ? listTemplates(store, fleetId)
          .sort((a, b) => b.priority - a.priority || (a.missionId < b.missionId ? -1 : 1))
          .map((t) => ({ mission_id: t.missionId, name: t.name, enabled: t.enabled, priority: t.priority, active_runs: runsOf.get(t.missionId) ?? 0 }))
      : [];
    return {
      kind: 'fleet',
      fleet_id: fleetId,
      operation: op ? { operation_id: op.operationId, name: op.name, state: op.state, epoch: op.epoch, steps } : null,
      robots,
      schedules,
      active_runs: activeRuns.map(liveRun),
    };
  }

  function runtimeStatus(ctx: ContextFor<undefined, undefined, typeof RuntimeStatusBody>): { status: 200; body: RuntimeStatus } {
    const { body, auth } = ctx;
    requirePermission(auth, 'operations:read');
    requireOrg(auth, body.org_id);
    const fleet = requireFleet(identity, auth, body.fleet_id);
    if (body.robot_id !== undefined && body.schedule_id !== undefined) throw apiError('invalid_body', { detail: 'give robot_id or schedule_id, not both' });
    if (body.schedule_id !== undefined) return { status: 200, body: scheduleStatus(missions.scheduler.liveView(requireSchedule(store, fleet.fleetId, body.schedule_id))) };
    if (body.robot_id !== undefined) return { status: 200, body: robotStatus(body.robot_id, fleet.fleetId) };
    return { status: 200, body: fleetRollup(fleet.fleetId) };
  }

  function readSchedules(ctx: ContextFor<undefined, typeof MissionScheduleQuery, undefined>): { status: 200; body: MissionScheduleResponse } {
    const { query, auth } = ctx;
    if (query.id !== undefined) {
      const fleet = requireFleet(identity, auth, query.fleet_id);
      const s = requireSchedule(store, fleet.fleetId, query.id);
      if (s.cancelled) throw apiError('schedule_not_found', { scheduleId: query.id });
      return { status: 200, body: toScheduleRow(missions.scheduler.liveView(s)) };
    }
    // Without limit/before the interface fixes a plain array (bounded); either selects the page.
    if (query.limit === undefined && query.before === undefined) {
      return { status: 200, body: scheduleList.read(identity, auth, query, { limit: MAX_UNPAGED_SCHEDULES }).items };
    }
    return { status: 200, body: scheduleList.read(identity, auth, query) };
  }

  function readRuns(ctx: ContextFor<undefined, typeof MissionRunsQuery, undefined>): { status: 200; body: MissionRunList } {
    return { status: 200, body: runList.read(identity, ctx.auth, ctx.query) };
  }

  const fleetErrors = ['forbidden_org', 'fleet_not_found', 'forbidden_fleet'] as const;
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/agent/control-mission',
      // cancel and abort end a run; a repeat is a second robot command.
      effect: { changes: 'destructive', idempotent: false },
      operationId: 'controlMission',
      summary: 'Pause, resume, cancel or abort one robot\'s mission run.',
      tags: ['Agent API', 'Mission runs'],
      auth: 'missions:write',
      body: ControlMissionBody,
      maxBodyBytes: SMALL_BODY_MAX_BYTES,
      urgent: (b) => b.action === 'pause',
      responses: { 200: { description: 'Command submitted (see delivery).', schema: ControlMissionResponse } },
      errors: [...fleetErrors, 'robot_not_found', 'run_not_found', 'run_finished', 'robot_offline', 'robot_link_conflict', 'ack_wait_conflict', 'ack_waiters_full', 'outbox_full'],
    }).handle(controlMission),
    defineRoute({
      method: 'POST',
      path: '/v1/agent/get-runtime-status',
      effect: 'read',
      operationId: 'getRuntimeStatus',
      summary: 'Live status: a schedule (phase, candidate robots, blocking reasons), a robot (live run), or the fleet rollup.',
      tags: ['Agent API', 'Mission runs'],
      auth: 'robots:read',
      body: RuntimeStatusBody,
      maxBodyBytes: SMALL_BODY_MAX_BYTES,
      responses: { 200: { description: 'One of the three forms, told apart by `kind`.', schema: RuntimeStatusResponse } },
      errors: [...fleetErrors, 'forbidden_permission', 'schedule_not_found', 'robot_not_found', 'invalid_body'],
    }).handle(runtimeStatus),
    defineRoute({
      method: 'GET',
      path: '/v1/mission-schedule',
      operationId: 'listMissionSchedule',
      summary: 'Schedules of a fleet (mission and command), newest first; one by `id`; `limit`/`before` page it. A cancelled schedule is not listed (404 by `id`); its events timeline keeps it (GET /v1/events with its correlation_id).',
      tags: ['Schedules'],
      auth: 'missions:read',
      query: MissionScheduleQuery,
      responses: {
        200: {
          description: `With id: one row. Without limit/before: an array of at most ${MAX_UNPAGED_SCHEDULES} rows. With either: {items, next_cursor}.`,
          schema: MissionScheduleResponse,
        },
      },
      errors: ['fleet_not_found', 'forbidden_fleet', 'schedule_not_found', 'cursor_invalid'],
    }).handle(readSchedules),
    defineRoute({
      method: 'GET',
      path: '/v1/mission-runs',
      operationId: 'listMissionRuns',
      summary: 'Mission runs of a fleet started in the last `days` days, newest first, in keyset pages. Active and finished runs alike (`fleet:read`).',
      tags: ['Mission runs'],
      auth: 'fleet:read',
      query: MissionRunsQuery,
      responses: { 200: { description: 'One page of runs, newest first (limit capped at 500); follow next_cursor for the rest of the window.', schema: MissionRunList } },
      errors: ['fleet_not_found', 'forbidden_fleet', 'cursor_invalid'],
    }).handle(readRuns),
  ];
}
