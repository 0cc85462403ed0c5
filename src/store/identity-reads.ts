/**
 * The registry's records (organizations, fleets, robots) as the other modules read them. The registry
 * (identity.ts, plugin `registry`) owns these databases; access checks, robot selection and the views
 * read them through these functions, never through the databases.
 */
import { fleetRobotIds, listRobots } from './identity.js';
import type { Store } from './lmdb.js';
import { readRaw } from './raw-bytes-cache.js';
import type { FleetRecord, OrgRecord, RobotRecord } from './records.js';

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
    fleet: (fleetId) => cachedFleet(store, fleetId),
    robot: (robotId) => robotRecord(store, robotId),
    cachedRobot: (robotId) => cachedRobot(store, robotId),
    robotBytes: (robotId) => readRaw(store.robots, robotId),
    fleetRobotIds: (fleetId) => fleetRobotIds(store, fleetId),
    robotsOfFleet: (fleetId) => listRobots(store, fleetId),
  };
}

// The same reads as functions over the store, for the modules that hold a Store rather than the
// `identity` part (the command service, alerts, faults, the CLI, the VDA 5050 broker).

/** An organization, read fresh, or undefined. */
export function orgRecord(store: Pick<Store, 'orgs'>, orgId: string): OrgRecord | undefined {
  return store.orgs.get(orgId);
}

/** The organization first in id order, or undefined when there is none. */
export function firstOrg(store: Pick<Store, 'orgs'>): OrgRecord | undefined {
  for (const { value } of store.orgs.getRange({ limit: 1 })) return value;
  return undefined;
}

/** A fleet, read fresh (the caller may keep or change its copy), or undefined. */
export function fleetRecord(store: Pick<Store, 'fleets'>, fleetId: string): FleetRecord | undefined {
  return store.fleets.get(fleetId);
}

/** A fleet through the decode cache: shared and frozen, for reads on hot paths. */
export function cachedFleet(store: Pick<Store, 'records'>, fleetId: string): Readonly<FleetRecord> | undefined {
  return store.records.fleet(fleetId);
}

/** Every fleet's id, in id order; a key read, nothing decoded. */
export function allFleetIds(store: Pick<Store, 'fleets'>): Iterable<string> {
  return store.fleets.getKeys();
}

/** A robot record, read fresh (the caller may keep or change its copy), or undefined. */
export function robotRecord(store: Pick<Store, 'robots'>, robotId: string): RobotRecord | undefined {
  return store.robots.get(robotId);
}

/** A robot record through the decode cache: shared and frozen, for reads on hot paths. */
export function cachedRobot(store: Pick<Store, 'records'>, robotId: string): Readonly<RobotRecord> | undefined {
  return store.records.robot(robotId);
}

/** Every registered robot's id, in id order; a key read, nothing decoded. */
export function allRobotIds(store: Pick<Store, 'robots'>): Iterable<string> {
  return store.robots.getKeys();
}

/** Every organization, in id order (`fleetgw admin list-orgs`). */
export function allOrgs(store: Pick<Store, 'orgs'>): OrgRecord[] {
  return [...store.orgs.getRange()].map((e) => e.value);
}

/** Every fleet, in id order (`fleetgw admin list-fleets`). */
export function allFleets(store: Pick<Store, 'fleets'>): FleetRecord[] {
  return [...store.fleets.getRange()].map((e) => e.value);
}

/** Every robot record, in id order (`fleetgw admin list-robots`). */
export function allRobots(store: Pick<Store, 'robots'>): RobotRecord[] {
  return [...store.robots.getRange()].map((e) => e.value);
}
