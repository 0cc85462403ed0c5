/** LMDB key shapes of the schedules' `index` entries and of the `fires` db. Private to src/missions/scheduling. */
import { keyPrefix, sortableNumber } from '../../store/keys.js';
import type { ScheduleRecord } from './records.js';

export const BY_FLEET = 'schedulesByFleet';
export const BY_TEMPLATE = 'schedulesByTemplate';
export const ACTIVE = 'activeSchedules';

/** `schedulesByFleet/<fleet>/<createdAt>/<schedule>`: a fleet's schedules, oldest first. */
export function fleetKey(s: Pick<ScheduleRecord, 'fleetId' | 'createdAtMs' | 'scheduleId'>): string {
  return `${keyPrefix(BY_FLEET, s.fleetId)}${sortableNumber(s.createdAtMs)}/${s.scheduleId}`;
}

/** `activeSchedules/<fleet>/<schedule>`: a schedule that is not cancelled. */
export function activeKey(s: Pick<ScheduleRecord, 'fleetId' | 'scheduleId'>): string {
  return `${keyPrefix(ACTIVE, s.fleetId)}${s.scheduleId}`;
}

/** `schedulesByTemplate/<missionId>/<schedule>` for a mission schedule, else null. */
export function templateKey(s: ScheduleRecord): string | null {
  return s.target.type === 'mission' ? `${keyPrefix(BY_TEMPLATE, s.target.missionId)}${s.scheduleId}` : null;
}

/** Key of one occurrence in the `fires` db. */
export function fireKeyOf(scheduleId: string, dueAtMs: number): string {
  return `${scheduleId}/${sortableNumber(dueAtMs)}`;
}
