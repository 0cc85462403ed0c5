import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { HealthLevel, TelemetrySampleSchema } from '../../src/gen/fleetgw/v1/telemetry_pb.js';
import { encodeSample, type SampleInput } from '../../src/agent/sample-encoder.js';

function reference(s: SampleInput): Uint8Array {
  return toBinary(
    TelemetrySampleSchema,
    create(TelemetrySampleSchema, {
      tsMs: BigInt(s.tsMs),
      position: { latitude: s.latitude, longitude: s.longitude, elevationM: s.elevationM },
      pose: { xM: s.xM, yM: s.yM, zM: s.zM, headingDeg: s.headingDeg },
      velocity: { linearMps: s.linearMps, angularDps: s.angularDps },
      battery: { percent: s.batteryPercent, voltageV: s.voltageV, charging: s.charging },
      mode: s.mode,
      estop: s.estop,
      ...(s.mission ? { mission: s.mission } : {}),
      health: { level: s.healthLevel, faults: [...s.faults], cpuTempC: s.cpuTempC },
      gpsFix: s.gpsFix,
      mapId: s.mapId,
      ...(s.loads ? { loads: { ...s.loads, ids: [...s.loads.ids], types: [...s.loads.types] } } : {}),
    }),
  );
}

const base: SampleInput = {
  tsMs: 1_732_000_000_123,
  latitude: 52.0012345,
  longitude: 5.00098,
  elevationM: 2.5,
  xM: 12.25,
  yM: -40.5,
  zM: 0,
  headingDeg: 271.3,
  linearMps: 1.4,
  angularDps: -12,
  batteryPercent: 77.7,
  voltageV: 51.2,
  charging: false,
  mode: 'autonomous',
  estop: false,
  mission: null,
  healthLevel: HealthLevel.OK,
  faults: [],
  cpuTempC: 48.1,
  gpsFix: 4,
  mapId: '',
  loads: null,
};

describe('encodeSample', () => {
  const cases: [string, SampleInput][] = [
    ['typical sample', base],
    ['all zero values', { ...base, tsMs: 0, latitude: 0, longitude: 0, elevationM: 0, xM: 0, yM: 0, headingDeg: 0, linearMps: 0, angularDps: 0, batteryPercent: 0, voltageV: 0, mode: '', healthLevel: HealthLevel.UNSPECIFIED, cpuTempC: 0, gpsFix: 0 }],
    ['flags set, negative int32', { ...base, charging: true, estop: true, gpsFix: -1, healthLevel: HealthLevel.ERROR, faults: ['motor_overtemp', 'lidar_dirty'] }],
    ['mission with multi-byte nested length', { ...base, mission: { runId: 'r'.repeat(150), missionState: 'running', progressPct: 42.5, stepIndex: 3, remainingDistanceM: 120.5, etaS: 86 } }],
    ['long unicode faults', { ...base, mode: 'pausé', faults: Array.from({ length: 40 }, (_, i) => `fault_é_${i}_` + 'x'.repeat(i * 10)) }],
    ['mission with zeros and negative step', { ...base, mission: { runId: '', missionState: '', progressPct: 0, stepIndex: -7, remainingDistanceM: 0, etaS: 0 } }],
    ['NaN is written like protobuf-es does', { ...base, headingDeg: Number.NaN }],
    ['map id and loads', { ...base, mapId: 'hall-2', loads: { count: 2, ids: ['pallet-7', ''], types: ['EPAL', 'box'], weightKg: 512.5 } }],
    ['loads with zeros', { ...base, loads: { count: 0, ids: [], types: [], weightKg: 0 } }],
  ];
  for (const [name, s] of cases) {
    it(`writes the same bytes as protobuf-es: ${name}`, () => {
      const got = encodeSample(s);
      expect(Buffer.from(got).toString('hex')).toBe(Buffer.from(reference(s)).toString('hex'));
      expect(fromBinary(TelemetrySampleSchema, got).mode).toBe(s.mode);
    });
  }

  it('returns independent buffers (no aliasing of its scratch space)', () => {
    const a = encodeSample(base);
    const copy = Buffer.from(a);
    encodeSample({ ...base, xM: 999 });
    expect(Buffer.from(a).equals(copy)).toBe(true);
  });

  it('encodes a sample from code written before the map id and loads existed (keys left out) as one without them', () => {
    const old = { ...base } as Partial<SampleInput>;
    delete old.mapId;
    delete old.loads;
    const bytes = encodeSample(old as SampleInput);
    expect(Buffer.from(bytes).equals(Buffer.from(reference({ ...base, mapId: '', loads: null })))).toBe(true);
    expect(fromBinary(TelemetrySampleSchema, bytes).loads).toBeUndefined();
  });
});
