/**
 * Fires of `schedule-command` schedules: at each occurrence the command is submitted to each target
 * robot through the command service (same delivery rules as a direct call: stop is deferred for an
 * offline robot, other commands need the robot online). The fire is `deployed` once every target
 * has its command; targets that could not take it fail the attempt with reason `command_failed`,
 * and a retry (retry_limit / retry_interval_secs) submits to the remaining targets only.
 *
 * Exactly once per (occurrence, robot): each command's id is derived from the fire key and the
 * robot, and submitted with `submitOnce`, so a fire resumed after a crash between the submission and
 * the recording of its command ids finds those commands instead of creating second ones.
 */
import type { EventLog } from '../../events/index.js';
import type { CommandService } from '../../commands/service.js';
import { declarationOf, DECLARATIONS, inPublishedOrder, type SchedulableAction } from '../../commands/catalog/index.js';
import type { ActionAndArgs } from '../../commands/types.js';
import { ApiError } from '../../errors/catalog.js';
import type { Clock } from '../clock.js';
import type { Store } from '../../store/lmdb.js';
import type { FireRecord, ScheduledCommandRecord, ScheduleRecord } from './records.js';
import type { ActingKeyGuard } from './acting-key.js';
import { derivedCommandId } from './derived-command-id.js';
import { faultPoint } from '../fault-points.js';
import { syncTemplateRef } from './schedules.js';
import { scheduleEvent } from './timeline.js';

/**
 * Actions `schedule-command` accepts: the commands whose declaration has `schedule`
 * (src/commands/catalog), in their published order. Not go-to (a one-shot destination, nested route
 * only), not the request/response config reads/writes, not the mission commands.
 */
export const SCHEDULABLE_ACTIONS: readonly SchedulableAction[] = inPublishedOrder(
  DECLARATIONS.filter((d) => d.schedule).map((d) => d.action as SchedulableAction),
  ['stop', 'start', 'release', 'mode', 'invoke_action', 'update_settings', 'force_reset'],
);
export type { SchedulableAction };
/** The stored command shape. */
export type StoredCommand = ScheduledCommandRecord;

/**
 * The command a fire submits: the same action and arguments an immediate control-robot call would,
 * so the command service applies the same checks (robot state, advertised policy, offline rules).
 * The schedule stores the request fields; the command's declaration turns them into arguments.
 */
export function argsOf(c: StoredCommand): ActionAndArgs {
  const { action, ...fields } = c;
  return { action, args: declarationOf(action).toArgs(fields, { defaultReason: 'scheduled stop' }) } as ActionAndArgs;
}

export class CommandFires {
  private readonly timers = new Map<string, () => void>();

  constructor(
    private readonly store: Store,
    private readonly events: EventLog,
    private readonly clock: Clock,
    private readonly commands: CommandService,
    /** Asked before a fire's commands are submitted (acting-key.ts); default: the key may act. */
    private readonly actingKey?: ActingKeyGuard,
  ) {}

  /** Resumes command fires left open by the previous process. */
  start(): void {
    for (const { value: s } of this.store.schedules.getRange()) {
      if (s.openFireKey === null || s.target.type !== 'command') continue;
      const f = this.store.fires.get(s.openFireKey);
      if (f && (f.phase === 'selecting' || f.phase === 'retry_wait')) this.accept(f);
    }
  }

  stop(): void {
    for (const cancel of this.timers.values()) cancel();
    this.timers.clear();
  }

  forget(fireKey: string): void {
    this.timers.get(fireKey)?.();
    this.timers.delete(fireKey);
  }

  /** A committed command fire (or a retry falling due). */
  accept(f: FireRecord): void {
    const wait = f.phase === 'retry_wait' ? (f.retryAtMs ?? 0) - this.clock.now() : 0;
    this.timers.get(f.fireKey)?.();
    this.timers.set(f.fireKey, this.clock.setTimer(() => {
      this.timers.delete(f.fireKey);
      void this.attempt(f);
    }, Math.max(0, wait)));
  }

  private async attempt(f: FireRecord): Promise<void> {
    const s = this.store.schedules.get(f.scheduleId);
    if (!s || s.cancelled || s.target.type !== 'command') return;
    const problem = this.actingKey?.problem(s) ?? null;
    if (problem !== null) return this.actingKey?.pause(f, problem);
    if (f.phase === 'retry_wait') f.attempt += 1;
    const cmd: StoredCommand = s.target.command;
    const done = new Set(f.commandIds.map((id) => this.commands.get(id)?.robotId).filter((x): x is string => x !== undefined));
    const failures: string[] = [];
    const submitted: { commandId: string; persisted: Promise<void> }[] = [];
    for (const robotId of s.robotIds) {
      if (done.has(robotId)) continue;
      try {
        // One id per (occurrence, robot): commands submitted just before a crash, whose ids the fire
        // had not recorded yet, are found again after the restart instead of sent a second time.
        const sub = this.commands.submitOnce(derivedCommandId('scheduled_command', f.fireKey, robotId), {
          robotId, fleetId: s.fleetId, orgId: s.orgId, ...argsOf(cmd), requestedBy: { actorType: 'schedule', scheduleId: s.scheduleId },
        });
        submitted.push(sub);
      } catch (err) {
        failures.push(`${robotId}: ${err instanceof ApiError ? err.message : String(err)}`);
      }
    }
    await Promise.allSettled(submitted.map((x) => x.persisted));
    faultPoint('command-fire.submitted');
    f.commandIds = [...f.commandIds, ...submitted.map((x) => x.commandId)];
    await this.settle(s, f, failures);
  }

  private async settle(s0: ScheduleRecord, f: FireRecord, failures: string[]): Promise<void> {
    const now = this.clock.now();
    let sched: ScheduleRecord | undefined;
    await this.store.root.transaction(() => {
      const s = this.store.schedules.get(s0.scheduleId) ?? s0;
      const ok = failures.length === 0;
      const retry = !ok && !s.cancelled && f.attempt < s.retryLimit;
      if (ok) Object.assign(f, { phase: 'deployed', endedAtMs: now });
      else if (retry) Object.assign(f, { phase: 'retry_wait', retryAtMs: now + s.retryIntervalSecs * 1000, failureReason: 'command_failed', failureDetail: failures.join('; ') });
      else Object.assign(f, { phase: 'failed', endedAtMs: now, failureReason: 'command_failed', failureDetail: failures.join('; ') });
      this.store.fires.putSync(f.fireKey, f);
      sched = { ...s, updatedAtMs: now };
      if (!retry) {
        if (sched.openFireKey === f.fireKey) sched.openFireKey = null;
        if (!s.cancelled) sched.status = ok ? 'deployed' : 'failed';
      }
      if (!ok) {
        sched.lastFailureReason = 'command_failed';
        sched.lastFailureDetail = failures.join('; ');
      }
      this.store.schedules.putSync(s.scheduleId, sched);
      syncTemplateRef(this.store, sched);
    });
    if (!sched) return;
    if (f.phase === 'deployed') scheduleEvent(this.events, sched, now, 'schedule.deployed', { commandIds: f.commandIds });
    else scheduleEvent(this.events, sched, now, f.phase === 'retry_wait' ? 'schedule.retry_scheduled' : 'schedule.failed', { reason: 'command_failed', detail: f.failureDetail });
    if (f.phase === 'retry_wait') this.accept(f);
  }
}
