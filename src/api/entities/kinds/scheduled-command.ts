/** Kind `scheduled_command`: the fleet's command schedules (schedule-command), newest first; filters status, action, robot_id. */
import { Type, type Static } from '@sinclair/typebox';
import type { ScheduleRecord } from '../../../missions/scheduling/records.js';
import { SCHEDULABLE_ACTIONS } from '../../../missions/scheduling/command-fires.js';
import { ScheduledCommandView } from '../../schemas/mission-runtime.js';
import { named } from '../../schemas/named.js';
import { defineKind } from '../kind.js';
import { AGENT_LIST_LIMIT, KindTag, RobotIdFilter, ScheduleStatusFilter } from './common.js';
import { scheduleFields, scheduleItemFields, schedulesOfType } from './schedule-view.js';

export const ScheduledCommandItem = named('ScheduledCommandEntityItem', Type.Object({ kind: KindTag('scheduled_command'), ...scheduleItemFields, command: ScheduledCommandView }, { additionalProperties: false }));
type ScheduledCommandItem = Static<typeof ScheduledCommandItem>;

export const scheduledCommandKind = defineKind<ScheduleRecord, ScheduledCommandItem>({
  name: 'scheduled_command',
  permission: 'missions:read',
  describe: 'command schedules (schedule-command), newest first (cancelled ones are not listed); filters status, action, robot_id',
  filters: {
    status: ScheduleStatusFilter,
    action: Type.Unsafe<string>({ type: 'string', enum: [...SCHEDULABLE_ACTIONS], description: 'Only command schedules sending this action.' }),
    robot_id: RobotIdFilter,
  },
  limit: AGENT_LIST_LIMIT,
  item: ScheduledCommandItem,
  source(deps, fleet, f) {
    const { status, action, robot_id: robotId } = f as { status?: string; action?: string; robot_id?: string };
    return schedulesOfType(deps, fleet, 'command', status, (s) =>
      (action === undefined || (s.target.type === 'command' && s.target.command.action === action))
      && (robotId === undefined || s.robotIds.includes(robotId)));
  },
  view(deps, s) {
    const { row, fields } = scheduleFields(deps, s);
    return { kind: 'scheduled_command', ...fields, command: row.command! };
  },
});
