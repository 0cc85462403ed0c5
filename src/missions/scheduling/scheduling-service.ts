/**
 * The mission runtime of the gateway: the durable scheduler, the mission dispatcher, command fires
 * and the run tracker, composed, plus the schedule mutations the Agent API tools call. Every
 * mutation commits to LMDB before it resolves (so the API answers only about durable state) and
 * appends its event to the schedule's timeline.
 */
import { getOperation } from '../catalog/operation.js';
import type { Logger } from 'pino';
import type { EventLog } from '../../events/index.js';
import type { CommandService } from '../../commands/service.js';
import { apiError, type ApiError } from '../../errors/catalog.js';
import type { RobotLink } from '../../protocol/robot-link.js';
import { systemClock, type Clock } from '../clock.js';
import { nextFireAfter } from './recurrence.js';
import { Scheduler, type FireOutcome } from './scheduler.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import type { Store } from '../../store/lmdb.js';
import type { LatestSnapshots } from '../../telemetry/snapshots/index.js';
import type { CatalogReads } from '../catalog/catalog-reads.js';
import type { CatalogWrites } from '../catalog/catalog-writes.js';
import { actingKeyProblem, commitPaused, CREATOR_KEY_INVALID, type ActingKeyGuard } from './acting-key.js';
import { CommandFires } from './command-fires.js';
import type { OperationRuntime, RunEffectReport } from '../catalog/runtime.js';
import { MissionDispatcher, type DispatchGate } from './dispatcher.js';
import type { FireRecord, ScheduleRecord, ScheduleSpec } from './records.js';
import type { TemplateRecord } from '../catalog/records.js';
import { RunTracker } from '../runs/run-tracker.js';
import {
  countActiveSchedules,
  firstFireAt,
  MAX_ACTIVE_SCHEDULES_PER_FLEET,
  newScheduleRecord,
  putCancelled,
  putNewSchedule,
  syncTemplateRef,
  type NewSchedule,
} from './schedules.js';
import { scheduleEvent } from './timeline.js';
import { derivedCommandId } from './derived-command-id.js';
import { startedRunArgs, type MissionStartArgs } from './run-start.js';

const RUN_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export interface MissionSchedulingOptions {
  /** For the databases missions own (schedules, fires, runs). */
  store: Store;
  /** Robot records, from the registry (robot selection). */
  identity: IdentityReads;
  /** Latest snapshots, from telemetry (robot selection's battery levels). */
  snapshots: LatestSnapshots;
  /** Templates and operations, from the catalog. */
  catalog: CatalogReads;
  /** Template priorities, written by the catalog (which owns the templates). */
  catalogWrites: Pick<CatalogWrites, 'setTemplatePriorities' | 'holdFeature' | 'releaseFeature'>;
  /** The store's event log (built once by the composition root). */
  events: EventLog;
  link: RobotLink;
  commands: CommandService;
  clock?: Clock;
  /** Operation running and template enabled; default reads the stored operation and template. */
  gate?: DispatchGate;
  passIntervalMs?: number;
  log?: Logger;
  /** Lateness of each schedule occurrence (the scheduler's `onLateness`: metrics). */
  onLateness?: (outcome: 'fired' | 'skipped', ms: number) => void;
}

export interface SchedulePatch {
  schedule?: ScheduleSpec | null;
  /** Re-bind: the schedule acts as this API key from now on (and resumes if it was paused for its key). */
  actAs?: string;
  robotIds?: string[];
  deploymentDeadlineMs?: number;
  retryLimit?: number;
  retryIntervalSecs?: number;
}

/** Default gate: the fleet's stored operation must be `running` and the template enabled. */
export function storedGate(catalog: Pick<CatalogReads, 'operation'>): DispatchGate {
  return (fleetId: string, t: TemplateRecord) => {
    if (!t.enabled) return { open: false, reason: 'template_disabled' };
    const op = catalog.operation(fleetId);
    if (!op) return { open: false, reason: 'operation_missing' };
    if (op.state !== 'running') return { open: false, reason: `operation_${op.state}` };
    return { open: true };
  };
}

