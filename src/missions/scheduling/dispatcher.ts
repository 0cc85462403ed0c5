/**
 * Works on open mission fires: chooses a robot (selection.ts), creates the run, sends MissionStart
 * through the command service, and settles the fire as `deployed` (the robot's agent acknowledged it)
 * or fails the attempt. Schedule status follows: `pending` while a fire is open, then `deployed` or
 * `failed` with `last_failure_reason` / `last_failure_detail`.
 *
 * Attempt failures and their reasons:
 *   deadline_passed      no eligible robot before dueAt + deployment_deadline_ms (detail: why not)
 *   robot_rejected       the robot's agent rejected MissionStart (detail: its reason)
 *   robot_unresponsive   MissionStart was never acknowledged within the command service's resend budget,
 *                        or within deployment_deadline_ms (default 300 000) of the run's creation
 *   dispatch_failed      the command could not be submitted (robot went offline, backlog full, policy)
 *   template_missing     the template was deleted
 * A failed attempt is retried after `retry_interval_secs` (fresh deployment window) until
 * `retry_limit` retries were made; then the fire and the schedule are `failed`.
 *
 * Crash safety: the run record and the fire's `sent` phase (with the run id) commit together BEFORE
 * MissionStart is submitted, so after a restart a fire either has no run (selection starts over) or
 * has exactly that run (MissionStart is submitted again with the same run id if it had not been; the
 * robot applies a run id once). A run is never created twice for one fire.
 *
 * Priorities: each pass serves open fires by template priority (higher first), then due time.
 *
 * Feature locks: a template whose feature is locked is not dispatched (blocking reason
 * `feature_locked`); the fire waits (and fails `deadline_passed` when its window closes).
 */
import { pino, type Logger } from 'pino';
import type { EventLog } from '../../events/index.js';
import { randomUUID } from 'node:crypto';
import type { CommandService } from '../../commands/service.js';
import { ApiError } from '../../errors/catalog.js';
import type { RobotLink } from '../../protocol/robot-link.js';
import type { Clock } from '../clock.js';
import type { Store } from '../../store/lmdb.js';
import { isFeatureLocked, listFeatures } from '../catalog/features.js';
import type { CatalogWrites } from '../catalog/catalog-writes.js';
import type { FireRecord, ScheduleRecord } from './records.js';
import type { RunRecord } from '../runs/records.js';
import type { TemplateRecord } from '../catalog/records.js';
import type { CatalogReads } from '../catalog/catalog-reads.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import type { LatestSnapshots } from '../../telemetry/snapshots/index.js';
import type { RunTracker } from '../runs/run-tracker.js';
import { selectRobot, type RobotView, type Selection, type SelectionInput } from './selection.js';
import { DEFAULT_DEPLOYMENT_DEADLINE_MS as DEFAULT_SENT_DEADLINE_MS } from './schedules.js';
import type { ActingKeyGuard } from './acting-key.js';
import { derivedCommandId } from './derived-command-id.js';
import { missionStartArgs } from './run-start.js';
import { commitDeployed, commitFailedAttempt } from './fire-outcome.js';
import { FleetRoster } from './fleet-roster.js';
import { scheduleEvent } from './timeline.js';

/** Fleet-level dispatch gate: operation running and template enabled. */
export type DispatchGate = (fleetId: string, template: TemplateRecord) => SelectionInput['gate'];

export interface DispatcherOptions {
  /** For the databases missions own (schedules, fires, runs). */
  store: Store;
  /** Robot records, from the registry. */
  identity: Pick<IdentityReads, 'fleetRobotIds' | 'robot'>;
  /** Latest snapshots (battery levels), from telemetry. */
  snapshots: Pick<LatestSnapshots, 'latest'>;
  /** Templates, from the catalog. */
  catalog: Pick<CatalogReads, 'template'>;
  /** A run's feature, held and released by the catalog (which owns the features). */
  catalogWrites: Pick<CatalogWrites, 'holdFeature' | 'releaseFeature'>;
  events: EventLog;
  clock: Clock;
  tracker: RunTracker;
  commands: CommandService;
  link: Pick<RobotLink, 'isOnline'>;
  gate: DispatchGate;
  /** Asked before a fire's MissionStart is sent: may the schedule's acting key act (acting-key.ts)? Default: yes. */
  actingKey?: ActingKeyGuard;
  /** Re-check period while fires wait (robots free up, operations resume). Default 500 ms. */
  passIntervalMs?: number;
  log?: Logger;
}

