/**
 * The live stream's per-sample JSON message (docs/telemetry-stream.md, "sample"), from one sample's
 * values by column (the reference decoder). The fast decoders write the same bytes directly
 * (decode/fast-reader.ts, native-bridge/); test/telemetry/decoders.test.ts holds them to this, and
 * test/telemetry/sample-table.test.ts holds this to the field table's `live` paths.
 */
import type { ByteWriter } from './byte-writer.js';
import type { RowValues } from './row-values.js';
import { HEALTH_LEVEL_NAMES } from './sample-table.js';

/** JSON has no NaN/Infinity: they become null; otherwise JavaScript's own number spelling. */
function n(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  return typeof v === 'number' && Number.isFinite(v) ? String(v) : 'null';
}

/** The constant head of every sample message of one robot, built once per task. */
export function liveJsonPrefix(robotId: string, fleetId: string): string {
  return `{"op":"sample","robot_id":${JSON.stringify(robotId)},"fleet_id":${JSON.stringify(fleetId)},"ts_ms":`;
}

/** Appends one sample message (no trailing newline: one WebSocket message per sample). */
export function writeLiveJson(w: ByteWriter, prefix: string, v: RowValues): void {
  const runId = v.mission_run_id as string;
  const mission = runId === ''
    ? 'null'
    : `{"run_id":${JSON.stringify(runId)},"mission_state":${JSON.stringify(v.mission_state)},` +
      `"mission_progress_pct":${n(v.progress_pct)},"current_step_index":${n(v.step_index)},` +
      `"remaining_distance_m":${n(v.remaining_distance_m)},"estimated_time_remaining_s":${n(v.eta_s)}}`;
  const level = v.health_level as number;
  w.utf8(
    prefix +
      `${n(v.ts_ms)},"received_at_ms":${n(v.received_at_ms)},` +
      `"latitude":${n(v.lat)},"longitude":${n(v.lon)},"elevation_m":${n(v.elevation_m)},` +
      `"pose":{"x_m":${n(v.pose_x_m)},"y_m":${n(v.pose_y_m)},"z_m":${n(v.pose_z_m)},"heading_deg":${n(v.heading_deg)}},` +
      `"velocity":{"linear_mps":${n(v.speed_mps)},"angular_dps":${n(v.yaw_rate_dps)}},` +
      `"battery":{"percent":${n(v.battery_pct)},"voltage_v":${n(v.voltage_v)},"charging":${v.charging === true}},` +
      `"mode":${JSON.stringify(v.mode)},"estop":${v.estop === true},"gps_fix":${n(v.gps_fix)},"mission":${mission},` +
      `"health":{"level":"${HEALTH_LEVEL_NAMES[level] ?? 'unspecified'}","faults":${JSON.stringify(v.faults)},"cpu_temp_c":${n(v.cpu_temp_c)}}}`,
  );
}
