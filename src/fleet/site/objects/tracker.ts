/**
 * The object tracker: the one owner of tracked objects (docs/objects.md). Robot
 * detections arrive over the link and are matched to records (a track the robot already reported, else
 * the nearest object of the same class within the match radius, else a new object); operators create,
 * edit and delete through REST; robot objects not seen again for the TTL are removed by a sweep.
 *
 * Every write is one LMDB transaction; the in-memory match grid is changed inside the same
 * transaction callback, so it follows what is committed. Bounds: at most `maxPerFleet` objects per
 * fleet (new robot objects are dropped and counted at the bound, a manual create is 409); at most
 * {@link MAX_DETECTIONS_PER_FRAME} detections per frame; one frame per robot waiting while its
 * previous one is written (a newer frame replaces the waiting one: detections are a live view).
 */
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { apiError } from '../../../errors/catalog.js';
import type { EventLog } from '../../../events/index.js';
import type { ObjectDetections } from '../../../gen/fleetgw/v1/robot_link_pb.js';
import type { RobotLink } from '../../../protocol/robot-link.js';
import type { Store } from '../../../store/lmdb.js';
import type { FleetRecord } from '../../../store/records.js';
import { checkDetection, MAX_DETECTIONS_PER_FRAME, type Detection } from './detections.js';
import { MatchGrid } from './match-grid.js';
import { allObjects, countObjects, dropExpiryKeySync, expiredObjects, getObject, objectOfTrack, putObjectSync, removeObjectSync, unbindTrackSync } from './object-store.js';
import type { ObjectPosition, ObjectRecord } from './records.js';
import type { Geometry } from '../../../missions/catalog/records.js';
import { robotRecord } from '../../../store/identity-reads.js';

/** Objects a fleet may hold (robot and manual together). */
export const MAX_OBJECTS_PER_FLEET = 5000;
/** Detections of the same class within this distance of a tracked object are that object. */
export const MATCH_RADIUS_M = 1.5;
/** Track bindings kept per object. */
const MAX_TRACKS = 8;
/** Expired objects removed per sweep pass (the next pass, a second later, takes the rest). */
const SWEEP_BATCH = 500;

export interface ObjectTrackerOptions {
  /** A robot object not seen again for this long is removed. */
  ttlMs: number;
  maxPerFleet?: number;
  matchRadiusM?: number;
  sweepEveryMs?: number;
  now?: () => number;
  log?: Pick<Logger, 'warn' | 'error'>;
}

export interface ObjectTrackerStats {
  framesApplied: number;
  framesReplaced: number;
  framesRefused: number;
  detectionsApplied: number;
  detectionsInvalid: number;
  detectionsOverFrameLimit: number;
  detectionsDroppedAtBound: number;
  expired: number;
}

/** A manual object as an operator creates it. */
export interface ManualObjectInput {
  objectClass: string;
  position: ObjectPosition;
  geometry?: Geometry | null;
  label?: string | null;
}

/** An operator's edit: omitted fields are kept; `geometry` / `label` null clear them. */
export type ObjectPatch = Partial<ManualObjectInput>;

interface Frame {
  fleetId: string;
  detections: Detection[];
}

export class ObjectTracker {
  private readonly grid: MatchGrid;
  private readonly maxPerFleet: number;
  private readonly now: () => number;
  private readonly writing = new Set<string>();
  private readonly waiting = new Map<string, Frame>();
  private readonly unlisten: () => void;
  private sweepTimer: NodeJS.Timeout | null = null;
  private sweeping: Promise<unknown> | null = null;
  private lastBoundWarnMs = 0;
  private readonly counters: ObjectTrackerStats = {
    framesApplied: 0, framesReplaced: 0, framesRefused: 0, detectionsApplied: 0, detectionsInvalid: 0,
    detectionsOverFrameLimit: 0, detectionsDroppedAtBound: 0, expired: 0,
  };