const OPEN_PHASES = new Set(['selecting', 'sent', 'retry_wait']);
/** Shortest gap between two dispatch passes (ms). */
const MIN_PASS_GAP_MS = 5;
export class MissionDispatcher {
  private readonly open = new Map<string, FireRecord>();
  /** Template of each open fire (a schedule's target never changes), so ordering reads no schedule. */
  private readonly missionOf = new Map<string, string>();
  /** Fires with a write in flight: not looked at again until it lands. */
  private readonly inFlight = new Set<string>();
  private readonly lastAssigned = new Map<string, number>();
  private readonly roster: FleetRoster;
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly passIntervalMs: number;
  private readonly log: Logger;
  private cancelPass: (() => void) | null = null;
  private passAt: number | null = null;
  private stopped = false;
  private lastPassAt = -Infinity;

  constructor(private readonly opts: DispatcherOptions) {
    this.store = opts.store;
    this.clock = opts.clock;
    this.passIntervalMs = opts.passIntervalMs ?? 500;
    this.log = opts.log ?? pino({ enabled: false });
    this.roster = new FleetRoster(opts.identity, opts.snapshots, opts.clock, opts.tracker, opts.link);
    opts.tracker.onChange((run) => {
      // A robot freed up, or a deployed run reported: look again.
      if (run.endedAtMs !== null) {
        this.releaseAreas(run);
        this.kick();
      }
    });
  }

  /** Resumes every fire left open by the previous process. */
  start(): void {
    for (const { value: s } of this.store.schedules.getRange()) {
      if (s.openFireKey === null || s.target.type !== 'mission') continue;
      const f = this.store.fires.get(s.openFireKey);
      if (f && OPEN_PHASES.has(f.phase)) {
        this.open.set(f.fireKey, f);
        this.missionOf.set(f.fireKey, s.target.missionId);
      }
    }
    this.kick();
  }

  stop(): void {
    this.stopped = true;
    this.cancelPass?.();
    this.cancelPass = null;
  }

  /** A committed mission fire from the scheduler. */
  accept(fire: FireRecord, missionId: string): void {
    this.open.set(fire.fireKey, fire);
    this.missionOf.set(fire.fireKey, missionId);
    this.kick();
  }

  /** Forgets an open fire (its schedule was cancelled; the caller wrote the fire's final phase). */
  forget(fireKey: string): void {
    this.drop(fireKey);
  }

  private drop(fireKey: string): void {
    this.open.delete(fireKey);
    this.missionOf.delete(fireKey);
  }

  /** The open fire of a schedule, if any. */
  openFire(fireKey: string | null): FireRecord | undefined {
    return fireKey === null ? undefined : this.open.get(fireKey);
  }

  get openCount(): number {
    return this.open.size;
  }

  /** Selection as it stands now for a schedule (runtime status; nothing is reserved). */
  explain(s: ScheduleRecord): Selection | null {
    if (s.target.type !== 'mission') return null;
    const template = this.opts.catalog.template(s.target.missionId);
    return selectRobot({
      template,
      gate: this.gateFor(s.fleetId, template),
      robots: this.robotViews(s.fleetId),
      robotIds: s.robotIds,
      reserved: new Set(),
      lastAssignedAt: this.lastAssigned,
    });
  }

  /** The fleet-level gate plus the feature lock (read at every check: a lock applies at once). */
  private gateFor(fleetId: string, template: TemplateRecord | undefined): SelectionInput['gate'] {
    if (!template) return { open: false, reason: 'template_missing' };
    const g = this.opts.gate(fleetId, template);
    if (g.open && template.featureId !== null && isFeatureLocked(this.store, template.featureId)) return { open: false, reason: 'feature_locked' };
    return g;
  }

