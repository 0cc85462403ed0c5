/**
 * Simulated perception: what a simulated robot's sensors see of the depot's objects, reported once a
 * second as `ObjectDetections` (docs/objects.md). The depot holds a fixed world of objects — pallet
 * stacks and obstacles on a 40 m grid, so a robot anywhere is usually within range of one or two,
 * and a person walking a 30 m circle around the centre. A robot sees what lies within 25 m, with a
 * little position noise, and gives each object a track id when it comes into range (a new one after
 * it left range and came back, as real trackers do), so the gateway's matching rule has both cases
 * to handle: the same track again, and a new track of an object it already holds.
 */
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { ObjectDetectionsSchema } from '../gen/fleetgw/v1/robot_link_pb.js';
import { DEPOT, seededRandom, toLatLon } from './geo.js';
import type { RobotModel } from './robot-model.js';

/** How far a robot sees, metres. */
export const SENSOR_RANGE_M = 25;
/** One perception frame per robot this often. */
export const PERCEPTION_EVERY_MS = 1000;
const GRID_STEP_M = 40;
const NOISE_M = 0.2;
const PERSON_RADIUS_M = 30;
const PERSON_PERIOD_S = 120;

export interface WorldObject {
  key: string;
  objectClass: 'pallet' | 'obstacle' | 'person';
  x: number;
  y: number;
  lengthM: number;
  widthM: number;
  headingDeg: number;
}

/** The depot's objects at time `nowMs` (only the person moves). */
export function worldObjects(nowMs: number): WorldObject[] {
  const out: WorldObject[] = [];
  const lim = DEPOT.halfSizeM - 30;
  let i = 0;
  for (let x = -lim; x <= lim; x += GRID_STEP_M) {
    for (let y = -lim; y <= lim; y += GRID_STEP_M) {
      const pallet = i % 3 !== 2;
      out.push({
        key: `g${i}`,
        objectClass: pallet ? 'pallet' : 'obstacle',
        x: x + 7,
        y: y + 7,
        lengthM: pallet ? 1.2 : 0.6,
        widthM: pallet ? 0.8 : 0.6,
        headingDeg: (i * 37) % 180,
      });
      i++;
    }
  }
  const a = ((nowMs / 1000) % PERSON_PERIOD_S) / PERSON_PERIOD_S * 2 * Math.PI;
  out.push({ key: 'person', objectClass: 'person', x: Math.cos(a) * PERSON_RADIUS_M, y: Math.sin(a) * PERSON_RADIUS_M, lengthM: 0.5, widthM: 0.5, headingDeg: 0 });
  return out;
}

type Frame = MessageInitShape<typeof ObjectDetectionsSchema>;

export class SimPerception {
  private readonly rand: () => number;
  /** World object key -> the track id this robot gave it while in range. */
  private readonly tracks = new Map<string, string>();
  private nextTrack = 1;
  private lastFrameMs = 0;
  /** Frames sent (tests). */
  framesSent = 0;

  constructor(
    private readonly robotId: string,
    private readonly model: RobotModel,
    private readonly send: (frame: Frame) => boolean,
  ) {
    this.rand = seededRandom(`perception/${robotId}`);
  }

  /** Sends a frame when one is due (called by the fleet's shared timer). */
  tick(nowMs: number): void {
    if (nowMs - this.lastFrameMs < PERCEPTION_EVERY_MS) return;
    this.lastFrameMs = nowMs;
    const seen = worldObjects(nowMs).filter((o) => Math.hypot(o.x - this.model.x, o.y - this.model.y) <= SENSOR_RANGE_M);
    const inRange = new Set(seen.map((o) => o.key));
    for (const key of [...this.tracks.keys()]) if (!inRange.has(key)) this.tracks.delete(key);
    if (seen.length === 0) return;
    const detections = seen.map((o) => {
      let track = this.tracks.get(o.key);
      if (track === undefined) this.tracks.set(o.key, (track = `${this.robotId.slice(0, 8)}-t${this.nextTrack++}`));
      const { latitude, longitude } = toLatLon(o.x + this.noise(), o.y + this.noise());
      const dist = Math.hypot(o.x - this.model.x, o.y - this.model.y);
      return {
        trackId: track,
        objectClass: o.objectClass,
        latitude,
        longitude,
        elevationM: DEPOT.elevationM,
        confidence: Math.round((0.98 - (0.3 * dist) / SENSOR_RANGE_M) * 100) / 100,
        lengthM: o.lengthM,
        widthM: o.widthM,
        headingDeg: o.headingDeg,
        tsMs: BigInt(nowMs),
      };
    });
    if (this.send({ detections })) this.framesSent++;
  }

  private noise(): number {
    return (this.rand() * 2 - 1) * NOISE_M;
  }
}
