/**
 * Agent API mission tools: submit-job, deploy-mission, schedule-mission, edit-schedule,
 * schedule-command, cancel-schedule, set-mission-priorities. Each registers or changes a schedule
 * (committed to LMDB before the answer) that the gateway's scheduler then fires; the answer's
 * `correlationId` follows the whole chain on GET /v1/events.
 */
import type { IdempotencyClaims } from '../../idempotency/index.js';
import type { EventLog } from '../../events/index.js';
import { requireFleet, requireOrg, requirePermission } from '../../auth/access.js';
import { apiError } from '../../errors/catalog.js';
import { defineRoute, type ContextFor } from '../define-route.js';
import type { AuthContext, RouteContext, RouteDef } from '../route.js';
import { withIdempotency, type IdempotentCommit } from '../../idempotency/index.js';
import type { ScheduledCommandRecord, ScheduleRecord, ScheduleSpec } from '../../missions/scheduling/records.js';
import { SYNC_UNCONFIRMED, type OperationRuntime, type SyncResult } from '../../missions/catalog/runtime.js';
import { DEFAULT_DEPLOYMENT_DEADLINE_MS, DEFAULT_RETRY_INTERVAL_SECS, requireSchedule, type NewSchedule } from '../../missions/scheduling/schedules.js';
import type { MissionScheduling } from '../../missions/scheduling/scheduling-service.js';
import { requireRebindPermissions } from '../../missions/scheduling/acting-key.js';
import { faultPoint } from '../../missions/fault-points.js';
import { commitJob } from '../../missions/scheduling/jobs.js';
import { newTemplateRecord, requireTemplate } from '../../missions/catalog/templates.js';
import { validateSchedule } from '../../missions/scheduling/recurrence.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import type { CatalogReads } from '../../missions/catalog/catalog-reads.js';
import type { CatalogWrites } from '../../missions/catalog/catalog-writes.js';
import type { FleetRecord } from '../../store/records.js';
import {
  CancelScheduleBody,
  CancelScheduleResponse,
  DeployMissionBody,
  EditScheduleBody,
  ScheduleAccepted,
  SCHEDULE_COMMAND_FIELDS,
  ScheduleCommandBody,
  ScheduleMissionBody,
  SetPrioritiesBody,
  SetPrioritiesResponse,
  SubmitJobBody,
  type ScheduleObject,
} from '../schemas/mission-tools.js';
import { KIB } from '../schemas/body-bounds.js';
import { fieldValues } from '../schemas/command-fields.js';
import { bodyName, declarationOf } from '../../commands/catalog/index.js';
import { CONTROL_ROBOT_MAX_BODY_BYTES, SMALL_BODY_MAX_BYTES } from '../schemas/control-robot.js';

export interface MissionToolDeps {
  store: Store;
  /** Fleet and robot records for the access checks (the registry's). */
  identity: IdentityReads;
  /** Templates (the catalog's). */
  catalog: Pick<CatalogReads, 'template'>;
  /** A job's template, stored by the catalog in the job's transaction. */
  catalogWrites: Pick<CatalogWrites, 'putNewTemplateInTxn'>;
  events: EventLog;
  idempotency: IdempotencyClaims;
  missions: MissionScheduling;
  /** The live operation; submit-job waits for it to adopt the new template (202 when it has not). */
  runtime?: OperationRuntime;
}

/** A request's schedule object as stored, validated. @throws ApiError `invalid_schedule` */
export function toSpec(o: ScheduleObject | null | undefined, auth: AuthContext): ScheduleSpec | null {
  if (o === null || o === undefined) return null;
  const spec: ScheduleSpec = { owner: o.owner ?? auth.apiKeyId, timezone: o.timezone, startTimeMs: o.startTimeMs, kind: o.kind };
  const why = validateSchedule(spec);
  if (why !== null) throw apiError('invalid_schedule', { detail: why });
  return spec;
}

/**
 * The spec's `robot_ids` rules: one id must be an active fleet member advertising every required
 * capability; several ids must each belong to the fleet. Returns the ids without duplicates.
 */