  constructor(
    private readonly store: Store,
    private readonly events: EventLog,
    link: Pick<RobotLink, 'listen'>,
    private readonly opts: ObjectTrackerOptions,
  ) {
    this.grid = new MatchGrid(opts.matchRadiusM ?? MATCH_RADIUS_M);
    this.maxPerFleet = opts.maxPerFleet ?? MAX_OBJECTS_PER_FLEET;
    this.now = opts.now ?? Date.now;
    for (const o of allObjects(store)) this.file(o);
    this.unlisten = link.listen({ onObjectDetections: (robotId, fleetId, frame) => this.receive(robotId, fleetId, frame) });
    this.sweepTimer = setInterval(() => this.sweepSoon(), opts.sweepEveryMs ?? 1000);
    this.sweepTimer.unref();
  }

  /** Counters since start (tests, logs). */
  stats(): ObjectTrackerStats {
    return { ...this.counters };
  }

  /** Stops listening and sweeping; waits for writes in progress. */
  async close(): Promise<void> {
    this.unlisten();
    if (this.sweepTimer) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    await this.sweeping;
    await this.store.root.committed;
  }

  /** One robot frame: applied now, or kept as the robot's one waiting frame while its last is written. */
  receive(robotId: string, sessionFleetId: string, frame: ObjectDetections): void {
    const list = frame.detections.slice(0, MAX_DETECTIONS_PER_FRAME);
    this.counters.detectionsOverFrameLimit += frame.detections.length - list.length;
    const detections: Detection[] = [];
    for (const d of list) {
      const ok = checkDetection(d);
      if (ok) detections.push(ok);
      else this.counters.detectionsInvalid++;
    }
    if (detections.length === 0) return;
    const f: Frame = { fleetId: sessionFleetId, detections };
    if (this.writing.has(robotId)) {
      if (this.waiting.has(robotId)) this.counters.framesReplaced++;
      this.waiting.set(robotId, f);
      return;
    }
    this.apply(robotId, f);
  }

  /** Resolves once every frame received so far is written (tests). */
  async settled(): Promise<void> {
    while (this.writing.size > 0 || this.waiting.size > 0) await new Promise((r) => setTimeout(r, 5));
    await this.store.root.committed;
  }

  private apply(robotId: string, frame: Frame): void {
    this.writing.add(robotId);
    void this.write(robotId, frame)
      .catch((err: unknown) => this.opts.log?.error({ err, robotId }, 'objects: a detection frame was not written'))
      .finally(() => {
        this.writing.delete(robotId);
        const next = this.waiting.get(robotId);
        if (next) {
          this.waiting.delete(robotId);
          this.apply(robotId, next);
        }
      });
  }

  private async write(robotId: string, frame: Frame): Promise<void> {
    const { store, events } = this;
    await store.root.transaction(() => {
      const robot = robotRecord(store, robotId);
      // A robot transferred since its session authenticated reports into its old fleet: refused
      // until it reconnects into the new one (docs/robot-admin.md).
      if (!robot || robot.fleetId !== frame.fleetId) {
        this.counters.framesRefused++;
        return;
      }
      const nowMs = this.now();
      const matched = new Set<string>();
      let count: number | null = null;
      for (const d of frame.detections) {
        const prev = this.match(robot.fleetId, robotId, d, matched);
        if (prev) {
          matched.add(prev.objectId);
          this.putSync(prev, this.sighted(prev, robotId, d, nowMs), { robotId, trackId: d.trackId });
          this.counters.detectionsApplied++;
          continue;
        }
        count ??= countObjects(store, robot.fleetId);
        if (count >= this.maxPerFleet) {
          this.counters.detectionsDroppedAtBound++;
          this.warnBound(robot.fleetId, nowMs);
          continue;
        }
        count++;
        const o = this.newRobotObject(robot.orgId, robot.fleetId, robotId, d, nowMs);
        matched.add(o.objectId);
        this.putSync(undefined, o, { robotId, trackId: d.trackId });
        events.append({ fleetId: o.fleetId, correlationId: o.objectId, atMs: nowMs, kind: 'object.detected', subject: { type: 'object', id: o.objectId }, data: { objectClass: o.objectClass, robotId, trackId: d.trackId || null } });
        this.counters.detectionsApplied++;
      }
      this.counters.framesApplied++;
    });
  }

