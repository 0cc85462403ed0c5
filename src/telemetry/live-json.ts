/**
 * The live stream's per-sample JSON message (docs/telemetry-stream.md, "sample"). Produced by the
 * decode worker, only for fleets that have subscribers at the time the task was posted, straight into
 * a byte buffer that the hub sends without re-encoding.
 */
import type { ByteWriter } from './byte-writer.js';
import { HEALTH_LEVEL_NAMES, type FlatSample } from './sample-fields.js';

/** JSON has no NaN/Infinity: they become null. */
function n(v: number): string {
  return Number.isFinite(v) ? String(v) : 'null';
}

/** The constant head of every sample message of one robot, built once per task. */
export function liveJsonPrefix(robotId: string, fleetId: string): string {
  return `{"op":"sample","robot_id":${JSON.stringify(robotId)},"fleet_id":${JSON.stringify(fleetId)},"ts_ms":`;
}

/** Appends one sample message (no trailing newline: one WebSocket message per sample). */
export function writeLiveJson(w: ByteWriter, prefix: string, f: FlatSample): void {
  const mission = f.missionRunId === ''
    ? 'null'
    : `{"run_id":${JSON.stringify(f.missionRunId)},"mission_state":${JSON.stringify(f.missionState)},` +
      `"progress_pct":${n(f.progressPct)},"step_index":${f.stepIndex},` +
      `"remaining_distance_m":${n(f.remainingDistanceM)},"eta_s":${n(f.etaS)}}`;
  const faults = f.faults.length === 0 ? '[]' : JSON.stringify(f.faults);
  w.utf8(
    prefix +
      `${n(f.tsMs)},"received_at_ms":${n(f.receivedAtMs)},` +
      `"latitude":${n(f.latitude)},"longitude":${n(f.longitude)},"elevation_m":${n(f.elevationM)},` +
      `"pose":{"x_m":${n(f.xM)},"y_m":${n(f.yM)},"z_m":${n(f.zM)},"heading_deg":${n(f.headingDeg)}},` +
      `"velocity":{"linear_mps":${n(f.linearMps)},"angular_dps":${n(f.angularDps)}},` +
      `"battery":{"percent":${n(f.batteryPct)},"voltage_v":${n(f.voltageV)},"charging":${f.charging}},` +
      `"mode":${JSON.stringify(f.mode)},"estop":${f.estop},"gps_fix":${f.gpsFix},"mission":${mission},` +
      `"health":{"level":"${HEALTH_LEVEL_NAMES[f.healthLevel] ?? 'unspecified'}","faults":${faults},"cpu_temp_c":${n(f.cpuTempC)}}}`,
  );
}
