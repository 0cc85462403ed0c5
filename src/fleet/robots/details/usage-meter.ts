/**
 * Keeps each robot's usage totals (usage.ts).
 *
 * Distance and operating time come from the robot's telemetry snapshots: the ingest's snapshot writer
 * tells the meter of each snapshot it writes (the robot's newest sample, at most one a second per
 * robot: `observe`), and the meter adds the distance between that position and the last one it
 * measured, and the gateway time between them. A gap longer than `maxGapMs` (the robot was offline or
 * silent) adds neither; a jump faster than `maxSpeedMps` (a GPS glitch, a robot carried away) adds no
 * distance.
 *
 * Why pushed, not polled: reading and decoding every online robot's snapshot from LMDB once a second
 * was a visible share of the gateway's main thread at 1,000 robots x 10 Hz by a CPU profile
 * (bench/notes/telemetry-ingest.md, "Targets 1 and 2 again: connection window, young generation,
 * usage meter"); the writer already holds the bytes, and only the row's leading columns are read.
 *
 * Missions completed and failed are counted as runs finish (`runFinished`, fed by the run tracker)
 * and saved at once; a robot's first record starts from the run records kept at that time, so
 * reading the details never walks the run history.
 *
 * Distance and time are written to LMDB every `saveEveryMs` and when the meter stops, so a crash loses
 * at most that much measuring. Cost: one read of a row's leading numbers per written snapshot
 * (row-scalars.ts; nothing allocated). Memory: one small slot per robot seen since start (bounded by the registered robots).
 */
import type { Logger } from 'pino';
import type { RunRecord, RunState } from '../../../missions/runs/records.js';
import { isFinished } from '../../../missions/runs/runs.js';
import type { Store } from '../../../store/lmdb.js';
import { newSnapshotScalars, readSnapshotScalars } from '../../../telemetry/sample/index.js';
import { missionCounts } from './details.js';
import { saveUsage, usageOf, type RobotUsageRecord } from './usage.js';
import { cachedRobot } from '../../../store/identity-reads.js';

export interface UsageMeterOptions {
  maxGapMs?: number;
  maxSpeedMps?: number;
  saveEveryMs?: number;
  log?: Logger;
}

/** Clocks and position of the last snapshot measured. */
interface LastPosition {
  /** Robot clock of the sample. */
  tsMs: number;
  /** Gateway clock when the sample arrived. */
  receivedAtMs: number;
  lat: number;
  lon: number;
}

interface Slot {
  rec: RobotUsageRecord;
  /** The last snapshot measured (null before the first); updated in place, not replaced. */
  last: LastPosition | null;
  dirty: boolean;
}

const EARTH_RADIUS_M = 6_371_008.8;

/** Great-circle distance in metres between two WGS 84 positions. */
export function haversineM(lat1: number, lon1: number, lat2: number, lon2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLon = (lon2 - lon1) * rad;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(a)));
}

export class UsageMeter {
  private readonly slots = new Map<string, Slot>();
  private saveTimer: NodeJS.Timeout | null = null;
  private readonly maxGapMs: number;
  private readonly maxSpeedMps: number;
  private lastErrorLogMs = Number.NEGATIVE_INFINITY;
  /** Filled from each snapshot in turn (measure()). */
  private readonly scalars = newSnapshotScalars();

  constructor(
    private readonly store: Store,
    private readonly opts: UsageMeterOptions = {},
  ) {
    this.maxGapMs = opts.maxGapMs ?? 10_000;
    this.maxSpeedMps = opts.maxSpeedMps ?? 20;
  }

  start(): void {
    this.saveTimer = setInterval(() => void this.save(), this.opts.saveEveryMs ?? 10_000);
    this.saveTimer.unref();
  }

  /** Stops the periodic save and writes what was measured since the last save. */
  async stop(): Promise<void> {
    if (this.saveTimer) clearInterval(this.saveTimer);
    this.saveTimer = null;
    await this.save();
  }

  /** The robot's totals including what is not saved yet; undefined for an unknown robot. */
  usage(robotId: string): RobotUsageRecord | undefined {
    const slot = this.slotOf(robotId);
    return slot === undefined ? undefined : { ...slot.rec };
  }