  /** The fleet's robots as selection sees them (roster.ts). */
  robotViews(fleetId: string): RobotView[] {
    return this.roster.views(fleetId);
  }

  /**
   * A run ended: its robot leaves every feature of the fleet it holds. A robot has one active run at
   * a time, so it holds nothing once that run ends (also when the template moved to another feature).
   */
  private releaseAreas(run: RunRecord): void {
    const now = this.clock.now();
    // The template's feature is released even when no committed hold is seen yet: the hold's write
    // is queued ahead of this one (LMDB runs async transactions in order), and a release of a
    // non-holder writes nothing.
    const areas = new Set(listFeatures(this.store, run.fleetId).filter((feat) => feat.holders.includes(run.robotId)).map((feat) => feat.featureId));
    const own = this.opts.catalog.template(run.missionId)?.featureId;
    if (own != null) areas.add(own);
    for (const featureId of areas) {
      this.opts.catalogWrites.releaseFeature(this.opts.events, run.fleetId, featureId, run.robotId, now).catch((err: unknown) => this.log.error({ err, featureId, runId: run.runId }, `dispatcher: release feature ${featureId} failed`));
    }
  }

  /** Schedules a pass soon (coalesced: many kicks in one turn make one pass). */
  kick(): void {
    this.schedulePass(this.clock.now());
  }

  private schedulePass(atWanted: number): void {
    if (this.stopped) return;
    // Passes are at least MIN_PASS_GAP_MS apart: under load many kicks (acks, runs ending, fires)
    // share one pass instead of each scanning every open fire.
    const at = Math.max(atWanted, this.lastPassAt + MIN_PASS_GAP_MS);
    if (this.passAt !== null && this.passAt <= at) return;
    this.cancelPass?.();
    this.passAt = at;
    this.cancelPass = this.clock.setTimer(() => {
      this.cancelPass = null;
      this.passAt = null;
      this.pass();
    }, at - this.clock.now());
  }

  private pass(): void {
    if (this.stopped) return;
    const now = this.clock.now();
    this.lastPassAt = now;
    let wake: number | null = null;
    const wakeAt = (t: number): void => {
      wake = wake === null ? t : Math.min(wake, t);
    };
    const byFleet = new Map<string, FireRecord[]>();
    for (const f of [...this.open.values()]) {
      if (this.inFlight.has(f.fireKey)) continue;
      if (f.phase === 'retry_wait') {
        if ((f.retryAtMs ?? 0) > now) {
          wakeAt(f.retryAtMs ?? now);
          continue;
        }
        this.newAttempt(f, now);
      }
      if (f.phase === 'sent') {
        this.checkSent(f);
        if (f.phase === 'sent') wakeAt(now + this.passIntervalMs);
        continue;
      }
      if (f.phase !== 'selecting') continue;
      const list = byFleet.get(f.fleetId);
      if (list) list.push(f);
      else byFleet.set(f.fleetId, [f]);
    }
    for (const [fleetId, fires] of byFleet) this.serveFleet(fleetId, fires, now, wakeAt);
    if (wake !== null) this.schedulePass(wake);
  }