/** Gate from the live operation runtime (what the operation has adopted). */
export function runtimeGate(runtime: Pick<OperationRuntime, 'blockedReason'>): DispatchGate {
  return (fleetId: string, t: TemplateRecord) => {
    const reason = runtime.blockedReason(fleetId, t.missionId);
    return reason === null ? { open: true } : { open: false, reason };
  };
}

/** Wires operation control (pause / start / abort_missions) to the runs in flight. */
export function attachToRuntime(missions: MissionScheduling, runtime: Pick<OperationRuntime, 'setRunEffects' | 'onAdopted'>): void {
  runtime.setRunEffects({
    pauseRuns: (fleetId) => missions.runEffects('pause', fleetId),
    resumeRuns: (fleetId) => missions.runEffects('resume', fleetId),
    abortRuns: (fleetId) => missions.runEffects('abort', fleetId),
  });
  runtime.onAdopted(() => missions.dispatcher.kick());
}

export class MissionScheduling {
  readonly clock: Clock;
  readonly tracker: RunTracker;
  readonly dispatcher: MissionDispatcher;
  readonly commandFires: CommandFires;
  readonly scheduler: Scheduler;
  private readonly store: Store;
  private readonly events: EventLog;
  private readonly unlisten: () => void;

  constructor(readonly opts: MissionSchedulingOptions) {
    this.store = opts.store;
    this.events = opts.events;
    this.clock = opts.clock ?? systemClock;
    const actingKey: ActingKeyGuard = {
      problem: (sched) => actingKeyProblem(this.store, sched, this.clock.now()),
      pause: (f, detail) => void this.pauseForActingKey(f.scheduleId, f, detail),
    };
    this.tracker = new RunTracker(this.store, this.events, this.clock, opts.link, (run) => run.startCommandId !== null && opts.commands.get(run.startCommandId)?.state === 'agent_received');
    this.dispatcher = new MissionDispatcher({
      store: this.store,
      identity: opts.identity,
      snapshots: opts.snapshots,
      catalog: opts.catalog,
      catalogWrites: opts.catalogWrites,
      events: this.events,
      clock: this.clock,
      tracker: this.tracker,
      commands: opts.commands,
      link: opts.link,
      gate: opts.gate ?? storedGate(opts.catalog),
      actingKey,
      ...(opts.passIntervalMs !== undefined ? { passIntervalMs: opts.passIntervalMs } : {}),
      ...(opts.log ? { log: opts.log } : {}),
    });
    this.commandFires = new CommandFires(this.store, this.events, this.clock, opts.commands, actingKey);
    this.scheduler = new Scheduler({
      store: this.store,
      clock: this.clock,
      onOutcome: (o) => this.onOutcome(o),
      ...(opts.log ? { log: opts.log } : {}),
      ...(opts.onLateness ? { onLateness: opts.onLateness } : {}),
    });
    // Robots coming online may unblock waiting fires.
    this.unlisten = opts.link.listen({ onOnline: () => this.dispatcher.kick() });
  }

  /** Resumes open fires, applies the misfire policy and starts the timer. */
  async start(): Promise<void> {
    this.dispatcher.start();
    this.commandFires.start();
    await this.scheduler.start();
  }

  /**
   * The MissionStart arguments robot `robotId`'s run `runId` was started with (run-start.ts), for a
   * robot link that rebuilds the order it sent for the run; undefined when the gateway has no such
   * run of that robot, or cannot tell its steps any more.
   */
  startArgsOf(robotId: string, runId: string): MissionStartArgs | undefined {
    // Run ids are UUIDs; anything else a robot reports is no run of this gateway (nor an LMDB key to try).
    if (!RUN_ID.test(runId)) return undefined;
    const run = this.tracker.get(runId);
    if (run === undefined || run.robotId !== robotId) return undefined;
    // The id the dispatcher submitted it under, also before the run recorded it.
    const commandId = run.startCommandId ?? derivedCommandId('mission_start', runId);
    return startedRunArgs(run, this.opts.commands.get(commandId), this.opts.catalog.template(run.missionId));
  }

