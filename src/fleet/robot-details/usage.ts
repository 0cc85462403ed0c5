/**
 * Each robot's usage totals (`robotUsage` db, key robotId): distance travelled and operating time as
 * the gateway measured them from the robot's telemetry, and when it was first and last seen.
 * The usage meter (usage-meter.ts) keeps them; `GET /v1/robots/{robot_id}/details` reads them.
 */
import type { Store } from '../../store/lmdb.js';

export interface RobotUsageRecord {
  robotId: string;
  /** Gateway clock of the first telemetry the meter saw from the robot. */
  firstSeenAtMs: number;
  /** Gateway clock of the latest telemetry the meter saw. */
  lastSeenAtMs: number;
  /** Metres travelled (sum of the distances between successive positions). */
  distanceM: number;
  /** Time the robot was online and reporting telemetry, in milliseconds. */
  operatingMs: number;
}

declare module '../../store/lmdb.js' {
  interface StoreDatabases {
    robotUsage: RobotUsageRecord;
  }
}

/** A robot's usage totals as stored, or undefined before the meter saw it. */
export function usageOf(store: Store, robotId: string): RobotUsageRecord | undefined {
  return store.robotUsage.get(robotId);
}

/** Writes usage totals (asynchronous put). */
export function saveUsage(store: Store, rec: RobotUsageRecord): Promise<boolean> {
  return store.robotUsage.put(rec.robotId, rec);
}
