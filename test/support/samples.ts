/** Deterministic telemetry samples for end-to-end tests. */
import { HealthLevel } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import type { SampleInput } from '../../src/agent/index.js';

/** Sample `i` of a robot, at `t0 + i*10` ms. */
export function testSample(t0: number, i: number): SampleInput {
  return {
    tsMs: t0 + i * 10,
    latitude: 52.0 + i * 1e-6,
    longitude: 5.0 + i * 1e-6,
    elevationM: 3,
    xM: i * 0.1, yM: 0, zM: 0, headingDeg: 90,
    linearMps: 1.5, angularDps: 0,
    batteryPercent: 80 - i * 0.001, voltageV: 48, charging: false,
    mode: 'autonomous', estop: false, mission: null,
    healthLevel: HealthLevel.OK, faults: [], cpuTempC: 40, gpsFix: 4, mapId: '', loads: null,
  };
}

/** The value at a dotted path ("a.b.c"), or null when the path or one of its parents is null. */
export function valueAt(v: unknown, path: string): unknown {
  let node = v;
  for (const key of path.split('.')) {
    if (node === null) return null;
    node = (node as Record<string, unknown>)[key];
  }
  return node;
}
