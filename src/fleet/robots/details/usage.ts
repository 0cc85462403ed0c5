/**
 * Each robot's usage totals (`robotUsage` db, key robotId): distance travelled and operating time as
 * the gateway measured them from the robot's telemetry, when it was first and last seen, and its
 * missions completed and failed.
 * The usage meter (usage-meter.ts) keeps them; `GET /v1/robots/{robot_id}/details` reads them.
 */
import type { Store } from '../../../store/lmdb.js';

export interface RobotUsageRecord {
  robotId: string;
  /** Gateway clock of the first telemetry the meter saw from the robot; null before any. */
  firstSeenAtMs: number | null;
  /** Gateway clock of the latest telemetry the meter saw; null before any. */
  lastSeenAtMs: number | null;
  /** Metres travelled (sum of the distances between successive positions). */
  distanceM: number;
  /** Time the robot was online and reporting telemetry, in milliseconds. */
  operatingMs: number;
  /**
   * Runs of the robot that completed / failed: counted as they finish; a record made for a robot
   * seen for the first time starts from the run records kept then (90 days).
   */
  missionsCompleted: number;
  missionsFailed: number;
}

declare module '../../../store/lmdb.js' {
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