  /** The matching rule (docs/objects.md, "Matching"): the robot's own track, else the nearest of the class. */
  private match(fleetId: string, robotId: string, d: Detection, matched: ReadonlySet<string>): ObjectRecord | undefined {
    if (d.trackId !== '') {
      const id = objectOfTrack(this.store, robotId, d.trackId);
      const o = id !== undefined && !matched.has(id) ? getObject(this.store, fleetId, id) : undefined;
      if (o && o.objectClass === d.objectClass) return o;
    }
    for (;;) {
      const id = this.grid.nearest(fleetId, d.objectClass, d.latitude, d.longitude, matched);
      if (id === undefined) return undefined;
      const o = getObject(this.store, fleetId, id);
      if (o) return o;
      this.grid.remove(id); // filed but gone (should not happen): forget it and look again
    }
  }

  private sighted(prev: ObjectRecord, robotId: string, d: Detection, nowMs: number): ObjectRecord {
    const manual = prev.source === 'manual';
    const tracks = d.trackId === '' || prev.tracks.some((t) => t.robotId === robotId && t.trackId === d.trackId)
      ? prev.tracks
      : [...prev.tracks, { robotId, trackId: d.trackId }];
    return {
      ...prev,
      // An operator placed a manual object: a sighting confirms it, never moves it or makes it expire.
      ...(manual ? {} : {
        position: { latitude: d.latitude, longitude: d.longitude, elevationM: d.elevationM },
        geometry: d.geometry ?? prev.geometry,
        expiresAtMs: nowMs + this.opts.ttlMs,
      }),
      lastReportedBy: { robotId, trackId: d.trackId || null },
      confidence: d.confidence,
      sightings: prev.sightings + 1,
      lastSeenMs: nowMs,
      tracks,
      updatedAtMs: nowMs,
    };
  }

  private newRobotObject(orgId: string, fleetId: string, robotId: string, d: Detection, nowMs: number): ObjectRecord {
    return {
      objectId: randomUUID(),
      orgId,
      fleetId,
      objectClass: d.objectClass,
      position: { latitude: d.latitude, longitude: d.longitude, elevationM: d.elevationM },
      geometry: d.geometry,
      source: 'robot',
      label: null,
      lastReportedBy: { robotId, trackId: d.trackId || null },
      confidence: d.confidence,
      sightings: 1,
      firstSeenMs: nowMs,
      lastSeenMs: nowMs,
      expiresAtMs: nowMs + this.opts.ttlMs,
      tracks: [],
      createdBy: null,
      updatedAtMs: nowMs,
    };
  }

  /** Inside a transaction: writes the record, its keys and the grid; trims old track bindings. */
  private putSync(prev: ObjectRecord | undefined, next: ObjectRecord, track?: { robotId: string; trackId: string }): void {
    let rec = next;
    if (track && track.trackId !== '' && !rec.tracks.some((t) => t.robotId === track.robotId && t.trackId === track.trackId)) rec = { ...rec, tracks: [...rec.tracks, track] };
    if (rec.tracks.length > MAX_TRACKS) {
      const dropped = rec.tracks.slice(0, rec.tracks.length - MAX_TRACKS);
      rec = { ...rec, tracks: rec.tracks.slice(-MAX_TRACKS) };
      for (const t of dropped) unbindTrackSync(this.store, t, rec.objectId);
    }
    putObjectSync(this.store, prev, rec, track);
    this.file(rec);
  }

  private file(o: ObjectRecord): void {
    this.grid.put({ objectId: o.objectId, fleetId: o.fleetId, objectClass: o.objectClass, latitude: o.position.latitude, longitude: o.position.longitude });
  }

  private warnBound(fleetId: string, nowMs: number): void {
    if (nowMs - this.lastBoundWarnMs < 60_000) return;
    this.lastBoundWarnMs = nowMs;
    this.opts.log?.warn({ fleetId, max: this.maxPerFleet }, 'objects: the fleet holds the most tracked objects allowed; new robot detections are dropped');
  }

  // --- operators (REST) -------------------------------------------------------------------------

