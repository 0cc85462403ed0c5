/**
 * The WHERE clause every history query shares: one robot of its fleet (the table's sort key starts
 * with fleet and robot), the partition column `ts` bounding the scan (second resolution on 18.16,
 * milliseconds on modern DDL: compared as whole seconds on both), then the exact millisecond range.
 * Written once as a constant; values are `{name:Type}` placeholders (src/telemetry/store/bound-query.ts).
 */
import type { BoundParam } from '../../../telemetry/store/index.js';
import type { HistoryRange } from './limits.js';

export const RANGE_WHERE = `fleet_id = {fleet_id:String} AND robot_id = {robot_id:String}
  AND ts >= toDateTime(intDiv({from_ms:Int64}, 1000)) AND ts <= toDateTime(intDiv({to_ms:Int64}, 1000) + 1)
  AND ts_ms >= {from_ms:Int64} AND ts_ms < {to_ms:Int64}`;

/** The robot whose history is read. */
export interface HistoryRobot {
  robotId: string;
  fleetId: string;
}

/** The parameters of {@link RANGE_WHERE}. */
export function rangeParams(robot: HistoryRobot, range: HistoryRange): Record<string, BoundParam> {
  return {
    fleet_id: { type: 'String', value: robot.fleetId },
    robot_id: { type: 'String', value: robot.robotId },
    from_ms: { type: 'Int64', value: range.fromMs },
    to_ms: { type: 'Int64', value: range.toMs },
  };
}