  /**
   * One fleet's selecting fires. While no robot of the fleet is free, a fire only checks its
   * deadline (no record is read), so thousands of waiting fires cost little per pass; schedules,
   * templates and priorities are read only when a robot could be given out.
   */
  private serveFleet(fleetId: string, fires: FireRecord[], now: number, wakeAt: (t: number) => void): void {
    const views = this.robotViews(fleetId);
    const free = views.filter((v) => v.active && v.online && v.busyRunId === null).length;
    const reserved = new Set<string>();
    const schedules = new Map<string, ScheduleRecord | undefined>();
    const templates = new Map<string, TemplateRecord | undefined>();
    const scheduleOf = (f: FireRecord): ScheduleRecord | undefined => {
      if (!schedules.has(f.scheduleId)) schedules.set(f.scheduleId, this.store.schedules.get(f.scheduleId));
      return schedules.get(f.scheduleId);
    };
    const templateById = (id: string | undefined): TemplateRecord | undefined => {
      if (id === undefined) return undefined;
      if (!templates.has(id)) templates.set(id, this.opts.catalog.template(id));
      return templates.get(id);
    };
    const templateOf = (s: ScheduleRecord | undefined): TemplateRecord | undefined =>
      s && s.target.type === 'mission' ? templateById(s.target.missionId) : undefined;
    let ordered = fires;
    if (free > 0 && fires.length > 1) {
      const prio = new Map(fires.map((f) => [f.fireKey, templateById(this.missionOf.get(f.fireKey))?.priority ?? 0]));
      ordered = [...fires].sort((a, b) => (prio.get(b.fireKey) ?? 0) - (prio.get(a.fireKey) ?? 0) || a.dueAtMs - b.dueAtMs);
    }
    for (const f of ordered) {
      const deadlinePassed = f.attemptDeadlineMs !== null && now >= f.attemptDeadlineMs;
      if (free - reserved.size <= 0 && !deadlinePassed) {
        if (f.attemptDeadlineMs !== null) wakeAt(f.attemptDeadlineMs);
        wakeAt(now + this.passIntervalMs);
        continue;
      }
      const s = scheduleOf(f);
      if (!s || s.cancelled || s.target.type !== 'mission') {
        this.drop(f.fireKey);
        continue;
      }
      if (!this.mayAct(f, s)) continue;
      const template = templateOf(s);
      const sel = selectRobot({
        template,
        gate: this.gateFor(f.fleetId, template),
        robots: views,
        robotIds: s.robotIds,
        reserved,
        lastAssignedAt: this.lastAssigned,
      });
      if (sel.robotId !== null && template) {
        reserved.add(sel.robotId);
        this.lastAssigned.set(sel.robotId, now);
        void this.deploy(f, s, template, sel.robotId);
        continue;
      }
      if (deadlinePassed || !template) {
        void this.failAttempt(f, template ? 'deadline_passed' : 'template_missing', sel.blocking.join('; ') || 'no eligible robot');
        continue;
      }
      if (f.attemptDeadlineMs !== null) wakeAt(f.attemptDeadlineMs);
      wakeAt(now + this.passIntervalMs);
    }
  }

  private newAttempt(f: FireRecord, now: number): void {
    const s = this.store.schedules.get(f.scheduleId);
    f.phase = 'selecting';
    f.attempt += 1;
    f.retryAtMs = null;
    f.attemptDeadlineMs = s?.deploymentDeadlineMs == null ? null : now + s.deploymentDeadlineMs;
    this.store.writes.watch(this.store.fires.put(f.fireKey, f), 'missions', 'fires');
  }

  private async deploy(f: FireRecord, s: ScheduleRecord, t: TemplateRecord, robotId: string): Promise<void> {
    this.inFlight.add(f.fireKey);
    const now = this.clock.now();
    const run: RunRecord = {
      runId: randomUUID(),
      orgId: s.orgId,
      fleetId: s.fleetId,
      missionId: t.missionId,
      scheduleId: s.scheduleId,
      robotId,
      state: 'starting',
      progressPct: 0,
      stepIndex: 0,
      remainingDistanceM: null,
      etaS: null,
      detail: null,
      cancelRequested: null,
      correlationId: s.correlationId,
      startedAtMs: now,
      endedAtMs: null,
      lastReportAtMs: null,
      fireKey: f.fireKey,
      startCommandId: null,
      name: t.name,
    };
    const sent: FireRecord = { ...f, phase: 'sent', robotId, runId: run.runId };
    try {
      await this.opts.tracker.create(
        run,
        () => { this.store.fires.putSync(f.fireKey, sent); },
        // The choice is durable with the run; it is told before the run it caused.
        () => scheduleEvent(this.opts.events, s, now, 'schedule.robot_chosen', { robotId, runId: run.runId, attempt: f.attempt, fireKey: f.fireKey }),
      );
    } catch (err) {
      this.inFlight.delete(f.fireKey);
      this.log.error({ err, fireKey: f.fireKey }, 'dispatcher: run create failed; the fire is retried');
      this.kick();
      return;
    }
    Object.assign(f, sent);
    // Queued before MissionStart is submitted, so the release of a run that ends at once follows it.
    const area = t.featureId;
    if (area !== null) this.opts.catalogWrites.holdFeature(this.opts.events, s.fleetId, area, robotId, now).catch((err: unknown) => this.log.error({ err, featureId: area, robotId }, `dispatcher: hold feature ${area} failed`));
    this.submitStart(f, s, t, run);
    this.inFlight.delete(f.fireKey);
    // Sent fires are re-checked every pass (ack, rejection, the sent deadline), also when no ack
    // ever comes to kick one.
    this.schedulePass(this.clock.now() + this.passIntervalMs);
  }

