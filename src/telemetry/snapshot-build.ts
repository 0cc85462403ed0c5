/**
 * Builds the LMDB snapshot (src/telemetry/snapshot.ts) from a flat sample. Runs in the decode worker;
 * the main thread only compares `tsMs` and stores the object.
 */
import { HEALTH_LEVEL_NAMES, type FlatSample } from './sample-fields.js';
import type { TelemetrySnapshot } from './snapshot.js';

/** A fresh snapshot object (it crosses the worker boundary, so it must not alias the reused view). */
export function buildSnapshot(robotId: string, fleetId: string, f: FlatSample): TelemetrySnapshot {
  return {
    robotId,
    fleetId,
    tsMs: f.tsMs,
    receivedAtMs: f.receivedAtMs,
    latitude: f.latitude,
    longitude: f.longitude,
    elevationM: f.elevationM,
    pose: { xM: f.xM, yM: f.yM, zM: f.zM, headingDeg: f.headingDeg },
    velocity: { linearMps: f.linearMps, angularDps: f.angularDps },
    gpsFix: f.gpsFix,
    mode: f.mode,
    estop: f.estop,
    battery: { percent: f.batteryPct, voltageV: f.voltageV, charging: f.charging },
    // proto: run_id is empty when the robot runs no mission.
    mission: f.missionRunId === ''
      ? null
      : {
          runId: f.missionRunId,
          missionState: f.missionState,
          progressPct: f.progressPct,
          stepIndex: f.stepIndex,
          remainingDistanceM: f.remainingDistanceM,
          etaS: f.etaS,
        },
    health: { level: HEALTH_LEVEL_NAMES[f.healthLevel] ?? 'unspecified', faults: [...f.faults], cpuTempC: f.cpuTempC },
  };
}
