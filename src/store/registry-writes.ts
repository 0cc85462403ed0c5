/**
 * The registry's writes that another module makes inside its own transaction: robot administration
 * (src/fleet/robots/admin) changes a robot's record and moves it between fleets in the same
 * transaction as the rosters it leaves and the events it appends. Built over the registry's own store
 * (plugin `registry` provides them as part `registryWrites`), so the writes land through the handle
 * that may make them.
 */
import { moveRobotIndexSync, replaceRobotSync } from './identity.js';
import type { Store } from './lmdb.js';
import type { RobotRecord } from './records.js';

/** The registry's writes inside a caller's transaction. */
export interface RegistryWrites {
  /** Stores `next` in place of `cur` with its name and identity keys ({@link replaceRobotSync}). */
  replaceRobotSync(cur: RobotRecord, next: RobotRecord): void;
  /** Files a robot under another fleet ({@link moveRobotIndexSync}). */
  moveRobotIndexSync(robotId: string, fromFleetId: string, toFleetId: string): void;
}

/** The registry's writes over `store` (the registry's own). */
export function registryWrites(store: Store): RegistryWrites {
  return {
    replaceRobotSync: (cur, next) => replaceRobotSync(store, cur, next),
    moveRobotIndexSync: (robotId, fromFleetId, toFleetId) => moveRobotIndexSync(store, robotId, fromFleetId, toFleetId),
  };
}
