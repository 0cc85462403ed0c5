/**
 * The registry's records (organizations, fleets, robots) as the other modules read them. The registry
 * (identity.ts, plugin `registry`) owns these databases; access checks, robot selection and the views
 * read them through these functions, never through the databases.
 */
import { fleetRobotIds, listRobots } from './identity.js';
import type { Store } from './lmdb.js';
import { readRaw } from './raw-bytes-cache.js';
import type { FleetRecord, RobotRecord } from './records.js';

/** Reads of the registry's records. */
export interface IdentityReads {
  /** A fleet, decoded once per stored version: shared and frozen, copy it to change it. */
  fleet(fleetId: string): Readonly<FleetRecord> | undefined;
  /** A robot record, read fresh: the caller may keep or change its copy. */
  robot(robotId: string): RobotRecord | undefined;
  /** A robot record through the decode cache: shared and frozen, for reads on hot paths. */
  cachedRobot(robotId: string): Readonly<RobotRecord> | undefined;
  /**
   * A robot record's stored bytes, or undefined when absent, for caches that compare bytes to see a
   * change. The view is over lmdb's reusable read buffer: compare or copy it before the next read.
   */
  robotBytes(robotId: string): Buffer | undefined;
  /** Ids of a fleet's robots (active or not), ordered by id; a key read, nothing decoded. */
  fleetRobotIds(fleetId: string): string[];
  /** Robots of a fleet (active or not), ordered by id. */
  robotsOfFleet(fleetId: string): RobotRecord[];
}

/** The registry's reads over `store` (the registry plugin provides them as part `identity`). */
export function identityReads(store: Store): IdentityReads {
  return {
    fleet: (fleetId) => store.records.fleet(fleetId),
    robot: (robotId) => store.robots.get(robotId),
    cachedRobot: (robotId) => store.records.robot(robotId),
    robotBytes: (robotId) => readRaw(store.robots, robotId),
    fleetRobotIds: (fleetId) => fleetRobotIds(store, fleetId),
    robotsOfFleet: (fleetId) => listRobots(store, fleetId),
  };
}
