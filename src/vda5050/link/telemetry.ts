/**
 * A robot's VDA 5050 `state` and `visualization` as TelemetryBatch bytes, the form the gRPC link hands
 * to the telemetry sink: the ingest, ClickHouse rows, the live stream, Foxglove and history then treat
 * a VDA 5050 robot like any other. A visualization carries only position and velocity; the rest of
 * the sample comes from the robot's latest state.
 */
import { create, toBinary } from '@bufbuild/protobuf';
import { HealthLevel, TelemetryBatchSchema } from '../../gen/fleetgw/v1/telemetry_pb.js';
import { headingOfTheta, type MapFrame } from './map-frame.js';
import type { AgvPosition, VdaState, Velocity } from './messages.js';

/** The telemetry `mode` of a state: `paused` while paused, else the operating mode in the gateway's words. */
export function modeOf(state: VdaState): string {
  if (state.paused) return 'paused';
  switch (state.operatingMode) {
    case 'AUTOMATIC': return 'autonomous';
    case 'SEMIAUTOMATIC': return 'semi_autonomous';
    case 'MANUAL': return 'manual';
    case 'SERVICE': return 'service';
    case 'TEACHIN': return 'teach_in';
    default: return 'unknown';
  }
}

/** The fault codes a state carries: its error types, plus the e-stop and a protective field violation. */
export function faultCodesOf(state: VdaState): string[] {
  const codes = state.errors.map((e) => e.errorType);
  if (state.safetyState.eStop !== 'NONE') codes.push(`estop_${state.safetyState.eStop.toLowerCase()}`);
  if (state.safetyState.fieldViolation) codes.push('protective_field_violation');
  return [...new Set(codes)];
}

function healthLevelOf(state: VdaState): HealthLevel {
  if (state.errors.some((e) => e.errorLevel === 'FATAL')) return HealthLevel.ERROR;
  if (state.errors.length > 0 || state.safetyState.fieldViolation) return HealthLevel.WARN;
  return HealthLevel.OK;
}

/**
 * The sample's load group of a state's `loads`: the count, the ids and types at the same index (''
 * where the robot names none; the decoders keep the first 16), the weights summed (a load without
 * a weight counts 0).
 */
export function loadsOf(loads: VdaState['loads']): { count: number; ids: string[]; types: string[]; weightKg: number } {
  let weightKg = 0;
  for (const l of loads) weightKg += l.weight;
  return { count: loads.length, ids: loads.map((l) => l.loadId), types: loads.map((l) => l.loadType), weightKg };
}

/** What the sample reports about the robot's mission run, when its order is one. */
export interface MissionSampleInfo {
  runId: string;
  missionState: string;
  progressPct: number;
  stepIndex: number;
}

/**
 * One TelemetryBatch (one sample, no `seq`: ingested as sent) from the robot's latest state, with
 * position and velocity from `motion` when it is newer (a visualization).
 */
export function batchOf(
  frame: MapFrame,
  state: VdaState,
  motion: { agvPosition: AgvPosition | null; velocity: Velocity | null; timestampMs: number } | null,
  mission: MissionSampleInfo | null,
  nowMs: number,
): Uint8Array {
  const pos = motion?.agvPosition ?? state.agvPosition;
  const vel = motion?.velocity ?? state.velocity;
  const geo = pos ? frame.toLatLon(pos.x, pos.y) : { latitude: 0, longitude: 0 };
  const ts = motion?.timestampMs || state.timestampMs || nowMs;
  // protobuf-es, not the agents' hand-written encoder: VDA 5050 robots report a few messages a
  // second each, and the JSON parse before this costs far more than the encoding.
  return toBinary(TelemetryBatchSchema, create(TelemetryBatchSchema, {
    samples: [{
      tsMs: BigInt(Math.max(0, Math.trunc(ts))),
      position: { latitude: geo.latitude, longitude: geo.longitude, elevationM: pos ? frame.origin.elevationM : 0 },
      pose: { xM: pos?.x ?? 0, yM: pos?.y ?? 0, zM: 0, headingDeg: pos ? headingOfTheta(pos.theta) : 0 },
      velocity: { linearMps: vel ? Math.hypot(vel.vx, vel.vy) : 0, angularDps: vel ? (vel.omega * 180) / Math.PI : 0 },
      battery: { percent: state.batteryState.batteryCharge, voltageV: state.batteryState.batteryVoltage, charging: state.batteryState.charging },
      mode: modeOf(state),
      estop: state.safetyState.eStop !== 'NONE',
      ...(mission !== null ? { mission: { ...mission, remainingDistanceM: 0, etaS: 0 } } : {}),
      health: { level: healthLevelOf(state), faults: faultCodesOf(state), cpuTempC: 0 },
      // A VDA 5050 robot localises on its map, not by satellite.
      gpsFix: 0,
      mapId: pos?.mapId ?? '',
      ...(state.loads.length > 0 ? { loads: loadsOf(state.loads) } : {}),
    }],
  }));
}
