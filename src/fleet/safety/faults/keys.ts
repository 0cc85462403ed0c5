/** LMDB key shapes of the faults' `index` entries (the layout is in faults.ts). Private to this module. */
import { keyPrefix, sortableNumber } from '../../../store/keys.js';
import type { FaultRecord } from './records.js';

export const BY_FLEET = 'faultsByFleet';
export const BY_ROBOT = 'faultsByRobot';
export const ACTIVE = 'activeFaults';
export const ACTIVE_BY_ROBOT = 'activeFaultsByRobot';

/** Every fault's index keys: by fleet and by robot, by raise time. */
export function allKeys(f: FaultRecord): string[] {
  const t = sortableNumber(f.raisedAtMs);
  return [`${keyPrefix(BY_FLEET, f.fleetId)}${t}/${f.faultId}`, `${keyPrefix(BY_ROBOT, f.robotId)}${t}/${f.faultId}`];
}

/** An active fault's extra index keys (removed when it clears). */
export function activeKeys(f: FaultRecord): string[] {
  const t = sortableNumber(f.raisedAtMs);
  return [`${keyPrefix(ACTIVE, f.fleetId)}${t}/${f.faultId}`, `${keyPrefix(ACTIVE_BY_ROBOT, f.robotId)}${t}/${f.faultId}`];
}
