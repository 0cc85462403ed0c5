/**
 * Fleet and robot records for the command path, decoded once per stored version.
 *
 * A robot command reads its fleet (access check) and each target robot (state and policy check). The
 * msgpack decode of those records was a measurable share of a stop's latency (bench/notes/command-latency.md),
 * so these readers keep the decoded record against its stored bytes ({@link RawBytesCache}): every
 * call still reads the bytes, so a change by any process (`fleetgw admin ...`) is seen on the next
 * call, exactly as with `store.robots.get`.
 *
 * One per store, built by openStore with the database handles it reads (`store.records`), so the
 * cache lives and dies with the environment it mirrors.
 *
 * The records handed out are shared and frozen; code that changes a record reads its own copy with
 * `store.<db>.get` and writes that.
 */
import type { Database } from 'lmdb';
import { RawBytesCache } from './raw-bytes-cache.js';
import type { FleetRecord, RobotRecord } from './records.js';

function freeze<T extends object>(record: T): Readonly<T> {
  for (const v of Object.values(record)) if (typeof v === 'object' && v !== null && !ArrayBuffer.isView(v)) Object.freeze(v);
  return Object.freeze(record);
}

export class RecordCache {
  private readonly fleets: RawBytesCache<Readonly<FleetRecord>, FleetRecord>;
  private readonly robots: RawBytesCache<Readonly<RobotRecord>, RobotRecord>;

  constructor(dbs: { fleets: Database<FleetRecord, string>; robots: Database<RobotRecord, string> }) {
    this.fleets = new RawBytesCache(dbs.fleets, (f) => freeze(f));
    this.robots = new RawBytesCache(dbs.robots, (r) => freeze(r));
  }

  /** The fleet's current record (shared, frozen), or undefined. */
  fleet(fleetId: string): Readonly<FleetRecord> | undefined {
    return this.fleets.get(fleetId);
  }

  /** The robot's current record (shared, frozen), or undefined. */
  robot(robotId: string): Readonly<RobotRecord> | undefined {
    return this.robots.get(robotId);
  }
}
