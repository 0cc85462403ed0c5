/**
 * One flat view of a decoded TelemetrySample, with the proto3 defaults filled in once.
 *
 * Every output of the decode worker (store rows, snapshots, live JSON) reads this view, so the
 * defaults for a missing sub-message (no position yet, no mission, ...) are decided in one place.
 * The worker reuses one instance per task: filling it allocates nothing.
 */
import type { TelemetrySample } from '../gen/fleetgw/v1/telemetry_pb.js';

/** Health level names, indexed by the proto enum value (also the ClickHouse Enum8 value). */
export const HEALTH_LEVEL_NAMES = ['unspecified', 'ok', 'warn', 'error'] as const;
export type HealthLevelName = (typeof HEALTH_LEVEL_NAMES)[number];

export interface FlatSample {
  tsMs: number;
  receivedAtMs: number;
  latitude: number;
  longitude: number;
  elevationM: number;
  xM: number;
  yM: number;
  zM: number;
  headingDeg: number;
  linearMps: number;
  angularDps: number;
  batteryPct: number;
  voltageV: number;
  charging: boolean;
  mode: string;
  estop: boolean;
  gpsFix: number;
  /** '' when the robot runs no mission. */
  missionRunId: string;
  missionState: string;
  progressPct: number;
  stepIndex: number;
  remainingDistanceM: number;
  etaS: number;
  /** 0..3, an index into {@link HEALTH_LEVEL_NAMES}; unknown enum values map to 0. */
  healthLevel: number;
  faults: readonly string[];
  cpuTempC: number;
}

const NO_FAULTS: readonly string[] = [];

/** A zeroed view, to be filled by {@link flattenSample}. */
export function emptyFlatSample(): FlatSample {
  return {
    tsMs: 0, receivedAtMs: 0, latitude: 0, longitude: 0, elevationM: 0, xM: 0, yM: 0, zM: 0, headingDeg: 0,
    linearMps: 0, angularDps: 0, batteryPct: 0, voltageV: 0, charging: false, mode: '', estop: false,
    gpsFix: 0, missionRunId: '', missionState: '', progressPct: 0, stepIndex: 0, remainingDistanceM: 0,
    etaS: 0, healthLevel: 0, faults: NO_FAULTS, cpuTempC: 0,
  };
}

/** Fills `out` from a decoded sample (proto3 defaults for absent sub-messages). */
export function flattenSample(s: TelemetrySample, receivedAtMs: number, out: FlatSample): FlatSample {
  out.tsMs = Number(s.tsMs);
  out.receivedAtMs = receivedAtMs;
  const p = s.position;
  out.latitude = p ? p.latitude : 0;
  out.longitude = p ? p.longitude : 0;
  out.elevationM = p ? p.elevationM : 0;
  const pose = s.pose;
  out.xM = pose ? pose.xM : 0;
  out.yM = pose ? pose.yM : 0;
  out.zM = pose ? pose.zM : 0;
  out.headingDeg = pose ? pose.headingDeg : 0;
  const v = s.velocity;
  out.linearMps = v ? v.linearMps : 0;
  out.angularDps = v ? v.angularDps : 0;
  const b = s.battery;
  out.batteryPct = b ? b.percent : 0;
  out.voltageV = b ? b.voltageV : 0;
  out.charging = b ? b.charging : false;
  out.mode = s.mode;
  out.estop = s.estop;
  out.gpsFix = s.gpsFix;
  const m = s.mission;
  out.missionRunId = m ? m.runId : '';
  out.missionState = m ? m.missionState : '';
  out.progressPct = m ? m.progressPct : 0;
  out.stepIndex = m ? m.stepIndex : 0;
  out.remainingDistanceM = m ? m.remainingDistanceM : 0;
  out.etaS = m ? m.etaS : 0;
  const h = s.health;
  const level: number = h ? h.level : 0;
  out.healthLevel = level >= 0 && level < HEALTH_LEVEL_NAMES.length ? level : 0;
  out.faults = h ? h.faults : NO_FAULTS;
  out.cpuTempC = h ? h.cpuTempC : 0;
  return out;
}
