/**
 * Fault records in LMDB (`faults` db) and the index keys that find them (all in `index`):
 *   faultsByFleet/<fleetId>/<raisedAt 16 hex>/<faultId>        every fault of a fleet, by raise time
 *   faultsByRobot/<robotId>/<raisedAt 16 hex>/<faultId>        every fault of a robot
 *   activeFaults/<fleetId>/<raisedAt 16 hex>/<faultId>         while the fault is active
 *   activeFaultsByRobot/<robotId>/<raisedAt 16 hex>/<faultId>  while the fault is active
 * This module is the only one to build these keys; the list routes read them through {@link faultsOf}.
 */
import { keyPrefix, lastSegment, prefixRange, sortableNumber } from '../../../store/keys.js';
import { ACTIVE, ACTIVE_BY_ROBOT, activeKeys, allKeys, BY_FLEET, BY_ROBOT } from './keys.js';
import { keysetOver, type Keyset } from '../../../store/keyset.js';
import type { Store } from '../../../store/lmdb.js';
import type { FaultRecord } from './records.js';

/** Inside a write transaction: stores a new (active) fault with its index keys. */
export function putNewFaultSync(store: Store, f: FaultRecord): void {
  store.faults.putSync(f.faultId, f);
  for (const k of allKeys(f)) store.index.putSync(k, true);
  if (f.state === 'active') for (const k of activeKeys(f)) store.index.putSync(k, true);
}

/** Inside a write transaction: stores a changed fault; drops its active keys once it cleared. */
export function putFaultSync(store: Store, f: FaultRecord): void {
  store.faults.putSync(f.faultId, f);
  if (f.state === 'cleared') for (const k of activeKeys(f)) store.index.removeSync(k);
}

/** The robot's active faults as stored (start-up and first sight of a robot). */
export function activeFaultsOfRobot(store: Store, robotId: string): FaultRecord[] {
  const out: FaultRecord[] = [];
  for (const key of store.index.getKeys(prefixRange(keyPrefix(ACTIVE_BY_ROBOT, robotId)))) {
    const f = store.faults.get(lastSegment(key));
    if (f !== undefined && f.state === 'active') out.push(f);
  }
  return out;
}

export interface FaultQuery {
  fleetId: string;
  /** Only this robot's faults. */
  robotId?: string;
  /** true: active only; false: cleared only; absent: both. */
  active?: boolean;
}

/**
 * The faults matching the query, newest first (by raise time, then fault id), as a keyset. Active
 * faults are read from their own index, so `active=true` never walks the history; `active=false`
 * walks the history and skips the active ones. Faults of another fleet (a robot that moved) are
 * never returned.
 */
export function faultsOf(store: Store, q: FaultQuery): Keyset<FaultRecord> {
  const activeOnly = q.active === true;
  const prefix = q.robotId !== undefined
    ? keyPrefix(activeOnly ? ACTIVE_BY_ROBOT : BY_ROBOT, q.robotId)
    : keyPrefix(activeOnly ? ACTIVE : BY_FLEET, q.fleetId);
  return keysetOver(store.index, { prefix, reverse: true }, (key) => {
    const f = store.faults.get(lastSegment(key));
    if (f === undefined || f.fleetId !== q.fleetId) return undefined;
    if (q.active === false && f.state === 'active') return undefined;
    return f;
  });
}

/** One fault by id, or undefined. */
export function getFault(store: Store, faultId: string): FaultRecord | undefined {
  return store.faults.get(faultId);
}

/**
 * Inside a write transaction: removes a cleared fault and its index keys (retention). Active faults
 * are never removed.
 */
export function removeFaultSync(store: Store, f: FaultRecord): void {
  for (const k of allKeys(f)) store.index.removeSync(k);
  for (const k of activeKeys(f)) store.index.removeSync(k);
  store.faults.removeSync(f.faultId);
}

/**
 * Up to `limit` faults of the fleet raised before `beforeMs`, oldest first, with the number of index
 * keys read (retention walks these).
 */
export function oldFaultsOfFleet(store: Store, fleetId: string, beforeMs: number, limit: number): { faults: FaultRecord[]; scanned: number } {
  const prefix = keyPrefix(BY_FLEET, fleetId);
  const faults: FaultRecord[] = [];
  let scanned = 0;
  for (const key of store.index.getKeys({ start: prefix, end: `${prefix}${sortableNumber(beforeMs)}`, limit })) {
    scanned++;
    const f = store.faults.get(lastSegment(key));
    if (f !== undefined) faults.push(f);
  }
  return { faults, scanned };
}
