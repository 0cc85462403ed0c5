/**
 * Fleet and robot records for the command path, decoded once per stored version.
 *
 * A robot command reads its fleet (access check) and each target robot (state and policy check). The
 * msgpack decode of those records was a measurable share of a stop's latency (bench/command-latency.md),
 * so these readers keep the decoded record against its stored bytes ({@link RawBytesCache}): every
 * call still reads the bytes, so a change by any process (`fleetgw admin ...`) is seen on the next
 * call, exactly as with `store.robots.get`.
 *
 * The records handed out are shared and frozen; code that changes a record reads its own copy with
 * `store.<db>.get` and writes that.
 */
import type { Store } from './lmdb.js';
import { RawBytesCache } from './raw-bytes-cache.js';
import type { FleetRecord, RobotRecord } from './records.js';

interface Caches {
  fleets: RawBytesCache<Readonly<FleetRecord>, FleetRecord>;
  robots: RawBytesCache<Readonly<RobotRecord>, RobotRecord>;
}

const perStore = new WeakMap<Store, Caches>();

function freeze<T extends object>(record: T): Readonly<T> {
  for (const v of Object.values(record)) if (typeof v === 'object' && v !== null && !ArrayBuffer.isView(v)) Object.freeze(v);
  return Object.freeze(record);
}

function caches(store: Store): Caches {
  let c = perStore.get(store);
  if (c === undefined) {
    c = { fleets: new RawBytesCache(store.fleets, (f) => freeze(f)), robots: new RawBytesCache(store.robots, (r) => freeze(r)) };
    perStore.set(store, c);
  }
  return c;
}

/** The fleet's current record (shared, frozen), or undefined. */
export function readFleet(store: Store, fleetId: string): Readonly<FleetRecord> | undefined {
  return caches(store).fleets.get(fleetId);
}

/** The robot's current record (shared, frozen), or undefined. */
export function readRobot(store: Store, robotId: string): Readonly<RobotRecord> | undefined {
  return caches(store).robots.get(robotId);
}