  /** A run changed state (run tracker): counts it once when it just completed or failed, saved at once. */
  runFinished(run: RunRecord, previous: RunState): void {
    if (isFinished(previous) || (run.state !== 'completed' && run.state !== 'failed')) return;
    const slot = this.slotOf(run.robotId);
    if (slot === undefined) return;
    if (run.state === 'completed') slot.rec.missionsCompleted++;
    else slot.rec.missionsFailed++;
    void saveUsage(this.store, { ...slot.rec }).catch((err: unknown) => this.opts.log?.error({ err, robotId: run.robotId }, 'robot usage totals could not be written'));
  }

  /**
   * A snapshot of `robotId` was written (the snapshot writer's `onWritten`: format byte + row, read
   * before returning, not kept). A snapshot not newer than the last one measured adds nothing. Never
   * throws (the writer's hook must not): a failure, e.g. reading a robot's first record from LMDB, is
   * logged at most once a minute and that snapshot is not measured.
   */
  observe(robotId: string, value: Uint8Array): void {
    try {
      this.measure(robotId, value);
    } catch (err) {
      const t = Date.now();
      if (t - this.lastErrorLogMs < 60_000) return;
      this.lastErrorLogMs = t;
      this.opts.log?.error({ err, robotId }, 'robot usage: a telemetry snapshot could not be measured');
    }
  }

  private measure(robotId: string, value: Uint8Array): void {
    // Read into one reused object and copied into the slot's: nothing allocated per snapshot
    // (src/telemetry/sample/row-scalars.ts says why that matters at light load).
    const snap = this.scalars;
    if (!readSnapshotScalars(value, snap)) return;
    const slot = this.slotOf(robotId);
    if (slot === undefined) return;
    const last = slot.last;
    if (last !== null && snap.tsMs <= last.tsMs) return;
    if (last !== null) {
      const dtMs = snap.receivedAtMs - last.receivedAtMs;
      if (dtMs > 0 && dtMs <= this.maxGapMs) {
        slot.rec.operatingMs += dtMs;
        const d = haversineM(last.lat, last.lon, snap.lat, snap.lon);
        if (Number.isFinite(d) && d / (dtMs / 1000) <= this.maxSpeedMps) slot.rec.distanceM += d;
      }
    }
    slot.rec.firstSeenAtMs ??= snap.receivedAtMs;
    slot.rec.lastSeenAtMs = Math.max(slot.rec.lastSeenAtMs ?? 0, snap.receivedAtMs);
    if (last === null) slot.last = { tsMs: snap.tsMs, receivedAtMs: snap.receivedAtMs, lat: snap.lat, lon: snap.lon };
    else {
      last.tsMs = snap.tsMs;
      last.receivedAtMs = snap.receivedAtMs;
      last.lat = snap.lat;
      last.lon = snap.lon;
    }
    slot.dirty = true;
  }

  /** The robot's slot: from memory, else its stored record, else a new record seeded from its runs. */
  private slotOf(robotId: string): Slot | undefined {
    let slot = this.slots.get(robotId);
    if (slot !== undefined) return slot;
    const stored = usageOf(this.store, robotId);
    let rec: RobotUsageRecord;
    if (stored !== undefined) {
      // Records written before mission counts existed have none.
      rec = { ...stored, missionsCompleted: stored.missionsCompleted ?? 0, missionsFailed: stored.missionsFailed ?? 0 };
    } else {
      const robot = cachedRobot(this.store, robotId);
      if (robot === undefined) return undefined;
      // Once per robot: the runs kept so far (later ones are counted as they finish).
      const counts = missionCounts(this.store, robot);
      rec = { robotId, firstSeenAtMs: null, lastSeenAtMs: null, distanceM: 0, operatingMs: 0, missionsCompleted: counts.completed, missionsFailed: counts.failed };
    }
    slot = { rec, last: null, dirty: stored === undefined };
    this.slots.set(robotId, slot);
    return slot;
  }

  private async save(): Promise<void> {
    const puts: Promise<boolean>[] = [];
    for (const slot of this.slots.values()) {
      if (!slot.dirty) continue;
      slot.dirty = false;
      puts.push(saveUsage(this.store, { ...slot.rec }));
    }
    try {
      await Promise.all(puts);
    } catch (err) {
      this.opts.log?.error({ err }, 'robot usage totals could not be written');
    }
  }
}
