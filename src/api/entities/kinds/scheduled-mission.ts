/** Kind `scheduled_mission`: the fleet's mission schedules, newest first; filters status, mission_id, robot_id. */
import { Type, type Static } from '@sinclair/typebox';
import type { ScheduleRecord } from '../../../missions/scheduling/records.js';
import { Uuid } from '../../schemas/common.js';
import { named } from '../../schemas/named.js';
import { defineKind } from '../kind.js';
import { AGENT_LIST_LIMIT, KindTag, RobotIdFilter, ScheduleStatusFilter } from './common.js';
import { scheduleFields, scheduleItemFields, schedulesOfType } from './schedule-view.js';

export const ScheduledMissionItem = named('ScheduledMissionEntityItem', Type.Object({ kind: KindTag('scheduled_mission'), ...scheduleItemFields, mission_id: Uuid }, { additionalProperties: false }));
type ScheduledMissionItem = Static<typeof ScheduledMissionItem>;

export const scheduledMissionKind = defineKind<ScheduleRecord, ScheduledMissionItem>({
  name: 'scheduled_mission',
  permission: 'missions:read',
  describe: 'mission schedules, newest first (cancelled ones are not listed); filters status, mission_id, robot_id',
  filters: {
    status: ScheduleStatusFilter,
    mission_id: Uuid,
    robot_id: RobotIdFilter,
  },
  limit: AGENT_LIST_LIMIT,
  item: ScheduledMissionItem,
  source(deps, fleet, f) {
    const { status, mission_id: missionId, robot_id: robotId } = f as { status?: string; mission_id?: string; robot_id?: string };
    return schedulesOfType(deps, fleet, 'mission', status, (s) =>
      (missionId === undefined || (s.target.type === 'mission' && s.target.missionId === missionId))
      && (robotId === undefined || s.robotIds.includes(robotId)));
  },
  view(deps, s) {
    const { row, fields } = scheduleFields(deps, s);
    return { kind: 'scheduled_mission', ...fields, mission_id: row.template_mission_id! };
  },
});
