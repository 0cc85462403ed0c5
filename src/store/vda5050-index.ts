/**
 * Robots by VDA 5050 identity, so the MQTT broker finds the robot of a connecting
 * `manufacturer/serialNumber` with one key lookup (index key
 * `robotsByVda5050/<manufacturer>/<serialNumber>/<robotId>` in `index`, written with the robot by
 * identity.ts). Neither part may contain `/` (src/fleet/robots/vda5050-identity.ts checks that before
 * anything is written), so a key names exactly one identity. Every hit is checked against the robot
 * record, so a key left behind by a record changed elsewhere never yields a wrong robot.
 *
 * Each change also bumps the meta counter `vda5050Bindings`: a running gateway polls that one key to
 * see bindings written by another process (`fleetgw admin add-robot --vda5050`).
 */
import { keyPrefix, lastSegment, prefixRange } from './keys.js';
import type { Store } from './lmdb.js';
import type { RobotRecord } from './records.js';

const ROBOTS_BY_VDA5050 = 'robotsByVda5050';
/** The meta key counting binding changes. */
export const VDA5050_BINDINGS_VERSION = 'vda5050Bindings';

/** A robot's VDA 5050 identity as stored on its record. */
export type StoredVda5050Binding = NonNullable<RobotRecord['vda5050']>;

type Bound = Pick<RobotRecord, 'robotId' | 'vda5050'>;

const keyOf = (robotId: string, b: StoredVda5050Binding): string => `${keyPrefix(ROBOTS_BY_VDA5050, b.manufacturer, b.serialNumber)}${robotId}`;

/** Inside a write transaction: marks the bindings changed (a bound robot moved to another fleet). */
export function touchVda5050Bindings(store: Store): void {
  bump(store);
}

function bump(store: Store): void {
  const v = store.meta.get(VDA5050_BINDINGS_VERSION);
  store.meta.putSync(VDA5050_BINDINGS_VERSION, (typeof v === 'number' ? v : 0) + 1);
}

/** The robot bound to this identity (active or not), or undefined. */
export function robotOfVda5050(store: Store, manufacturer: string, serialNumber: string): Readonly<RobotRecord> | undefined {
  for (const key of store.index.getKeys(prefixRange(keyPrefix(ROBOTS_BY_VDA5050, manufacturer, serialNumber)))) {
    const r = store.records.robot(lastSegment(key));
    if (r?.vda5050 !== undefined && r.vda5050.manufacturer === manufacturer && r.vda5050.serialNumber === serialNumber) return r;
  }
  return undefined;
}

/** Inside a write transaction: files the robot under its identity (no-op without one). */
export function putVda5050Key(store: Store, r: Bound): void {
  if (r.vda5050 === undefined) return;
  store.index.putSync(keyOf(r.robotId, r.vda5050), true);
  bump(store);
}

/** Inside a write transaction: removes the robot's identity key (before a change or removal). */
export function removeVda5050Key(store: Store, r: Bound): void {
  if (r.vda5050 === undefined) return;
  store.index.removeSync(keyOf(r.robotId, r.vda5050));
  bump(store);
}

/** Every robot with a VDA 5050 identity, in identity order. */
export function vda5050Robots(store: Store): Readonly<RobotRecord>[] {
  const out: Readonly<RobotRecord>[] = [];
  for (const key of store.index.getKeys(prefixRange(`${ROBOTS_BY_VDA5050}/`))) {
    const r = store.records.robot(lastSegment(key));
    // The key's identity must still be the record's: a stale key is skipped, never reported.
    if (r?.vda5050 !== undefined && key === keyOf(r.robotId, r.vda5050)) out.push(r);
  }
  return out;
}

/** The binding change counter: differs from an earlier read when any binding changed since. */
export function vda5050BindingsVersion(store: Store): number {
  const v = store.meta.get(VDA5050_BINDINGS_VERSION);
  return typeof v === 'number' ? v : 0;
}
