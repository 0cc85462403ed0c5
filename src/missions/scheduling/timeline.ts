/**
 * Schedule events on the correlated timeline. A schedule's whole chain (accepted, pending, robot
 * chosen, deployed, run progress, run done) shares the schedule's correlation id, so
 * `GET /v1/events?fleet_id=…&correlation_id=…` tells the story of one schedule; the run events of
 * that chain are written by src/missions/runs/timeline.ts.
 *
 * Kinds written here:
 *   schedule.accepted / schedule.edited / schedule.cancelled
 *   schedule.paused / schedule.resumed (the key it acts as may no longer act / re-bound: acting-key.ts)
 *   schedule.pending (a fire fell due) / schedule.fire_skipped (missed while the gateway was down; skips
 *   behind a still-open fire are only counted on the schedule)
 *   schedule.robot_chosen / schedule.deployed / schedule.attempt_failed / schedule.retry_scheduled / schedule.failed
 *   command.scheduled_sent (schedule-command fires)
 */
import type { EventLog } from '../../events/index.js';
import type { EventRecord } from '../../events/record.js';
import type { ScheduleRecord } from './records.js';

/** Appends a schedule-subject event on the schedule's timeline. */
export function scheduleEvent(events: EventLog, s: ScheduleRecord, atMs: number, kind: string, data: Record<string, unknown> = {}): EventRecord {
  return events.append({ fleetId: s.fleetId, correlationId: s.correlationId, atMs, kind, subject: { type: 'schedule', id: s.scheduleId }, data });
}
