/**
 * Each robot's latest telemetry snapshot as the rest of the gateway reads it. The telemetry module owns
 * the `snapshots` database (the ingest's snapshot writer is its only writer); views, robot selection
 * and alerts read it through these functions instead of opening the database themselves.
 */
import type { Store } from '../../store/lmdb.js';
import { RawBytesCache, readRaw } from '../../store/raw-bytes-cache.js';
import { decodeSnapshot, snapshotConditions, type TelemetrySnapshot } from '../sample/index.js';

/** Reads of the latest snapshots. */
export interface LatestSnapshots {
  /** The robot's latest snapshot, decoded on every call; undefined before its first report. */
  latest(robotId: string): TelemetrySnapshot | undefined;
  /**
   * The snapshot's stored bytes, or undefined before its first report, for callers that cache a view
   * and compare bytes to see a newer sample. The view is over lmdb's reusable read buffer: valid only
   * until the next read, so compare or copy it right away.
   */
  rawBytes(robotId: string): Buffer | undefined;
  /**
   * A reader that decodes each robot's snapshot once per stored version (every call still compares
   * the stored bytes, so a newer sample is seen at once). Bound: one entry per robot, at most `maxEntries`.
   */
  cached(maxEntries: number): Pick<LatestSnapshots, 'latest'>;
}

/** The latest snapshots of `store` (the telemetry plugin provides them as part `snapshots`). */
export function latestSnapshots(store: Pick<Store, 'snapshots'>): LatestSnapshots {
  const db = store.snapshots;
  return {
    latest: (robotId) => decodeSnapshot(db.get(robotId)),
    rawBytes: (robotId) => readRaw(db, robotId),
    cached: (maxEntries) => {
      const cache = new RawBytesCache<TelemetrySnapshot | undefined, unknown>(db, (stored) => decodeSnapshot(stored), maxEntries);
      return { latest: (robotId) => cache.get(robotId) };
    },
  };
}

/** The alert conditions (e-stop, battery) of the robot's stored snapshot, read from its prefix; undefined before its first report. */
export function latestConditions(store: Pick<Store, 'snapshots'>, robotId: string): ReturnType<typeof snapshotConditions> {
  return snapshotConditions(store.snapshots.get(robotId));
}