  /** Stops timers and the link subscription (state stays in LMDB). */
  stop(): void {
    this.scheduler.stop();
    this.dispatcher.stop();
    this.commandFires.stop();
    this.tracker.close();
    this.unlisten();
  }

  /**
   * Registers a schedule: committed before it resolves, then armed.
   * @throws ApiError `schedule_limit`
   */
  async create(n: NewSchedule): Promise<ScheduleRecord> {
    const s = this.prepare(n);
    await this.commitNew(s);
    return s;
  }

  /**
   * Commits a {@link prepare}d schedule (one write transaction), then arms it. `alsoInTxn` runs
   * inside that transaction after the checks, before the schedule's writes (the caller commits its
   * idempotent answer there); it must not throw.
   * @throws ApiError `schedule_limit` (nothing written)
   */
  async commitNew(s: ScheduleRecord, alsoInTxn?: () => void): Promise<void> {
    const refused = await this.store.root.transaction(() => {
      const why = this.refusal(s.fleetId);
      if (why !== null) return why;
      alsoInTxn?.();
      this.putNewInTxn(s);
      return null;
    });
    if (refused !== null) throw refused;
    this.armNew(s);
  }

  /** A new schedule record (nothing written): its first due time is computed from now. */
  prepare(n: NewSchedule): ScheduleRecord {
    return newScheduleRecord(n, this.clock.now());
  }

  /** Inside a write transaction, before any write: why a new schedule of the fleet is refused, or null. */
  refusal(fleetId: string): ApiError | null {
    if (countActiveSchedules(this.store, fleetId) < MAX_ACTIVE_SCHEDULES_PER_FLEET) return null;
    return apiError('schedule_limit', { fleetId, max: MAX_ACTIVE_SCHEDULES_PER_FLEET });
  }

  /** Inside a write transaction (after {@link refusal}): stores a prepared schedule and its `schedule.accepted` event. */
  putNewInTxn(s: ScheduleRecord): void {
    putNewSchedule(this.store, s);
    scheduleEvent(this.events, s, s.createdAtMs, 'schedule.accepted', { target: s.target, robotIds: s.robotIds, nextFireAtMs: s.nextFireAtMs });
  }

  /** After the commit of {@link putNewInTxn}: the scheduler arms it. */
  armNew(s: ScheduleRecord): void {
    this.scheduler.arm(s);
  }

