/**
 * The object tracker without sockets: a real LMDB store, the real event log, detections handed in as
 * the robot link would. Matching (same track; nearest of the class within the radius; a new object),
 * manual objects never moved or expired by sightings, expiry, the per-fleet bound, a transferred
 * robot's stale session, and the state surviving a reopen.
 */
import { create } from '@bufbuild/protobuf';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventLog } from '../../src/events/log.js';
import { distanceM } from '../../src/fleet/site/objects/match-grid.js';
import { getObject, objectsOf } from '../../src/fleet/site/objects/object-store.js';
import { ObjectTracker } from '../../src/fleet/site/objects/tracker.js';
import { ObjectDetectionsSchema } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import type { RobotLinkListener } from '../../src/protocol/robot-link.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';

const LAT = 52;
const LON = 5;
const M_LAT = 1 / 111_320;

interface Det { trackId?: string; objectClass?: string; dy?: number; lengthM?: number; widthM?: number }
const frame = (dets: Det[]) =>
  create(ObjectDetectionsSchema, {
    detections: dets.map((d) => ({ trackId: d.trackId ?? '', objectClass: d.objectClass ?? 'pallet', latitude: LAT + (d.dy ?? 0) * M_LAT, longitude: LON, confidence: 0.9, lengthM: d.lengthM ?? 0, widthM: d.widthM ?? 0 })),
  });

