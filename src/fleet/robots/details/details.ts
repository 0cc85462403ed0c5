/**
 * What `GET /v1/robots/{robot_id}/details` shows: usage totals (distance and operating time from the
 * usage meter, missions completed and failed from the run records, first and last seen) and the
 * latest health of each device the robot reports, with its active faults.
 */
import { runsOf } from '../../../missions/runs/runs.js';
import type { Store } from '../../../store/lmdb.js';
import type { RobotRecord } from '../../../store/records.js';
import type { TelemetrySnapshot } from '../../../telemetry/sample/index.js';
import { faultsOf } from '../../safety/faults/faults.js';
import type { FaultRecord } from '../../safety/faults/records.js';
import { deviceHealthOf, type DeviceHealthRecord } from '../health/device-health.js';
import type { RobotUsageRecord } from './usage.js';

/** Runs examined when a robot's usage record is first made: its mission counts start from at most this many runs. */
export const MAX_RUNS_COUNTED = 100_000;

export interface RobotDetails {
  robot: RobotRecord;
  distanceM: number;
  operatingMs: number;
  missionsCompleted: number;
  missionsFailed: number;
  firstSeenAtMs: number | null;
  lastSeenAtMs: number | null;
  deviceHealth: DeviceHealthRecord | undefined;
  activeFaults: FaultRecord[];
}

/** Counts the robot's finished runs by outcome (the run records the gateway keeps: 90 days); walks them all. */
export function missionCounts(store: Store, robot: RobotRecord): { completed: number; failed: number } {
  const runs = runsOf(store, { fleetId: robot.fleetId, sinceMs: 0, robotId: robot.robotId });
  let completed = 0;
  let failed = 0;
  let seen = 0;
  let after: string | null = null;
  for (;;) {
    const page = runs.page(after, 1000);
    for (const r of page.items) {
      if (r.state === 'completed') completed++;
      else if (r.state === 'failed') failed++;
    }
    seen += page.items.length;
    if (!page.more || page.last === null || seen >= MAX_RUNS_COUNTED) break;
    after = page.last;
  }
  return { completed, failed };
}

/**
 * The robot's details; `snap` is its latest snapshot (telemetry's reader), `usage` the meter's current
 * view (saved totals plus what is not saved yet).
 */
export function robotDetails(store: Store, robot: RobotRecord, snap: TelemetrySnapshot | undefined, usage: RobotUsageRecord | undefined): RobotDetails {
  const health = deviceHealthOf(store, robot.robotId);
  const seen = [usage?.lastSeenAtMs, snap?.receivedAtMs, health?.reportedAtMs].filter((n): n is number => typeof n === 'number');
  return {
    robot,
    distanceM: usage?.distanceM ?? 0,
    operatingMs: usage?.operatingMs ?? 0,
    missionsCompleted: usage?.missionsCompleted ?? 0,
    missionsFailed: usage?.missionsFailed ?? 0,
    firstSeenAtMs: usage?.firstSeenAtMs ?? (seen.length > 0 ? Math.min(...seen) : null),
    lastSeenAtMs: seen.length > 0 ? Math.max(...seen) : null,
    deviceHealth: health,
    activeFaults: faultsOf(store, { fleetId: robot.fleetId, robotId: robot.robotId, active: true }).page(null, 64).items,
  };
}
