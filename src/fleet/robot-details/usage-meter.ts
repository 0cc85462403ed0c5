/**
 * Measures each online robot's distance and operating time from its telemetry snapshot (the newest
 * sample the ingest wrote to LMDB, at most one a second): every `pollMs` it reads the snapshot of
 * each online robot and, when a newer sample arrived, adds the distance between the two positions
 * and the gateway time between them. A gap longer than `maxGapMs` (the robot was offline or silent)
 * adds neither; a jump faster than `maxSpeedMps` (a GPS glitch, a robot carried away) adds no distance.
 *
 * Totals are written to LMDB every `saveEveryMs` and when the meter stops, so a crash loses at most
 * that much measuring. Cost: one LMDB read and decode per online robot per poll (microseconds).
 * Memory: one small slot per robot that reported since start (bounded by the registered robots).
 */
import type { Logger } from 'pino';
import type { Store } from '../../store/lmdb.js';
import { decodeSnapshot } from '../../telemetry/snapshot-codec.js';
import { saveUsage, usageOf, type RobotUsageRecord } from './usage.js';

export interface UsageMeterOptions {
  /** Robots whose link is up now. */
  online(): Iterable<string>;
  pollMs?: number;
  maxGapMs?: number;
  maxSpeedMps?: number;
  saveEveryMs?: number;
  log?: Logger;
}

interface Slot {
  rec: RobotUsageRecord;
  tsMs: number;
  receivedAtMs: number;
  lat: number;
  lon: number;
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
  private pollTimer: NodeJS.Timeout | null = null;
  private saveTimer: NodeJS.Timeout | null = null;
  private readonly maxGapMs: number;
  private readonly maxSpeedMps: number;

  constructor(
    private readonly store: Store,
    private readonly opts: UsageMeterOptions,
  ) {
    this.maxGapMs = opts.maxGapMs ?? 10_000;
    this.maxSpeedMps = opts.maxSpeedMps ?? 20;
  }

  start(): void {
    this.pollTimer = setInterval(() => this.poll(), this.opts.pollMs ?? 1000);
    this.pollTimer.unref();
    this.saveTimer = setInterval(() => void this.save(), this.opts.saveEveryMs ?? 10_000);
    this.saveTimer.unref();
  }

  /** Stops polling and writes what was measured since the last save. */
  async stop(): Promise<void> {
    if (this.pollTimer) clearInterval(this.pollTimer);
    if (this.saveTimer) clearInterval(this.saveTimer);
    this.pollTimer = null;
    this.saveTimer = null;
    await this.save();
  }

  /** The robot's totals including what is not saved yet; undefined before it was seen. */
  usage(robotId: string): RobotUsageRecord | undefined {
    const slot = this.slots.get(robotId);
    return slot !== undefined ? { ...slot.rec } : usageOf(this.store, robotId);
  }

  /** Reads each online robot's snapshot once (also called by tests). */
  poll(): void {
    for (const robotId of this.opts.online()) {
      const snap = decodeSnapshot(this.store.snapshots.get(robotId));
      if (snap === undefined) continue;
      let slot = this.slots.get(robotId);
      if (slot === undefined) {
        const rec = usageOf(this.store, robotId) ?? { robotId, firstSeenAtMs: snap.receivedAtMs, lastSeenAtMs: snap.receivedAtMs, distanceM: 0, operatingMs: 0 };
        slot = { rec: { ...rec }, tsMs: snap.tsMs, receivedAtMs: snap.receivedAtMs, lat: snap.latitude, lon: snap.longitude, dirty: true };
        slot.rec.lastSeenAtMs = Math.max(slot.rec.lastSeenAtMs, snap.receivedAtMs);
        this.slots.set(robotId, slot);
        continue;
      }
      if (snap.tsMs <= slot.tsMs) continue;
      const dtMs = snap.receivedAtMs - slot.receivedAtMs;
      if (dtMs > 0 && dtMs <= this.maxGapMs) {
        slot.rec.operatingMs += dtMs;
        const d = haversineM(slot.lat, slot.lon, snap.latitude, snap.longitude);
        if (Number.isFinite(d) && d / (dtMs / 1000) <= this.maxSpeedMps) slot.rec.distanceM += d;
      }
      slot.rec.lastSeenAtMs = Math.max(slot.rec.lastSeenAtMs, snap.receivedAtMs);
      slot.tsMs = snap.tsMs;
      slot.receivedAtMs = snap.receivedAtMs;
      slot.lat = snap.latitude;
      slot.lon = snap.longitude;
      slot.dirty = true;
    }
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
