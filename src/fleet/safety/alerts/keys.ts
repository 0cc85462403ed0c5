/** LMDB key shapes of the alerts' `index` entries (the layout is in alert-store.ts). Private to this module. */
import { keyPrefix, sortableNumber } from '../../../store/keys.js';
import type { AlertRecord } from './records.js';

/** The fleet index's root (retention walks it). */
export const ALERTS_BY_FLEET = 'alertsByFleet';
/** `alertsByRobot/<fleet>/<robot>/...`: alerts about a robot. */
export const ALERTS_BY_ROBOT = 'alertsByRobot';
/** `alertsUnresolved/<fleet>/...`: open or acknowledged alerts. */
export const ALERTS_UNRESOLVED = 'alertsUnresolved';

/** `<openedAt 16 hex>/<alertId>`: the tail of each of an alert's index keys (newest last). */
export function alertTimeId(a: AlertRecord): string {
  return `${sortableNumber(a.openedAtMs)}/${a.alertId}`;
}

/** Every index key of an alert (retention removes them with the record). */
export function alertIndexKeys(a: AlertRecord): string[] {
  const keys = [`${keyPrefix(ALERTS_BY_FLEET, a.fleetId)}${alertTimeId(a)}`, `${keyPrefix(ALERTS_UNRESOLVED, a.fleetId)}${alertTimeId(a)}`];
  if (a.robotId !== null) keys.push(`${keyPrefix(ALERTS_BY_ROBOT, a.fleetId, a.robotId)}${alertTimeId(a)}`);
  return keys;
}
