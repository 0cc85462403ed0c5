/**
 * Roster changes of `control-operation` (spec: Agent API operation control, roster rules 1-3).
 * An empty roster is open: every active robot of the fleet may take the template.
 */
import type { EventLog } from '../../events/index.js';
import { apiError, type ApiError } from '../../errors/catalog.js';
import type { Store } from '../../store/lmdb.js';
import { listRobots } from '../../store/identity.js';
import type { TemplateRecord } from './records.js';
import type { AdvertisedCapabilities } from './robot-capabilities.js';
import { changeTemplate, checkRosterRobot, listTemplates, requireTemplate, templateEvent } from './templates.js';
import { robotRecord } from '../../store/identity-reads.js';

/**
 * Rule 1: the robot must be an active fleet robot with every required capability, registered or
 * advertised (404 / 400); no run is started. Rule 2: an open roster stays open; a robot already
 * listed changes nothing.
 */
export async function assignRobot(store: Store, events: EventLog, advertised: AdvertisedCapabilities, fleetId: string, missionId: string, robotId: string, nowMs: number): Promise<{ template: TemplateRecord; changed: boolean }> {
  const cur = requireTemplate(store, fleetId, missionId);
  checkRosterRobot(store, advertised, fleetId, robotId, cur.capabilities);
  return changeTemplate(
    store,
    events,
    fleetId,
    missionId,
    (t) => (t.roster.length === 0 || t.roster.includes(robotId) ? null : { ...t, roster: [...t.roster, robotId] }),
    nowMs,
    'template.robot_assigned',
    () => ({ robotId }),
  );
}

/**
 * Rule 3: removes the robot from future assignment (a run in progress finishes). Removing the last
 * listed robot is 400. On an open roster the other active fleet robots become the roster (400 when
 * there are none: the robot would be the last). A robot not on a closed roster changes nothing.
 * @throws ApiError 404 `robot_not_found` when the robot is not a robot of the fleet
 */
export async function unassignRobot(store: Store, events: EventLog, fleetId: string, missionId: string, robotId: string, nowMs: number): Promise<{ template: TemplateRecord; changed: boolean }> {
  requireTemplate(store, fleetId, missionId);
  const robot = robotRecord(store, robotId);
  if (robot === undefined || robot.fleetId !== fleetId) throw apiError('robot_not_found', { robotId });
  // Read before the transaction (listRobots is an index range); the roster itself is re-read inside.
  const othersActive = listRobots(store, fleetId).filter((r) => r.active && r.robotId !== robotId).map((r) => r.robotId);
  return changeTemplate(
    store,
    events,
    fleetId,
    missionId,
    (t) => {
      if (t.roster.length === 0) {
        if (othersActive.length === 0) return apiError('roster_last_robot', { robotId, missionId });
        return { ...t, roster: othersActive };
      }
      if (!t.roster.includes(robotId)) return null;
      if (t.roster.length === 1) return apiError('roster_last_robot', { robotId, missionId });
      return { ...t, roster: t.roster.filter((r) => r !== robotId) };
    },
    nowMs,
    'template.robot_unassigned',
    (t) => ({ robotId, roster: t.roster }),
  );
}

/**
 * Inside a write transaction: the robot leaves its fleet (a transfer, docs/robot-admin.md), so it
 * leaves every closed roster of the fleet's templates (open rosters name nobody). Refused when it is
 * the only robot on a roster: that roster would become empty, which means open to every robot of the
 * fleet, a wider assignment than anyone asked for. Returns the ids of the templates changed.
 */
export function leaveRostersSync(store: Store, events: EventLog, fleetId: string, robotId: string, nowMs: number): string[] | ApiError {
  const listed = listTemplates(store, fleetId).filter((t) => t.roster.includes(robotId));
  const alone = listed.find((t) => t.roster.length === 1);
  if (alone) return apiError('robot_rostered_alone', { robotId, missionId: alone.missionId });
  for (const t of listed) {
    const rec: TemplateRecord = { ...t, roster: t.roster.filter((r) => r !== robotId), version: t.version + 1, updatedAtMs: nowMs };
    store.templates.putSync(t.missionId, rec);
    templateEvent(events, rec, nowMs, 'template.robot_unassigned', { robotId, roster: rec.roster, reason: 'robot_transferred' });
  }
  return listed.map((t) => t.missionId);
}
