/**
 * `schedule_failed` from the scheduling module's events (the correlated event log tells every
 * observer after the append, outside any transaction: src/events/log.ts).
 *
 * Raised by `schedule.failed` (an occurrence failed for good: no robot before the deadline, retries
 * used up, a missed fire, a failed command fire) and `schedule.paused` (the key it acts as may no
 * longer act). Resolved when the schedule deploys, is cancelled, is resumed (re-bound), or is edited
 * into a state other than failed. A failure repeating while unresolved counts on the same alert.
 * After a restart, an unresolved alert whose schedule is gone, cancelled or no longer failed is resolved.
 */
import type { EventRecord } from '../../../../events/record.js';
import type { Store } from '../../../../store/lmdb.js';
import type { AlertService } from '../alert-service.js';
import { scheduleRecord } from '../../../../missions/scheduling/schedules.js';

const CLEARING = new Set(['schedule.deployed', 'schedule.cancelled', 'schedule.resumed']);

export class ScheduleAlerts {
  constructor(
    private readonly alerts: AlertService,
    private readonly store: Store,
  ) {}

  /** One appended event (every kind comes here; only `schedule.*` ones matter). */
  onEvent(e: Readonly<EventRecord>): void {
    if (e.subject.type !== 'schedule') return;
    const scheduleId = e.subject.id;
    if (e.kind === 'schedule.failed' || e.kind === 'schedule.paused') {
      const reason = typeof e.data.reason === 'string' ? e.data.reason : 'failed';
      const detail = typeof e.data.detail === 'string' ? e.data.detail : null;
      this.alerts.raise({
        kind: 'schedule_failed',
        fleetId: e.fleetId,
        conditionKey: scheduleId,
        subject: { type: 'schedule', id: scheduleId },
        robotId: null,
        severity: 'warning',
        message: e.kind === 'schedule.paused'
          ? `Schedule paused: ${detail ?? reason}; re-bind it with edit-schedule.`
          : `Schedule failed: ${reason}${detail !== null && detail !== '' ? ` (${detail})` : ''}.`,
        details: { reason, detail, event: e.kind },
        atMs: e.atMs,
        correlationId: e.correlationId,
      });
    } else if (CLEARING.has(e.kind)) {
      this.alerts.clear(e.fleetId, 'schedule_failed', scheduleId, 'condition_cleared', e.atMs);
    } else if (e.kind === 'schedule.edited') {
      const s = scheduleRecord(this.store, scheduleId);
      if (s === undefined || s.cancelled || s.status !== 'failed') this.alerts.clear(e.fleetId, 'schedule_failed', scheduleId, 'condition_cleared', e.atMs);
    }
  }

  /** Start-up: resolves alerts whose schedule no longer fails. */
  reconcile(): void {
    for (const a of this.alerts.unresolvedOf('schedule_failed')) {
      const s = scheduleRecord(this.store, a.subject.id);
      if (s === undefined) this.alerts.resolve(a, 'subject_removed');
      else if (s.cancelled || s.status !== 'failed') this.alerts.resolve(a, 'cleared_while_down');
    }
  }
}
