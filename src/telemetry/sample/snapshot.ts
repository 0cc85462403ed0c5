/**
 * The latest telemetry per robot, as kept in LMDB (`snapshots` db) and served by GET /v1/robots.
 * Written by the ingest path (src/telemetry/ingest) from decoded samples; read on the REST path.
 */

export interface TelemetrySnapshot {
  robotId: string;
  fleetId: string;
  /** Robot clock of the sample. */
  tsMs: number;
  /** Gateway clock when the batch carrying it arrived. */
  receivedAtMs: number;
  latitude: number;
  longitude: number;
  elevationM: number;
  pose: { xM: number; yM: number; zM: number; headingDeg: number };
  velocity: { linearMps: number; angularDps: number };
  gpsFix: number;
  mode: string;
  estop: boolean;
  battery: { percent: number; voltageV: number; charging: boolean };
  mission: {
    runId: string;
    missionState: string;
    progressPct: number;
    stepIndex: number;
    remainingDistanceM: number;
    etaS: number;
  } | null;
  health: { level: 'unspecified' | 'ok' | 'warn' | 'error'; faults: string[]; cpuTempC: number };
}