  /**
   * Creates a manual object.
   * @throws ApiError 409 `objects_full` at the fleet's bound
   */
  async create(fleet: Readonly<FleetRecord>, input: ManualObjectInput, by: { apiKeyId: string }, nowMs: number): Promise<ObjectRecord> {
    const o: ObjectRecord = {
      objectId: randomUUID(),
      orgId: fleet.orgId,
      fleetId: fleet.fleetId,
      objectClass: input.objectClass,
      position: input.position,
      geometry: input.geometry ?? null,
      source: 'manual',
      label: input.label ?? null,
      lastReportedBy: null,
      confidence: null,
      sightings: 0,
      firstSeenMs: nowMs,
      lastSeenMs: nowMs,
      expiresAtMs: null,
      tracks: [],
      createdBy: by,
      updatedAtMs: nowMs,
    };
    const full = await this.store.root.transaction(() => {
      if (countObjects(this.store, fleet.fleetId) >= this.maxPerFleet) return true;
      this.putSync(undefined, o);
      this.event(o, nowMs, 'object.created', { objectClass: o.objectClass, source: 'manual', apiKeyId: by.apiKeyId });
      return false;
    });
    if (full) throw apiError('objects_full', { fleetId: fleet.fleetId, max: this.maxPerFleet });
    return o;
  }

  /**
   * Edits an object (manual or robot: a robot object keeps expiring unless seen again).
   * @throws ApiError 404 `object_not_found`
   */
  async update(fleetId: string, objectId: string, patch: ObjectPatch, by: { apiKeyId: string }, nowMs: number): Promise<ObjectRecord> {
    const out = await this.store.root.transaction(() => {
      const prev = getObject(this.store, fleetId, objectId);
      if (!prev) return undefined;
      const next: ObjectRecord = {
        ...prev,
        ...(patch.objectClass !== undefined ? { objectClass: patch.objectClass } : {}),
        ...(patch.position !== undefined ? { position: patch.position } : {}),
        ...(patch.geometry !== undefined ? { geometry: patch.geometry } : {}),
        ...(patch.label !== undefined ? { label: patch.label } : {}),
        updatedAtMs: nowMs,
      };
      this.putSync(prev, next);
      this.event(next, nowMs, 'object.updated', { fields: Object.keys(patch), apiKeyId: by.apiKeyId });
      return next;
    });
    if (!out) throw apiError('object_not_found', { objectId });
    return out;
  }

  /**
   * Deletes an object (manual or robot; a robot that sees it again reports a new one).
   * @throws ApiError 404 `object_not_found`
   */
  async remove(fleetId: string, objectId: string, by: { apiKeyId: string }, nowMs: number): Promise<void> {
    const found = await this.store.root.transaction(() => {
      const o = getObject(this.store, fleetId, objectId);
      if (!o) return false;
      this.removeSync(o);
      this.event(o, nowMs, 'object.deleted', { apiKeyId: by.apiKeyId });
      return true;
    });
    if (!found) throw apiError('object_not_found', { objectId });
  }

  private removeSync(o: ObjectRecord): void {
    removeObjectSync(this.store, o, o.tracks);
    this.grid.remove(o.objectId);
  }

  private event(o: ObjectRecord, atMs: number, kind: string, data: Record<string, unknown>): void {
    this.events.append({ fleetId: o.fleetId, correlationId: o.objectId, atMs, kind, subject: { type: 'object', id: o.objectId }, data });
  }

  // --- expiry -----------------------------------------------------------------------------------

  private sweepSoon(): void {
    if (this.sweeping) return;
    this.sweeping = this.sweep()
      .catch((err: unknown) => this.opts.log?.error({ err }, 'objects: the expiry sweep failed'))
      .finally(() => {
        this.sweeping = null;
      });
  }

  /** Removes robot objects past their expiry (at most {@link SWEEP_BATCH} per call); returns how many. */
  async sweep(): Promise<number> {
    const nowMs = this.now();
    if (expiredObjects(this.store, nowMs, 1).length === 0) return 0;
    return this.store.root.transaction(() => {
      let n = 0;
      for (const { key, objectId } of expiredObjects(this.store, nowMs, SWEEP_BATCH)) {
        const o = this.store.objects.get(objectId);
        if (!o || o.expiresAtMs === null || o.expiresAtMs > nowMs) {
          dropExpiryKeySync(this.store, key); // left behind by a crash between writes: never again
          continue;
        }
        this.removeSync(o);
        this.event(o, nowMs, 'object.expired', { lastSeenMs: o.lastSeenMs, ttlMs: this.opts.ttlMs });
        n++;
      }
      this.counters.expired += n;
      return n;
    });
  }
}