  /**
   * Whether the schedule's acting key may send this fire's MissionStart now. When it may not, the
   * fire is dropped here and the guard ends it and pauses the schedule (acting-key.ts).
   */
  private mayAct(f: FireRecord, s: ScheduleRecord): boolean {
    const problem = this.opts.actingKey?.problem(s) ?? null;
    if (problem === null) return true;
    this.drop(f.fireKey);
    this.opts.actingKey?.pause(f, problem);
    return false;
  }

  /**
   * Submits MissionStart for a fire's run; a refused submit fails the attempt. The command id is
   * derived from the run id, so a MissionStart submitted just before a crash (its id not yet
   * recorded on the fire) is found again after the restart instead of sent a second time.
   */
  private submitStart(f: FireRecord, s: ScheduleRecord, t: TemplateRecord, run: RunRecord): void {
    try {
      const sub = this.opts.commands.submitOnce(derivedCommandId('mission_start', run.runId), {
        robotId: run.robotId,
        fleetId: s.fleetId,
        orgId: s.orgId,
        action: 'mission_start',
        args: missionStartArgs(run, t),
        requestedBy: { actorType: 'schedule', scheduleId: s.scheduleId },
      });
      f.commandIds = [...f.commandIds, sub.commandId];
      this.store.writes.watch(this.store.fires.put(f.fireKey, f), 'missions', 'fires');
      // The run is the runs module's: it records which command started it.
      this.opts.tracker.startedBy(run, sub.commandId);
      this.watchAck(sub.commandId);
    } catch (err) {
      const detail = err instanceof ApiError ? err.message : String(err);
      this.opts.tracker.finish(run.runId, 'failed', `dispatch_failed: ${detail}`);
      void this.failAttempt(f, 'dispatch_failed', detail);
    }
  }

  /** Reacts to the ack at once; the periodic pass covers a wait that could not be registered. */
  private watchAck(commandId: string): void {
    try {
      this.opts.commands.waitForAck(commandId, 30_000).then(() => this.kick(), () => this.kick());
    } catch {
      // Waiter bound reached: the periodic pass reads the command's state instead.
    }
  }

  private checkSent(f: FireRecord): void {
    const s = this.store.schedules.get(f.scheduleId);
    // A cancelled schedule's sent fire still settles: its run carries on.
    if (!s || s.target.type !== 'mission' || f.runId === null) return;
    const cmdId = f.commandIds[f.commandIds.length - 1];
    if (cmdId === undefined) {
      // Restarted between the run's commit and the MissionStart submit: submit it now.
      const t = this.opts.catalog.template(s.target.missionId);
      const run = this.opts.tracker.get(f.runId);
      if (!t || !run) {
        void this.failAttempt(f, 'template_missing', 'the template was deleted before MissionStart was sent');
        return;
      }
      if (this.mayAct(f, s)) this.submitStart(f, s, t, run);
      return;
    }
    const rec = this.opts.commands.get(cmdId);
    if (rec?.state === 'agent_received') void this.deployed(f);
    else if (rec?.state === 'agent_rejected') {
      this.opts.tracker.finish(f.runId, 'failed', `rejected: ${rec.rejectReason ?? ''}`);
      void this.failAttempt(f, 'robot_rejected', rec.rejectReason || 'no reason given');
    } else if (rec?.retryBudgetExhausted) {
      this.opts.tracker.finish(f.runId, 'failed', 'robot_unresponsive');
      void this.failAttempt(f, 'robot_unresponsive', `MissionStart ${cmdId} was not acknowledged after ${rec.attempts} sends`);
    } else this.checkSentDeadline(f, s, cmdId);
  }