export function checkRobotIds(deps: MissionToolDeps, fleetId: string, ids: readonly string[], capabilities: readonly string[]): string[] {
  const unique = [...new Set(ids)];
  if (unique.length === 1) {
    const robotId = unique[0]!;
    const r = deps.identity.robot(robotId);
    if (!r || r.fleetId !== fleetId || !r.active) throw apiError('robot_not_active_member', { robotId });
    const have = new Set([...r.capabilities, ...deps.missions.tracker.advertisedCapabilities(robotId)]);
    const missing = capabilities.find((c) => !have.has(c));
    if (missing !== undefined) throw apiError('robot_missing_capability', { robotId, capability: missing });
    return unique;
  }
  for (const robotId of unique) {
    const r = deps.identity.robot(robotId);
    if (!r || r.fleetId !== fleetId) throw apiError('robot_not_found', { robotId });
  }
  return unique;
}

function fleetOf(deps: MissionToolDeps, auth: AuthContext, body: { org_id: string; fleet_id: string }): FleetRecord {
  requireOrg(auth, body.org_id);
  return requireFleet(deps.identity, auth, body.fleet_id);
}

function accepted(s: ScheduleRecord, what: string): ScheduleAccepted {
  const when = s.nextFireAtMs === null ? 'no further fire' : `first fire at ${new Date(s.nextFireAtMs).toISOString()}`;
  return {
    missionId: s.target.type === 'mission' ? s.target.missionId : null,
    scheduleId: s.scheduleId,
    status: s.status,
    detail: `${what}; ${when}. Follow it with GET /v1/events?fleet_id=${s.fleetId}&correlation_id=${s.correlationId}.`,
    correlationId: s.correlationId,
  };
}

/** A mission tool's answer: a status and the accepted schedule. */
type Reply<S extends number = number> = { status: S; body: ScheduleAccepted };

const MISSION_ERRORS = ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'invalid_schedule', 'robot_not_active_member', 'robot_missing_capability', 'robot_not_found', 'schedule_limit'] as const;