  /**
   * Edits a schedule in place (same id). A new `schedule` object re-arms it from now.
   * @throws ApiError `schedule_not_found`, `schedule_cancelled`
   */
  async edit(scheduleId: string, patch: SchedulePatch): Promise<ScheduleRecord> {
    const now = this.clock.now();
    let out: ScheduleRecord | undefined;
    let resumed = false;
    let error: 'schedule_not_found' | 'schedule_cancelled' | null = null;
    await this.store.root.transaction(() => {
      const s = this.store.schedules.get(scheduleId);
      if (!s) return void (error = 'schedule_not_found');
      if (s.cancelled) return void (error = 'schedule_cancelled');
      // The live view: skips the scheduler has not written yet (nextFireAtMs, counters) are kept.
      const next: ScheduleRecord = { ...this.scheduler.liveView(s), updatedAtMs: now };
      if (patch.actAs !== undefined) next.createdBy = { apiKeyId: patch.actAs };
      if (patch.robotIds !== undefined) next.robotIds = patch.robotIds;
      if (patch.deploymentDeadlineMs !== undefined) next.deploymentDeadlineMs = patch.deploymentDeadlineMs;
      if (patch.retryLimit !== undefined) next.retryLimit = patch.retryLimit;
      if (patch.retryIntervalSecs !== undefined) next.retryIntervalSecs = patch.retryIntervalSecs;
      if (patch.schedule !== undefined) {
        next.schedule = patch.schedule;
        next.nextFireAtMs = firstFireAt(patch.schedule, now);
        if (s.openFireKey === null) next.status = 'scheduled';
      }
      if ((s.pausedReason ?? null) !== null) {
        if (patch.actAs === undefined) {
          // Paused for its acting key: nothing fires until a key re-binds it.
          next.nextFireAtMs = null;
          next.status = s.status;
        } else {
          // Re-bound: from the new schedule object, else from the next occurrence after now (the
          // occurrence that failed for the old key is not run again).
          resumed = true;
          next.pausedReason = null;
          if (patch.schedule === undefined) next.nextFireAtMs = next.schedule === null ? null : nextFireAfter(next.schedule, now);
          if (next.nextFireAtMs !== null && s.openFireKey === null) next.status = 'scheduled';
        }
      }
      this.store.schedules.putSync(scheduleId, next);
      syncTemplateRef(this.store, next);
      out = next;
    });
    if (error !== null) throw apiError(error, { scheduleId });
    const s = out as unknown as ScheduleRecord;
    scheduleEvent(this.events, s, now, 'schedule.edited', { patch: { ...patch }, nextFireAtMs: s.nextFireAtMs });
    if (resumed) scheduleEvent(this.events, s, now, 'schedule.resumed', { apiKeyId: s.createdBy.apiKeyId, nextFireAtMs: s.nextFireAtMs });
    this.scheduler.arm(s);
    this.dispatcher.kick();
    return s;
  }

  /**
   * Cancels a schedule: no further fires; an open fire stops looking for a robot. A run already
   * started carries on (stop it with control-mission), and its fire still settles the schedule's
   * status (`deployed` once acknowledged, or `failed`; no retry).
   * @throws ApiError `schedule_not_found`
   */
  async cancel(scheduleId: string): Promise<ScheduleRecord> {
    const now = this.clock.now();
    let out: ScheduleRecord | undefined;
    let openFire: string | null = null;
    let settling = false;
    await this.store.root.transaction(() => {
      const s = this.store.schedules.get(scheduleId);
      if (!s || s.cancelled) {
        out = s;
        return;
      }
      openFire = s.openFireKey;
      if (openFire !== null) {
        const f = this.store.fires.get(openFire);
        // A mission fire whose MissionStart is out has its run: it carries on, so the fire stays
        // open until the dispatcher settles it (deployed, or failed without retry).
        settling = f?.phase === 'sent' && s.target.type === 'mission';
        if (f && !settling) this.store.fires.putSync(openFire, { ...f, phase: 'cancelled', endedAtMs: now });
      }
      out = { ...s, cancelled: true, nextFireAtMs: null, openFireKey: settling ? openFire : null, updatedAtMs: now };
      putCancelled(this.store, out);
    });
    if (!out) throw apiError('schedule_not_found', { scheduleId });
    this.scheduler.disarm(scheduleId);
    if (openFire !== null && !settling) {
      this.dispatcher.forget(openFire);
      this.commandFires.forget(openFire);
    }
    scheduleEvent(this.events, out, now, 'schedule.cancelled', { hadOpenFire: openFire !== null });
    return out;
  }

  /**
   * Sets template priorities as one batch: every mission must be a template of the fleet, or
   * nothing is written.
   * @throws ApiError `template_not_found`, `duplicate_priority`
   */
  async setPriorities(fleetId: string, updates: { missionId: string; priority: number }[]): Promise<TemplateRecord[]> {
    const seen = new Set<string>();
    for (const u of updates) {
      if (seen.has(u.missionId)) throw apiError('duplicate_priority', { missionId: u.missionId });
      seen.add(u.missionId);
    }
    // The catalog owns the templates: it writes the batch.
    const written = await this.opts.catalogWrites.setTemplatePriorities(fleetId, updates, this.clock.now());
    this.dispatcher.kick();
    return written;
  }