  /**
   * The sent phase's own deadline: MissionStart unacknowledged `deployment_deadline_ms` (default
   * {@link DEFAULT_SENT_DEADLINE_MS} when the schedule has none) after the run was created, e.g. the
   * robot went offline before acknowledging (the resend budget is not spent while it is offline).
   * The attempt fails `robot_unresponsive` and the robot is free again. An abort for the run is
   * queued behind the MissionStart, so a robot that reconnects later does not keep a run the
   * gateway has given up on.
   */
  private checkSentDeadline(f: FireRecord, s: ScheduleRecord, cmdId: string): void {
    if (f.runId === null) return;
    const run = this.opts.tracker.get(f.runId);
    const limit = s.deploymentDeadlineMs ?? DEFAULT_SENT_DEADLINE_MS;
    const sentAt = run?.startedAtMs ?? f.dueAtMs;
    if (this.clock.now() < sentAt + limit) return;
    if (run && run.endedAtMs === null) {
      try {
        this.opts.commands.submit({
          robotId: run.robotId,
          fleetId: run.fleetId,
          orgId: run.orgId,
          action: 'mission_control',
          args: { runId: run.runId, action: 'abort' },
          requestedBy: { actorType: 'schedule', scheduleId: s.scheduleId },
        });
      } catch (err) {
        this.log.error({ err, runId: run.runId }, `dispatcher: abort of unacknowledged run ${run.runId} failed`);
      }
    }
    this.opts.tracker.finish(f.runId, 'failed', 'robot_unresponsive');
    void this.failAttempt(f, 'robot_unresponsive', `MissionStart ${cmdId} was not acknowledged within ${limit} ms`);
  }

  private async deployed(f: FireRecord): Promise<void> {
    if (this.inFlight.has(f.fireKey)) return;
    this.inFlight.add(f.fireKey);
    const now = this.clock.now();
    let sched: ScheduleRecord | undefined;
    try {
      sched = await commitDeployed(this.store, f, now);
    } finally {
      this.inFlight.delete(f.fireKey);
    }
    f.phase = 'deployed';
    f.endedAtMs = now;
    this.drop(f.fireKey);
    if (sched) scheduleEvent(this.opts.events, sched, now, 'schedule.deployed', { robotId: f.robotId, runId: f.runId, attempt: f.attempt });
  }

  private async failAttempt(f: FireRecord, reason: string, detail: string): Promise<void> {
    if (this.inFlight.has(f.fireKey)) return;
    this.inFlight.add(f.fireKey);
    const now = this.clock.now();
    let outcome: { sched: ScheduleRecord | undefined; retry: boolean };
    try {
      outcome = await commitFailedAttempt(this.store, f, reason, detail, now);
    } finally {
      this.inFlight.delete(f.fireKey);
    }
    const { sched, retry } = outcome;
    if (!retry) this.drop(f.fireKey);
    if (sched) {
      scheduleEvent(this.opts.events, sched, now, 'schedule.attempt_failed', { reason, detail, attempt: f.attempt });
      scheduleEvent(this.opts.events, sched, now, retry ? 'schedule.retry_scheduled' : 'schedule.failed', retry ? { retryAtMs: f.retryAtMs, attempt: f.attempt + 1 } : { reason, detail });
    }
    this.kick();
  }
}
