/**
 * The serialized robot view (GET /v1/robots/{robot_id}) per robot, reused while nothing it is built
 * from has changed.
 *
 * Freshness: every call reads the robot record's and the snapshot's raw bytes from LMDB and asks the
 * link registry whether the robot is online and its link conflict; the cached JSON is used only when
 * all four equal what it was built from (the registry returns the same conflict object until it changes), so an answer is exactly what building it afresh would give. What is saved is the
 * msgpack decode of both records, the mapping and `JSON.stringify` of the ~1 KB view: most of the
 * route's cost (bench/README.md#http-read). A robot streaming telemetry changes its snapshot at its report rate
 * (10 Hz by default), so readers polling faster than that still mostly hit.
 *
 * Bound: at most `maxEntries` robots; past it the oldest inserted entry is dropped.
 */
import { assertRobotVisible } from '../auth/access.js';
import type { AuthContext } from '../auth/context.js';
import type { LinkConflictView } from '../protocol/robot-link.js';
import type { IdentityReads } from '../store/identity-reads.js';
import type { RobotRecord } from '../store/records.js';
import type { LatestSnapshots } from '../telemetry/snapshots/index.js';
import { toRobotView } from './robot-view.js';

interface Entry {
  robotBytes: Buffer;
  robot: RobotRecord;
  /** null when the robot had no snapshot yet. */
  snapshotBytes: Buffer | null;
  online: boolean;
  conflict: LinkConflictView | null;
  json: string;
}

export class RobotViewCache {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly identity: Pick<IdentityReads, 'robot' | 'robotBytes'>,
    private readonly snapshots: Pick<LatestSnapshots, 'latest' | 'rawBytes'>,
    private readonly isOnline: (robotId: string) => boolean,
    private readonly maxEntries = 10_000,
    private readonly linkConflict: (robotId: string) => LinkConflictView | null = () => null,
  ) {}

  /**
   * The robot's view as JSON text.
   * @throws ApiError 404 `robot_not_found` / 403 `forbidden_fleet`, by the rules of requireRobot
   */
  json(auth: AuthContext, robotId: string): string {
    // readRaw views lmdb's one reusable buffer: each value is compared (or copied) before the next
    // read. All reads share the read transaction of this synchronous call.
    const rawRobot = this.identity.robotBytes(robotId);
    let entry = this.entries.get(robotId);
    if (entry !== undefined && (rawRobot === undefined || !entry.robotBytes.equals(rawRobot))) {
      this.entries.delete(robotId);
      entry = undefined;
    }
    const robotBytes = entry === undefined && rawRobot !== undefined ? Buffer.from(rawRobot) : null;
    const robot = entry?.robot ?? (rawRobot === undefined ? undefined : this.identity.robot(robotId));
    assertRobotVisible(auth, robotId, robot);

    const rawSnap = this.snapshots.rawBytes(robotId);
    const online = this.isOnline(robotId);
    const conflict = this.linkConflict(robotId);
    if (entry !== undefined && entry.online === online && entry.conflict === conflict && sameBytes(entry.snapshotBytes, rawSnap)) return entry.json;

    const snapshotBytes = rawSnap === undefined ? null : Buffer.from(rawSnap);
    const snap = rawSnap === undefined ? undefined : this.snapshots.latest(robotId);
    const json = JSON.stringify(toRobotView(robot, snap, online, conflict));
    if (entry === undefined && this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(robotId, { robotBytes: entry?.robotBytes ?? robotBytes!, robot, snapshotBytes, online, conflict, json });
    return json;
  }
}

function sameBytes(cached: Buffer | null, raw: Buffer | undefined): boolean {
  return cached === null ? raw === undefined : raw !== undefined && cached.equals(raw);
}
