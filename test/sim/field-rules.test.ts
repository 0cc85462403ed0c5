/**
 * The simulator obeys field rules (src/sim/field-rules.ts), stepped without sockets: a robot sent
 * through a speed-limit zone never exceeds the cap inside it, one sent across a keep-out zone never
 * has a position inside it yet arrives, one sent through a stop-and-wait zone halts inside it for
 * the zone's wait and then drives on.
 */
import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { FieldRuleSetSchema, FieldRuleType, type FieldRuleSet } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { SimFieldRules } from '../../src/sim/field-rules.js';
import { toLatLon } from '../../src/sim/geo.js';
import { RobotModel } from '../../src/sim/robot-model.js';

/** A depot-frame rectangle as a link polygon. */
function rect(x0: number, y0: number, x1: number, y1: number) {
  const ring = [toLatLon(x0, y0), toLatLon(x1, y0), toLatLon(x1, y1), toLatLon(x0, y1)];
  return [{ rings: [{ ring }] }];
}

function set(version: number, rules: { type: FieldRuleType; polygons: ReturnType<typeof rect>; maxSpeedMps?: number; waitS?: number }[]): FieldRuleSet {
  return create(FieldRuleSetSchema, {
    version: BigInt(version),
    rules: rules.map((r, i) => ({ directiveId: `00000000-0000-4000-8000-00000000000${i}`, name: `z${i}`, ...r })),
  });
}

/** A robot at (x, y) driving (go-to) to (tx, ty), with the rules; returns its path. */
function drive(rules: FieldRuleSet, from: { x: number; y: number }, to: { x: number; y: number }, seconds: number) {
  const m = new RobotModel('robot-under-test', 0);
  const fr = new SimFieldRules();
  expect(fr.apply(rules)).toEqual({ applied: true });
  m.fieldRules = fr;
  m.x = from.x;
  m.y = from.y;
  m.headingDeg = Math.atan2(to.x - from.x, to.y - from.y) * 180 / Math.PI;
  m.batteryPct = 100;
  m.goTo({ x: to.x, y: to.y, headingDeg: null, maxSpeedMps: null });
  const path: { t: number; x: number; y: number; v: number }[] = [];
  const dt = 0.05;
  for (let t = 0; t < seconds; t += dt) {
    m.step(dt);
    path.push({ t, x: m.x, y: m.y, v: m.speedMps });
  }
  return path;
}

const inside = (p: { x: number; y: number }, x0: number, y0: number, x1: number, y1: number) => p.x > x0 && p.x < x1 && p.y > y0 && p.y < y1;

describe('simulated robot and field rules', () => {
  it('speed_limit: never faster than the cap inside the zone, faster outside', () => {
    const path = drive(set(1, [{ type: FieldRuleType.SPEED_LIMIT, polygons: rect(-5, 20, 5, 40), maxSpeedMps: 0.4 }]), { x: 0, y: 0 }, { x: 0, y: 60 }, 120);
    const inZone = path.filter((p) => inside(p, -5, 20, 5, 40));
    expect(inZone.length).toBeGreaterThan(10);
    expect(Math.max(...inZone.map((p) => p.v))).toBeLessThanOrEqual(0.4 + 1e-9);
    expect(Math.max(...path.filter((p) => p.y < 15).map((p) => p.v))).toBeGreaterThan(1);
    expect(path.at(-1)!.y).toBeGreaterThan(57);
  });

  it('keep_out: the path goes around the zone and arrives', () => {
    const path = drive(set(1, [{ type: FieldRuleType.KEEP_OUT, polygons: rect(-6, 20, 6, 30) }]), { x: 0, y: 0 }, { x: 0, y: 50 }, 180);
    expect(path.filter((p) => inside(p, -6, 20, 6, 30))).toEqual([]);
    const end = path.at(-1)!;
    expect(Math.hypot(end.x, end.y - 50)).toBeLessThan(3);
  });

  it('keep_out: random waypoints are never chosen inside a zone', () => {
    const fr = new SimFieldRules();
    fr.apply(set(1, [{ type: FieldRuleType.KEEP_OUT, polygons: rect(-150, -150, 0, 150) }]));
    const m = new RobotModel('waypoints', 1);
    m.fieldRules = fr;
    m.x = 50;
    m.y = 0;
    m.batteryPct = 100;
    m.release();
    for (let t = 0; t < 600; t += 0.1) {
      m.step(0.1);
      expect(m.x).toBeGreaterThan(-0.01);
    }
  });

  it('stop_and_wait: halts inside the zone for wait_s, then drives on', () => {
    const path = drive(set(1, [{ type: FieldRuleType.STOP_AND_WAIT, polygons: rect(-5, 20, 5, 25), waitS: 3 }]), { x: 0, y: 0 }, { x: 0, y: 50 }, 90);
    const stoppedInZone = path.filter((p) => inside(p, -5, 20, 5, 25) && p.v === 0);
    const held = stoppedInZone.at(-1)!.t - stoppedInZone[0]!.t;
    expect(held).toBeGreaterThanOrEqual(2.9);
    expect(held).toBeLessThan(3.5);
    expect(path.at(-1)!.y).toBeGreaterThan(47);
  });

  it('a new set replaces the old one; an empty set lifts every rule', () => {
    const fr = new SimFieldRules();
    fr.apply(set(1, [{ type: FieldRuleType.KEEP_OUT, polygons: rect(-1, -1, 1, 1) }]));
    expect(fr.forbids(0, 0)).toBe(true);
    expect(fr.apply(set(2, []))).toEqual({ applied: true });
    expect(fr.forbids(0, 0)).toBe(false);
    expect(fr.version).toBe(2n);
  });

  it('a rule it cannot apply is refused and the previous set stays in force', () => {
    const fr = new SimFieldRules();
    fr.apply(set(1, [{ type: FieldRuleType.KEEP_OUT, polygons: rect(-1, -1, 1, 1) }]));
    const bad = fr.apply(set(2, [{ type: FieldRuleType.UNSPECIFIED, polygons: rect(5, 5, 6, 6) }]));
    expect(bad.applied).toBe(false);
    expect(fr.forbids(0, 0)).toBe(true);
    expect(fr.version).toBe(1n);
  });
});
