/** LMDB key shapes of the runs' `index` entries. Private to src/missions/runs (retention walks them through RUN_TIME_INDEX). */
import { keyPrefix, sortableNumber } from '../../store/keys.js';
import type { RunRecord } from './records.js';

/** The index names this module owns (nobody else builds these keys). */
export const RUNS_BY_FLEET = 'runsByFleet';
export const RUNS_BY_ROBOT = 'runsByRobot';
export const RUNS_BY_SCHEDULE = 'runsBySchedule';
export const ACTIVE_BY_TEMPLATE = 'activeRunsByTemplate';
export const ACTIVE_RUNS = 'activeRuns';

/** A run's time-ordered index keys: by fleet, by robot and (when scheduled) by schedule. */
export function timeKeys(r: RunRecord): string[] {
  const t = sortableNumber(r.startedAtMs);
  const keys = [`${keyPrefix(RUNS_BY_FLEET, r.fleetId)}${t}/${r.runId}`, `${keyPrefix(RUNS_BY_ROBOT, r.robotId)}${t}/${r.runId}`];
  if (r.scheduleId !== null) keys.push(`${keyPrefix(RUNS_BY_SCHEDULE, r.scheduleId)}${t}/${r.runId}`);
  return keys;
}

/** A running run's extra index keys (removed when it finishes). */
export function activeKeys(r: RunRecord): string[] {
  return [`${keyPrefix(ACTIVE_BY_TEMPLATE, r.missionId)}${r.runId}`, `${keyPrefix(ACTIVE_RUNS, r.fleetId)}${r.runId}`];
}
