/**
 * Robot link conflicts in the event log: `robot.link_conflict` when two processes are found using
 * one robot's credentials, `robot.link_conflict_cleared` when that ends (docs/robot-link.md, "Link
 * conflicts"). Both sit on the robot's own timeline: correlation id = robot id, subject
 * `{type: 'robot', id}`, so `GET /v1/events?fleet_id=F&correlation_id=<robot id>` shows its history.
 *
 * Alerts (not built yet) hook in the same way: a RobotLinkListener with `onLinkConflict` /
 * `onLinkConflictCleared` on the gateway's link.
 */
import type { RobotLink } from '../protocol/robot-link.js';
import type { EventLog } from './log.js';

/** Records every link conflict start and end as an event; returns the unsubscribe function. */
export function recordLinkConflicts(events: EventLog, link: Pick<RobotLink, 'listen'>): () => void {
  return link.listen({
    onLinkConflict: (robotId, r) => {
      events.append({
        fleetId: r.fleetId,
        correlationId: robotId,
        atMs: r.sinceMs,
        kind: 'robot.link_conflict',
        subject: { type: 'robot', id: robotId },
        data: { rule: r.rule, holder: { ...r.holder }, refused: { ...r.refused }, clearAfterMs: r.clearAfterMs, suspectSinceMs: r.suspectSinceMs },
      });
    },
    onLinkConflictCleared: (robotId, c) => {
      events.append({
        fleetId: c.fleetId,
        correlationId: robotId,
        atMs: c.clearedAtMs,
        kind: 'robot.link_conflict_cleared',
        subject: { type: 'robot', id: robotId },
        data: { sinceMs: c.sinceMs, refusedConnections: c.refusedConnections },
      });
    },
  });
}
