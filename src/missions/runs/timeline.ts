/**
 * Run events on the correlated timeline: a scheduled run's events share its schedule's correlation
 * id (src/missions/scheduling/timeline.ts), so one `GET /v1/events` read tells the whole chain.
 *
 * Kinds written here:
 *   run.created / run.running / run.paused / run.progress / run.completed / run.failed / run.cancelled / run.aborted
 *   run.control_requested / run.lost
 */
import type { EventLog } from '../../events/index.js';
import type { EventRecord } from '../../events/record.js';
import type { RunRecord } from './records.js';

/** Appends a run-subject event on the run's timeline (its schedule's, for scheduled runs). */
export function runEvent(events: EventLog, r: RunRecord, atMs: number, kind: string, data: Record<string, unknown> = {}): EventRecord {
  return events.append({ fleetId: r.fleetId, correlationId: r.correlationId, atMs, kind, subject: { type: 'run', id: r.runId }, data });
}