  /**
   * Run effects of operation control (pause / start / abort_missions): one MissionControl per
   * active run of the fleet. Returns how many runs were addressed and, per run, why its command
   * could not be submitted (control-operation answers 207 then). Resolves once the submitted
   * commands are stored (the answer reports them as sent; src/commands/service.ts).
   */
  async runEffects(verb: 'pause' | 'resume' | 'abort', fleetId: string): Promise<RunEffectReport> {
    const runs = this.tracker.activeRunsOfFleet(fleetId);
    const operationId = getOperation(this.store, fleetId)?.operationId;
    const failures: RunEffectReport['failures'] = [];
    const stored: Promise<void>[] = [];
    for (const run of runs) {
      try {
        const { persisted } = this.opts.commands.submit({
          robotId: run.robotId,
          fleetId,
          orgId: run.orgId,
          action: 'mission_control',
          args: { runId: run.runId, action: verb },
          requestedBy: operationId !== undefined ? { actorType: 'operation', operationId } : { actorType: 'system' },
        });
        stored.push(persisted);
        if (verb === 'abort') this.tracker.markCancelRequested(run.runId, 'abort');
      } catch (err) {
        const error = err instanceof Error ? err.message : String(err);
        failures.push({ runId: run.runId, robotId: run.robotId, error });
        this.opts.log?.error({ err, runId: run.runId, robotId: run.robotId }, `operation ${verb}: run ${run.runId}: ${error}`);
      }
    }
    if (verb === 'resume') this.dispatcher.kick();
    await Promise.all(stored);
    return { count: runs.length, failures };
  }

  /**
   * The schedule's acting key may no longer act (acting-key.ts): fire `f` ends and the schedule is
   * paused, in one commit; nothing is sent for it. Until the commit lands the schedule is disarmed
   * and the fire forgotten, so no other path sends anything meanwhile.
   */
  private async pauseForActingKey(scheduleId: string, f: FireRecord | null, detail: string): Promise<void> {
    const now = this.clock.now();
    this.scheduler.disarm(scheduleId);
    if (f !== null) {
      this.dispatcher.forget(f.fireKey);
      this.commandFires.forget(f.fireKey);
      if (f.runId !== null) this.tracker.finish(f.runId, 'failed', `${CREATOR_KEY_INVALID}: ${detail}`);
    }
    let sched: ScheduleRecord | undefined;
    try {
      // The schedule.paused event is written in the same commit.
      sched = await commitPaused(this.store, this.events, scheduleId, f, detail, now);
    } catch (err) {
      this.opts.log?.error({ err, scheduleId }, `schedule ${scheduleId}: pause failed`);
      return;
    }
    if (sched && !sched.cancelled) this.opts.log?.warn({ scheduleId }, `schedule ${scheduleId} paused: ${detail}`);
  }

  private onOutcome(o: FireOutcome): void {
    const now = this.clock.now();
    if (o.kind === 'fired') {
      scheduleEvent(this.events, o.schedule, now, 'schedule.pending', { dueAtMs: o.fire.dueAtMs, fireKey: o.fire.fireKey, nextFireAtMs: o.schedule.nextFireAtMs });
      const problem = actingKeyProblem(this.store, o.schedule, now);
      if (problem !== null) return void this.pauseForActingKey(o.schedule.scheduleId, o.fire, problem);
      if (o.schedule.target.type === 'mission') this.dispatcher.accept(o.fire, o.schedule.target.missionId);
      else this.commandFires.accept(o.fire);
    } else if (o.kind === 'skipped') {
      // A skip because the previous fire is still open is only counted (skippedFires): a 1-second
      // schedule behind a long run would otherwise flood its timeline. Misfires are events.
      if (o.reason === 'previous_open') return;
      scheduleEvent(this.events, o.schedule, now, 'schedule.fire_skipped', { dueAtMs: o.dueAtMs, reason: o.reason, skippedFires: o.schedule.skippedFires });
    } else {
      scheduleEvent(this.events, o.schedule, now, 'schedule.failed', { reason: 'missed', detail: o.schedule.lastFailureDetail });
    }
  }
}
