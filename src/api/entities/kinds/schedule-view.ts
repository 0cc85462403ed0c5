/** The item view the two schedule kinds share (`scheduled_mission`, `scheduled_command`), from the schedule row. */
import { Type, type Static, type TObject } from '@sinclair/typebox';
import type { ScheduleRecord } from '../../../missions/scheduling/records.js';
import { schedulesOf } from '../../../missions/scheduling/schedules.js';
import type { Keyset } from '../../../store/keyset.js';
import type { FleetRecord } from '../../../store/records.js';
import { scheduleState, toScheduleRow } from '../../mission-views.js';
import { Nullable, Uuid } from '../../schemas/common.js';
import { ScheduleSpecView, type ScheduleRow } from '../../schemas/mission-runtime.js';
import { ScheduleStateSchema } from '../../schemas/mission-tools.js';
import type { KindDeps } from '../kind.js';

/** The fields both schedule items carry (each kind adds its target). */
export const scheduleItemFields = {
  schedule_id: Uuid,
  status: ScheduleStateSchema,
  robot_ids: Type.Array(Uuid),
  schedule: Nullable(ScheduleSpecView),
  next_fire_at_ms: Nullable(Type.Integer()),
  last_failure_reason: Nullable(Type.String()),
  last_failure_detail: Nullable(Type.String()),
  paused_reason: Nullable(Type.String()),
  correlation_id: Uuid,
  created_at_ms: Type.Integer(),
  updated_at_ms: Type.Integer(),
};

export type ScheduleItemFields = Static<TObject<typeof scheduleItemFields>>;

/** The shared fields of a schedule (its live view, as `GET /v1/mission-schedule` shows it) and its row. */
export function scheduleFields(deps: KindDeps, s: ScheduleRecord): { row: ScheduleRow; fields: ScheduleItemFields } {
  const row = toScheduleRow(deps.missions.scheduler.liveView(s));
  return {
    row,
    fields: {
      schedule_id: row.scheduleId,
      status: row.status,
      robot_ids: row.robot_ids,
      schedule: row.schedule,
      next_fire_at_ms: row.next_fire_at_ms,
      last_failure_reason: row.last_failure_reason,
      last_failure_detail: row.last_failure_detail,
      paused_reason: row.paused_reason,
      correlation_id: row.correlation_id,
      created_at_ms: row.created_at_ms,
      updated_at_ms: row.updated_at_ms,
    },
  };
}

/** The fleet's schedules of one target type, newest first; cancelled ones are not listed. */
export function schedulesOfType(deps: KindDeps, fleet: Readonly<FleetRecord>, type: 'mission' | 'command', status: string | undefined, also: (s: ScheduleRecord) => boolean): Keyset<ScheduleRecord> {
  return schedulesOf(deps.store, fleet.fleetId, (s) => {
    if (s.target.type !== type) return false;
    if (s.cancelled) return false;
    if (status !== undefined && scheduleState(deps.missions.scheduler.liveView(s)) !== status) return false;
    return also(s);
  });
}
