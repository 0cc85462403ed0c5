/**
 * Where alerts live in LMDB and how they are listed. Records in `alerts` (alertId -> AlertRecord);
 * index keys in `index`, all `true`:
 *
 *   alertsByFleet/<fleet>/<openedAt 16 hex>/<alert>            every alert of a fleet
 *   alertsByRobot/<fleet>/<robot>/<openedAt 16 hex>/<alert>    alerts about a robot
 *   alertsUnresolved/<fleet>/<openedAt 16 hex>/<alert>         open or acknowledged (removed on resolve)
 *
 * Lists read newest first. The unresolved range is small (one alert per condition and subject), so
 * `state=open|acknowledged` reads it instead of the fleet's whole history. Only this module builds
 * these keys.
 */
import { keyPrefix, prefixRange, sortableNumber } from '../../../store/keys.js';
import { ALERTS_BY_FLEET as BY_FLEET, ALERTS_BY_ROBOT as BY_ROBOT, ALERTS_UNRESOLVED as UNRESOLVED, alertTimeId as timeId } from './keys.js';
import { keysetOver, type Keyset } from '../../../store/keyset.js';
import type { Store } from '../../../store/lmdb.js';
import type { AlertKind, AlertRecord, AlertState } from './records.js';

/** Writes a new alert with its index keys (asynchronous; resolves when committed). */
export function putNewAlert(store: Store, a: AlertRecord): Promise<unknown> {
  const puts: Promise<unknown>[] = [
    store.alerts.put(a.alertId, a),
    store.index.put(`${keyPrefix(BY_FLEET, a.fleetId)}${timeId(a)}`, true),
    store.index.put(`${keyPrefix(UNRESOLVED, a.fleetId)}${timeId(a)}`, true),
  ];
  if (a.robotId !== null) puts.push(store.index.put(`${keyPrefix(BY_ROBOT, a.fleetId, a.robotId)}${timeId(a)}`, true));
  return Promise.all(puts);
}

/** Writes a changed alert; a resolved one leaves the unresolved index (asynchronous). */
export function putChangedAlert(store: Store, a: AlertRecord): Promise<unknown> {
  const puts: Promise<unknown>[] = [store.alerts.put(a.alertId, a)];
  if (a.state === 'resolved') puts.push(store.index.remove(`${keyPrefix(UNRESOLVED, a.fleetId)}${timeId(a)}`));
  return Promise.all(puts);
}

/** Every unresolved alert of every fleet (read once at start to rebuild the open-condition map). */
export function unresolvedAlerts(store: Store): AlertRecord[] {
  const out: AlertRecord[] = [];
  for (const key of store.index.getKeys(prefixRange(`${UNRESOLVED}/`))) {
    const a = store.alerts.get(key.slice(key.lastIndexOf('/') + 1));
    if (a !== undefined && a.state !== 'resolved') out.push(a);
  }
  return out;
}

/** The filters of `GET …/alerts`. */
export interface AlertFilter {
  state?: AlertState;
  kind?: AlertKind;
  robotId?: string;
  /** Only alerts not resolved at this time (resolved after it, or unresolved). */
  unresolvedFromMs?: number;
  /** Only alerts opened at or before this time: the index read starts there. */
  unresolvedToMs?: number;
}

/**
 * A fleet's alerts matching `filter`, newest first, as a keyset. `current` gives the live state of an
 * alert whose latest change may not be committed yet (the alert service's `live`), so a list read
 * just after a resolve or an acknowledgement shows it.
 */
export function alertsOf(store: Store, fleetId: string, filter: AlertFilter, current?: (alertId: string) => AlertRecord | undefined): Keyset<AlertRecord> {
  const prefix = filter.state === 'open' || filter.state === 'acknowledged'
    ? keyPrefix(UNRESOLVED, fleetId)
    : filter.robotId !== undefined ? keyPrefix(BY_ROBOT, fleetId, filter.robotId) : keyPrefix(BY_FLEET, fleetId);
  const to = filter.unresolvedToMs !== undefined ? { to: sortableNumber(filter.unresolvedToMs + 1) } : {};
  return keysetOver(store.index, { prefix, reverse: true, ...to }, (key) => {
    const id = key.slice(key.lastIndexOf('/') + 1);
    const a = current?.(id) ?? store.alerts.get(id);
    if (a === undefined || a.fleetId !== fleetId) return undefined;
    if (filter.state !== undefined && a.state !== filter.state) return undefined;
    if (filter.kind !== undefined && a.kind !== filter.kind) return undefined;
    if (filter.robotId !== undefined && a.robotId !== filter.robotId) return undefined;
    if (filter.unresolvedFromMs !== undefined && a.resolvedAtMs !== null && a.resolvedAtMs <= filter.unresolvedFromMs) return undefined;
    return a;
  });
}

/** One alert of a fleet, or undefined (another fleet's alert is not found). */
export function alertOf(store: Store, fleetId: string, alertId: string): AlertRecord | undefined {
  const a = store.alerts.get(alertId);
  return a !== undefined && a.fleetId === fleetId ? a : undefined;
}