/** The mission tool routes. */
export function missionToolRoutes(deps: MissionToolDeps): RouteDef[] {
  const { store, events, idempotency, missions } = deps;
  const tags = ['Agent API', 'Schedules'];
  const idem = <R extends Reply>(ctx: RouteContext<unknown, unknown, unknown>, fleet: FleetRecord, endpoint: string, run: (commit: IdempotentCommit<R>) => Promise<R>): Promise<R> =>
    withIdempotency(idempotency, { actor: ctx.auth.apiKeyId, orgId: fleet.orgId, fleetId: fleet.fleetId, endpoint }, ctx.idempotencyKey, ctx.body, run, missions.opts.log ? { log: missions.opts.log } : {});
  /**
   * Commits a new schedule with the tool's answer in ONE write transaction: the answer is built
   * before anything is written, so an error building it writes nothing, and once the commit is done
   * the answer is the key's (a failure or crash after it answers, and replays, that commit).
   */
  const commitSchedule = async <S extends number>(commit: IdempotentCommit<Reply<S>>, n: NewSchedule, status: S, what: string): Promise<Reply<S>> => {
    const s = missions.prepare(n);
    const reply: Reply<S> = { status, body: accepted(s, what) };
    await missions.commitNew(s, () => commit.inTxn(reply));
    faultPoint('mission-tool.after-commit');
    return reply;
  };
  const options = (b: { deployment_deadline_ms?: number; retry_limit?: number; retry_interval_secs?: number }) => ({
    deploymentDeadlineMs: b.deployment_deadline_ms ?? DEFAULT_DEPLOYMENT_DEADLINE_MS,
    retryLimit: b.retry_limit ?? 0,
    retryIntervalSecs: b.retry_interval_secs ?? DEFAULT_RETRY_INTERVAL_SECS,
  });

  async function submitJob(ctx: ContextFor<undefined, undefined, typeof SubmitJobBody>): Promise<Reply<201 | 202>> {
    const { body, auth } = ctx;
    const fleet = fleetOf(deps, auth, body);
    return idem(ctx, fleet, 'POST /v1/agent/submit-job', async (commit) => {
      const spec = toSpec(body.schedule, auth);
      const capabilities = [...new Set(body.capabilities)];
      const robotIds = checkRobotIds(deps, fleet.fleetId, body.robot_ids, capabilities);
      const now = missions.clock.now();
      const t = newTemplateRecord(store, missions.tracker, fleet, {
        name: body.name,
        featureId: body.feature_id,
        enabled: true,
        capabilities,
        steps: body.steps ?? [{ kind: 'mow_area', config: { feature_id: body.feature_id } }],
        parameters: body.parameters ?? {},
      }, now);
      const s = missions.prepare({
        orgId: fleet.orgId, fleetId: fleet.fleetId, target: { type: 'mission', missionId: t.missionId }, robotIds, schedule: spec,
        ...options(body), createdBy: { apiKeyId: auth.apiKeyId },
      });
      const what = `Job accepted: template ${t.missionId} created enabled`;
      const replyWith = (sync: SyncResult): Reply<201 | 202> => ({ status: sync.runtimeSync === 'applied' ? 201 : 202, body: { ...accepted(s, what), ...sync } });
      // Template, schedule and this answer in one commit; the answer is replaced by the final one
      // once the live operation adopted the template (or did not, in time).
      const committed = replyWith(deps.runtime ? SYNC_UNCONFIRMED : { runtimeSync: 'applied' });
      await commitJob(store, deps.catalogWrites, events, missions, fleet, t, s, now, () => commit.inTxn(committed));
      faultPoint('mission-tool.after-commit');
      return deps.runtime ? replyWith(await deps.runtime.awaitSync(fleet.fleetId)) : committed;
    });
  }

  async function deployOrSchedule<S extends 201 | 202>(
    ctx: ContextFor<undefined, undefined, typeof DeployMissionBody | typeof ScheduleMissionBody>,
    endpoint: string,
    spec: ScheduleObject | null,
    status: S,
  ): Promise<Reply<S>> {
    const { body, auth } = ctx;
    const fleet = fleetOf(deps, auth, body);
    return idem(ctx, fleet, endpoint, async (commit) => {
      const schedule = toSpec(spec, auth);
      const t = requireTemplate(store, fleet.fleetId, body.mission_id);
      const robotIds = checkRobotIds(deps, fleet.fleetId, body.robot_ids, t.capabilities);
      return commitSchedule(commit, {
        orgId: fleet.orgId, fleetId: fleet.fleetId, target: { type: 'mission', missionId: t.missionId }, robotIds, schedule,
        ...options(body), createdBy: { apiKeyId: auth.apiKeyId },
      }, status, schedule === null ? 'Fire-now run accepted' : 'Schedule accepted');
    });
  }

  async function editSchedule(ctx: ContextFor<undefined, undefined, typeof EditScheduleBody>): Promise<Reply<200>> {
    const { body, auth } = ctx;
    const fleet = fleetOf(deps, auth, body);
    const s = requireSchedule(store, fleet.fleetId, body.schedule_id);
    if (s.target.type === 'command') requirePermission(auth, 'operations:control');
    if (body.rebind_to_caller === true) requireRebindPermissions(auth.permissions, s);
    let robotIds: string[] | undefined;
    if (body.robot_ids !== undefined) {
      const caps = s.target.type === 'mission' ? (deps.catalog.template(s.target.missionId)?.capabilities ?? []) : [];
      robotIds = checkRobotIds(deps, fleet.fleetId, body.robot_ids, caps);
      if (s.target.type === 'command' && robotIds.length === 0) throw apiError('robot_ids_invalid', { detail: 'a command schedule needs at least one robot' });
    }
    const updated = await missions.edit(s.scheduleId, {
      ...(body.rebind_to_caller === true ? { actAs: auth.apiKeyId } : {}),
      ...(body.schedule !== undefined ? { schedule: toSpec(body.schedule, auth) } : {}),
      ...(robotIds !== undefined ? { robotIds } : {}),
      ...(body.deployment_deadline_ms !== undefined ? { deploymentDeadlineMs: body.deployment_deadline_ms } : {}),
      ...(body.retry_limit !== undefined ? { retryLimit: body.retry_limit } : {}),
      ...(body.retry_interval_secs !== undefined ? { retryIntervalSecs: body.retry_interval_secs } : {}),
    });
    const paused = (updated.pausedReason ?? null) !== null;
    return { status: 200, body: accepted(updated, paused ? `Schedule edited; still paused (${updated.lastFailureDetail ?? ''}): rebind_to_caller resumes it` : 'Schedule edited') };
  }

  async function scheduleCommand(ctx: ContextFor<undefined, undefined, typeof ScheduleCommandBody>): Promise<Reply<201>> {
    const { body, auth } = ctx;
    requirePermission(auth, 'robots:write');
    const fleet = fleetOf(deps, auth, body);
    return idem(ctx, fleet, 'POST /v1/agent/schedule-command', async (commit) => {
      const spec = toSpec(body.schedule, auth);
      const c = body.command;
      const decl = declarationOf(c.action);
      const own = new Set(Object.keys(decl.fields.properties as Record<string, unknown>).map(bodyName));
      const given = c as Record<string, unknown>;
      for (const f of SCHEDULE_COMMAND_FIELDS) {
        if (given[f.body] !== undefined && !own.has(f.body)) throw apiError('action_field_unexpected', { action: c.action, field: `command.${f.body}` });
      }
      const mine = SCHEDULE_COMMAND_FIELDS.filter((f) => own.has(f.body));
      const needed = mine.find((f) => f.required && given[f.body] === undefined);
      if (needed !== undefined) throw apiError('action_field_missing', { action: c.action, field: `command.${needed.body}` });
      const robotIds = [...new Set(c.robot_ids)];
      if (decl.schedule?.oneTarget === true && robotIds.length !== 1) throw apiError('force_reset_one_target');
      for (const robotId of robotIds) {
        const r = deps.identity.cachedRobot(robotId);
        if (!r || r.fleetId !== fleet.fleetId) throw apiError('robot_not_found', { robotId });
      }
      // Stored as the declaration names the fields (camelCase), in the published field order.
      const command = { action: c.action, ...fieldValues(given, mine) } as ScheduledCommandRecord;
      return commitSchedule(commit, {
        orgId: fleet.orgId, fleetId: fleet.fleetId, target: { type: 'command', command }, robotIds, schedule: spec,
        ...options(body), createdBy: { apiKeyId: auth.apiKeyId },
      }, 201, `Command schedule accepted (${c.action} to ${robotIds.length} robot(s))`);
    });
  }

  async function cancelSchedule(ctx: ContextFor<undefined, undefined, typeof CancelScheduleBody>): Promise<{ status: 200; body: CancelScheduleResponse }> {
    const { body, auth } = ctx;
    // A key that may cancel no kind of schedule is refused before the lookup, so it cannot tell
    // from 404 vs 403 whether a schedule id exists.
    if (!auth.permissions.includes('missions:write') && !auth.permissions.includes('operations:control')) requirePermission(auth, 'missions:write');
    const fleet = fleetOf(deps, auth, body);
    const s = requireSchedule(store, fleet.fleetId, body.schedule_id);
    requirePermission(auth, s.target.type === 'mission' ? 'missions:write' : 'operations:control');
    const out = await missions.cancel(s.scheduleId);
    return { status: 200, body: { scheduleId: out.scheduleId, status: 'cancelled', detail: 'No further fires; a run already started carries on (control-mission stops it).' } };
  }

  async function setPriorities(ctx: ContextFor<undefined, undefined, typeof SetPrioritiesBody>): Promise<{ status: 200; body: SetPrioritiesResponse }> {
    const { body, auth } = ctx;
    const fleet = fleetOf(deps, auth, body);
    const written = await missions.setPriorities(fleet.fleetId, body.priorities.map((p) => ({ missionId: p.mission_id, priority: p.priority })));
    if (deps.runtime) void deps.runtime.changed(fleet.fleetId);
    return { status: 200, body: { success: true, items: written.map((t) => ({ missionId: t.missionId, priority: t.priority })) } };
  }

  const post = { method: 'POST', tags } as const;
  const idempotent = { idempotencyKey: 'required' } as const;
  return [
    defineRoute({
      ...post,
      ...idempotent,
      path: '/v1/agent/submit-job',
      // Idempotency-Key required: a repeat replays the first answer.
      effect: { changes: 'additive', idempotent: true },
      operationId: 'submitJob',
      summary: 'Create an enabled mission template for a job and register its schedule (null or omitted schedule: fire now). Requires Idempotency-Key.',
      auth: 'missions:write',
      body: SubmitJobBody,
      maxBodyBytes: 128 * KIB,
      responses: {
        201: { description: 'Template and schedule committed; status `scheduled`.', schema: ScheduleAccepted },
        202: { description: 'Committed, but the live operation has not adopted the template yet (`runtimeSync` `pending`).', schema: ScheduleAccepted },
      },
      errors: [...MISSION_ERRORS, 'feature_not_found'],
    }).handle(submitJob),
    defineRoute({
      ...post,
      ...idempotent,
      path: '/v1/agent/deploy-mission',
      // Idempotency-Key required: a repeat replays the first answer.
      effect: { changes: 'additive', idempotent: true },
      operationId: 'deployMission',
      summary: 'Fire-now run of an existing template (a schedule that falls due at once). Requires Idempotency-Key.',
      auth: 'missions:write',
      body: DeployMissionBody,
      maxBodyBytes: 16 * KIB,
      responses: { 202: { description: 'Accepted asynchronously; status `scheduled`. No robot is chosen yet.', schema: ScheduleAccepted } },
      errors: [...MISSION_ERRORS, 'template_not_found'],
    }).handle((ctx) => deployOrSchedule(ctx, 'POST /v1/agent/deploy-mission', null, 202)),
    defineRoute({
      ...post,
      ...idempotent,
      path: '/v1/agent/schedule-mission',
      // Idempotency-Key required: a repeat replays the first answer.
      effect: { changes: 'additive', idempotent: true },
      operationId: 'scheduleMission',
      summary: 'Register a schedule (once, interval or cron in an IANA zone) for an existing template. Requires Idempotency-Key.',
      auth: 'missions:write',
      body: ScheduleMissionBody,
      maxBodyBytes: 32 * KIB,
      responses: { 201: { description: 'Schedule committed; status `scheduled`.', schema: ScheduleAccepted } },
      errors: [...MISSION_ERRORS, 'template_not_found'],
    }).handle((ctx) => deployOrSchedule(ctx, 'POST /v1/agent/schedule-mission', ctx.body.schedule, 201)),
    defineRoute({
      ...post,
      path: '/v1/agent/edit-schedule',
      // overwrites the schedule; the same edit again changes nothing more.
      effect: { changes: 'destructive', idempotent: true },
      operationId: 'editSchedule',
      summary: 'Edit a schedule in place (same schedule id). Command schedules also need operations:control.',
      auth: 'missions:write',
      body: EditScheduleBody,
      maxBodyBytes: 32 * KIB,
      responses: { 200: { description: 'The edited schedule.', schema: ScheduleAccepted } },
      errors: [...MISSION_ERRORS, 'schedule_not_found', 'schedule_cancelled', 'robot_ids_invalid', 'forbidden_permission'],
    }).handle(editSchedule),
    defineRoute({
      ...post,
      ...idempotent,
      path: '/v1/agent/schedule-command',
      // Idempotency-Key required: a repeat replays the first answer.
      effect: { changes: 'additive', idempotent: true },
      operationId: 'scheduleCommand',
      summary:
        'Schedule a non-mission robot command (stop, start, release, mode, invoke_action, update_settings, force_reset), checked at each fire as an ' +
        'immediate command is. Needs operations:control and robots:write. Requires Idempotency-Key.',
      auth: 'operations:control',
      body: ScheduleCommandBody,
      maxBodyBytes: CONTROL_ROBOT_MAX_BODY_BYTES,
      responses: { 201: { description: 'Command schedule committed; status `scheduled`.', schema: ScheduleAccepted } },
      errors: [...MISSION_ERRORS, 'forbidden_permission', 'action_field_missing', 'action_field_unexpected', 'force_reset_one_target'],
    }).handle(scheduleCommand),
    defineRoute({
      ...post,
      path: '/v1/agent/cancel-schedule',
      // cancelling a cancelled schedule is a no-op.
      effect: { changes: 'destructive', idempotent: true },
      operationId: 'cancelSchedule',
      summary: 'Cancel a mission schedule (missions:write) or command schedule (operations:control). Idempotent.',
      auth: 'any',
      body: CancelScheduleBody,
      maxBodyBytes: SMALL_BODY_MAX_BYTES,
      responses: { 200: { description: 'Cancelled.', schema: CancelScheduleResponse } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'schedule_not_found', 'forbidden_permission'],
    }).handle(cancelSchedule),
    defineRoute({
      ...post,
      path: '/v1/agent/set-mission-priorities',
      // overwrites priorities; the same batch again changes nothing more.
      effect: { changes: 'destructive', idempotent: true },
      operationId: 'setMissionPriorities',
      summary: 'Set template priorities as one batch (all applied or none).',
      auth: 'missions:write',
      body: SetPrioritiesBody,
      maxBodyBytes: 128 * KIB,
      responses: { 200: { description: 'All priorities applied.', schema: SetPrioritiesResponse } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'template_not_found', 'duplicate_priority'],
    }).handle(setPriorities),
  ];
}
