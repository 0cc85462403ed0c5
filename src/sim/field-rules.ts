/**
 * How a simulated robot obeys its fleet's field rules (docs/field-rules.md, "The simulator"). The
 * rule set from the link is turned into polygons of the depot frame; each model step the governor
 * adjusts the speed and heading the model chose, before the robot moves:
 *
 * - stop_and_wait: on the first step inside the zone the robot halts (speed 0) and holds for
 *   `wait_s` seconds of simulated time, then drives on; it stops again only after leaving the zone.
 * - speed_limit: whenever its next position is inside the zone, its speed is capped at
 *   `max_speed_mps` (so every telemetry sample inside the zone shows at most the cap).
 * - keep_out: a step whose next position, or a point `KEEP_OUT_CLEARANCE_M` further along its heading,
 *   lies inside the zone is not taken as is: the robot turns to the nearest heading (15° steps) that
 *   stays out and drives along the boundary, or halts when none does. Random waypoints are never
 *   picked inside a zone. A robot already inside a zone when the rule arrives may drive out.
 */
import type { FieldRuleSet } from '../gen/fleetgw/v1/robot_link_pb.js';
import { FieldRuleType } from '../gen/fleetgw/v1/robot_link_pb.js';
import type { FieldRulesOutcome } from '../agent/agent.js';
import { fromLatLon } from './geo.js';

/** How far beyond its next position a robot keeps clear of a keep-out zone, metres. */
export const KEEP_OUT_CLEARANCE_M = 1.0;
const DEFLECT_STEP_DEG = 15;

type Ring = { x: number; y: number }[];
interface Zone {
  directiveId: string;
  /** Polygons, each an outer ring then holes. */
  polygons: Ring[][];
  box: { minX: number; minY: number; maxX: number; maxY: number };
}
interface SpeedZone extends Zone { maxSpeedMps: number }
interface WaitZone extends Zone { waitS: number }

/** What the governor may change in a model's step. */
export interface GovernedMotion {
  x: number;
  y: number;
  headingDeg: number;
  speedMps: number;
}

/** Ray casting, holes included: inside the outer ring and in no hole. */
function inRing(ring: Ring, x: number, y: number): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const a = ring[i]!;
    const b = ring[j]!;
    if (a.y > y !== b.y > y && x < ((b.x - a.x) * (y - a.y)) / (b.y - a.y) + a.x) inside = !inside;
  }
  return inside;
}

function inZone(z: Zone, x: number, y: number): boolean {
  if (x < z.box.minX || x > z.box.maxX || y < z.box.minY || y > z.box.maxY) return false;
  return z.polygons.some(([outer, ...holes]) => outer !== undefined && inRing(outer, x, y) && !holes.some((h) => inRing(h, x, y)));
}

function ahead(m: GovernedMotion, headingDeg: number, d: number): { x: number; y: number } {
  const rad = (headingDeg * Math.PI) / 180;
  return { x: m.x + Math.sin(rad) * d, y: m.y + Math.cos(rad) * d };
}

/** The field rules one simulated robot obeys. */
export class SimFieldRules {
  /** Version of the set in force (0: none received). */
  version = 0n;
  private keepOut: Zone[] = [];
  private speed: SpeedZone[] = [];
  private wait: WaitZone[] = [];
  /** stop_and_wait state per zone: simulated time the hold ends, or 'done' until the robot leaves. */
  private readonly holds = new Map<string, number | 'done'>();
  private clockS = 0;

  /** Replaces the rules in force with `set` (the agent's `onFieldRules`). */
  apply(set: FieldRuleSet): FieldRulesOutcome {
    const keepOut: Zone[] = [];
    const speed: SpeedZone[] = [];
    const wait: WaitZone[] = [];
    for (const r of set.rules) {
      const polygons = r.polygons.map((p) => p.rings.map((ring) => ring.ring.map((pt) => {
        const { xM, yM } = fromLatLon(pt.latitude, pt.longitude);
        return { x: xM, y: yM };
      })));
      const points = polygons.flat(2);
      if (points.length < 3) return { applied: false, error: `rule ${r.directiveId} has no polygon` };
      const box = {
        minX: Math.min(...points.map((p) => p.x)), minY: Math.min(...points.map((p) => p.y)),
        maxX: Math.max(...points.map((p) => p.x)), maxY: Math.max(...points.map((p) => p.y)),
      };
      const zone = { directiveId: r.directiveId, polygons, box };
      if (r.type === FieldRuleType.KEEP_OUT) keepOut.push(zone);
      else if (r.type === FieldRuleType.SPEED_LIMIT && r.maxSpeedMps > 0) speed.push({ ...zone, maxSpeedMps: r.maxSpeedMps });
      else if (r.type === FieldRuleType.STOP_AND_WAIT && r.waitS > 0) wait.push({ ...zone, waitS: r.waitS });
      else return { applied: false, error: `rule ${r.directiveId} has an unknown type or missing parameters` };
    }
    this.keepOut = keepOut;
    this.speed = speed;
    this.wait = wait;
    for (const id of [...this.holds.keys()]) if (!wait.some((z) => z.directiveId === id)) this.holds.delete(id);
    this.version = set.version;
    return { applied: true };
  }

  /** True when a point lies in a keep-out zone (waypoints there are not chosen). */
  forbids(x: number, y: number): boolean {
    return this.keepOut.some((z) => inZone(z, x, y));
  }

  /** Adjusts the motion the model chose for the next `dtS` seconds. */
  govern(m: GovernedMotion, dtS: number): void {
    this.clockS += dtS;
    if (this.holdForWaitZones(m)) {
      m.speedMps = 0;
      return;
    }
    this.avoidKeepOut(m, dtS);
    const step = Math.max(m.speedMps * dtS, 0.01);
    const next = ahead(m, m.headingDeg, step);
    for (const z of this.speed) {
      if (inZone(z, next.x, next.y) || inZone(z, m.x, m.y)) m.speedMps = Math.min(m.speedMps, z.maxSpeedMps);
    }
  }

  private holdForWaitZones(m: GovernedMotion): boolean {
    let hold = false;
    for (const z of this.wait) {
      const state = this.holds.get(z.directiveId);
      if (!inZone(z, m.x, m.y)) {
        this.holds.delete(z.directiveId);
        continue;
      }
      if (state === undefined) {
        this.holds.set(z.directiveId, this.clockS + z.waitS);
        hold = true;
      } else if (state !== 'done') {
        if (this.clockS < state) hold = true;
        else this.holds.set(z.directiveId, 'done');
      }
    }
    return hold;
  }

  private avoidKeepOut(m: GovernedMotion, dtS: number): void {
    if (this.keepOut.length === 0 || m.speedMps === 0) return;
    // A zone the robot is already in (the rule arrived while it was there) does not hold it in.
    const zones = this.keepOut.filter((z) => !inZone(z, m.x, m.y));
    const step = m.speedMps * dtS;
    const clear = (heading: number): boolean => {
      const next = ahead(m, heading, step);
      const far = ahead(m, heading, step + KEEP_OUT_CLEARANCE_M);
      return !zones.some((z) => inZone(z, next.x, next.y) || inZone(z, far.x, far.y));
    };
    if (clear(m.headingDeg)) return;
    for (let d = DEFLECT_STEP_DEG; d < 180; d += DEFLECT_STEP_DEG) {
      for (const h of [m.headingDeg + d, m.headingDeg - d]) {
        const heading = (h + 360) % 360;
        if (clear(heading)) {
          m.headingDeg = heading;
          return;
        }
      }
    }
    m.speedMps = 0;
  }
}