describe('ObjectTracker', () => {
  let dir: string;
  let store: Store;
  let events: EventLog;
  let listener: RobotLinkListener;
  let tracker: ObjectTracker;
  let now: number;
  let fleetId: string;
  let otherFleetId: string;
  let robotA: string;
  let robotB: string;
  const link = { listen: (l: RobotLinkListener) => ((listener = l), () => {}) };
  const start = (maxPerFleet = 100): ObjectTracker => new ObjectTracker(store, events, link, { ttlMs: 10_000, maxPerFleet, now: () => now, sweepEveryMs: 3_600_000 });
  const all = (): ReturnType<typeof getObject>[] => objectsOf(store, fleetId).page(null, 1000).items;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-objects-'));
    store = openStore(dir);
    events = new EventLog(store);
    const org = createOrg(store, 'Acme');
    fleetId = createFleet(store, org.orgId, 'Yard').fleetId;
    otherFleetId = createFleet(store, org.orgId, 'Other').fleetId;
    robotA = addRobot(store, { fleetId, name: 'a', capabilities: [], active: true }).record.robotId;
    robotB = addRobot(store, { fleetId, name: 'b', capabilities: [], active: true }).record.robotId;
    now = 1_000_000;
    tracker = start();
  });
  afterEach(async () => {
    await tracker.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the same track updates its object; another robot nearby matches it too; far away or another class is new', async () => {
    listener.onObjectDetections!(robotA, fleetId, frame([{ trackId: 't1', lengthM: 1.2, widthM: 0.8 }]));
    await tracker.settled();
    expect(all()).toHaveLength(1);
    const first = all()[0]!;
    expect(first).toMatchObject({ source: 'robot', objectClass: 'pallet', sightings: 1, expiresAtMs: now + 10_000, lastReportedBy: { robotId: robotA, trackId: 't1' } });
    expect(first.geometry?.type).toBe('Polygon');

    // Same track, moved 3 m (beyond the radius): still the same object, position follows.
    now += 1000;
    listener.onObjectDetections!(robotA, fleetId, frame([{ trackId: 't1', dy: 3 }]));
    await tracker.settled();
    expect(all()).toHaveLength(1);
    const moved = all()[0]!;
    expect(moved.sightings).toBe(2);
    expect(distanceM(LAT, LON, moved.position.latitude, moved.position.longitude)).toBeCloseTo(3, 1);
    expect(moved.lastSeenMs).toBe(now);

    // Robot B sees it 1 m away with its own track: matched by position, not a second record.
    listener.onObjectDetections!(robotB, fleetId, frame([{ trackId: 'x9', dy: 4 }]));
    await tracker.settled();
    expect(all()).toHaveLength(1);
    expect(all()[0]!.lastReportedBy).toEqual({ robotId: robotB, trackId: 'x9' });

    // A person at the same spot, and a pallet 10 m away, are other objects.
    listener.onObjectDetections!(robotB, fleetId, frame([{ trackId: 'p', objectClass: 'Person', dy: 4 }, { dy: 14 }]));
    await tracker.settled();
    expect(all().map((o) => o!.objectClass).sort()).toEqual(['pallet', 'pallet', 'person']);

    // Two detections of one frame never merge into one object, even when both are near it.
    listener.onObjectDetections!(robotA, fleetId, frame([{ dy: 14.2 }, { dy: 14.4 }]));
    await tracker.settled();
    expect(all()).toHaveLength(4);
    const kinds = events.readTimeline(fleetId, first.objectId).map((e) => e.kind);
    expect(kinds).toEqual(['object.detected']);
  });

  it('robot objects expire after the TTL without a sighting; manual ones are confirmed, never moved or expired', async () => {
    const fleet = store.fleets.get(fleetId)!;
    const manual = await tracker.create(fleet, { objectClass: 'pallet', position: { latitude: LAT, longitude: LON, elevationM: null } }, { apiKeyId: 'k' }, now);
    listener.onObjectDetections!(robotA, fleetId, frame([{ trackId: 't', dy: 0.5 }, { objectClass: 'obstacle', dy: 20 }]));
    await tracker.settled();
    const m = getObject(store, fleetId, manual.objectId)!;
    expect(m).toMatchObject({ source: 'manual', sightings: 1, expiresAtMs: null, position: { latitude: LAT, longitude: LON } });
    expect(all()).toHaveLength(2);

    now += 9_999;
    expect(await tracker.sweep()).toBe(0);
    now += 1;
    expect(await tracker.sweep()).toBe(1);
    expect(all().map((o) => o!.objectId)).toEqual([manual.objectId]);
    await store.root.committed;
    expect([...store.events.getRange({})].map(({ value }) => value.kind)).toContain('object.expired');
  });

  it('at the bound new robot objects are dropped and counted, a manual create is refused; sightings still update', async () => {
    await tracker.close();
    tracker = start(2);
    listener.onObjectDetections!(robotA, fleetId, frame([{ trackId: 'a', dy: 0 }, { trackId: 'b', dy: 10 }, { trackId: 'c', dy: 20 }]));
    await tracker.settled();
    expect(all()).toHaveLength(2);
    expect(tracker.stats().detectionsDroppedAtBound).toBe(1);
    await expect(tracker.create(store.fleets.get(fleetId)!, { objectClass: 'pallet', position: { latitude: LAT, longitude: LON, elevationM: null } }, { apiKeyId: 'k' }, now)).rejects.toMatchObject({ status: 409 });
    now += 500;
    listener.onObjectDetections!(robotA, fleetId, frame([{ trackId: 'a', dy: 0.2 }]));
    await tracker.settled();
    expect(all().find((o) => o!.lastReportedBy?.trackId === 'a')!.lastSeenMs).toBe(now);
  });

  it('a frame from a session of another fleet (robot transferred since) is refused', async () => {
    listener.onObjectDetections!(robotA, otherFleetId, frame([{ trackId: 'a' }]));
    await tracker.settled();
    expect(all()).toHaveLength(0);
    expect(objectsOf(store, otherFleetId).page(null, 10).items).toHaveLength(0);
    expect(tracker.stats().framesRefused).toBe(1);
  });

  it('invalid detections are skipped; the state survives a reopen and matching resumes', async () => {
    listener.onObjectDetections!(robotA, fleetId, create(ObjectDetectionsSchema, {
      detections: [
        { objectClass: 'bad class!', latitude: LAT, longitude: LON },
        { objectClass: 'pallet', latitude: 91, longitude: LON },
        { objectClass: 'pallet', latitude: LAT, longitude: LON, trackId: 'ok' },
      ],
    }));
    await tracker.settled();
    expect(tracker.stats().detectionsInvalid).toBe(2);
    await tracker.close();
    await store.close();
    store = openStore(dir);
    events = new EventLog(store);
    tracker = start();
    // Another robot, no track: the grid was rebuilt from LMDB, so it matches the stored object.
    listener.onObjectDetections!(robotB, fleetId, frame([{ dy: 0.3 }]));
    await tracker.settled();
    expect(all()).toHaveLength(1);
    expect(all()[0]!.sightings).toBe(2);
  });
});
