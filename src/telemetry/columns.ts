/**
 * The columns every insert into `telemetry_samples` names, in the order the row encoders write them.
 *
 * `ts` is not listed: both DDL variants (telemetry/schema/*.sql) compute it with a DEFAULT from
 * `ts_ms`, which lets one RowBinary/TSV encoding serve old servers (DateTime) and modern ones
 * (DateTime64(3)) alike. test/telemetry/schema.test.ts checks this list against both DDL files.
 */
export const TABLE_NAME = 'telemetry_samples';

export const INSERT_COLUMNS = [
  'robot_id', // String
  'fleet_id', // String
  'ts_ms', // Int64
  'received_at_ms', // Int64
  'lat', // Float64
  'lon', // Float64
  'elevation_m', // Float64
  'pose_x_m', // Float64
  'pose_y_m', // Float64
  'pose_z_m', // Float64
  'heading_deg', // Float64
  'speed_mps', // Float64
  'yaw_rate_dps', // Float64
  'battery_pct', // Float32
  'voltage_v', // Float32
  'charging', // UInt8
  'mode', // String
  'estop', // UInt8
  'gps_fix', // Int32
  'mission_run_id', // String
  'mission_state', // String
  'progress_pct', // Float32
  'step_index', // Int32
  'remaining_distance_m', // Float64
  'eta_s', // Float64
  'health_level', // Enum8('unspecified' = 0, 'ok' = 1, 'warn' = 2, 'error' = 3)
  'faults', // Array(String)
  'cpu_temp_c', // Float32
] as const;

/**
 * The RowBinary wire type of each insert column, as row-rowbinary.ts writes it: what a
 * `file(..., RowBinary, structure)` read needs (chdb-store.ts). LowCardinality is a storage detail, so
 * its columns travel as plain String; the INSERT converts to the table's types.
 */
export const ROWBINARY_TYPES: Readonly<Record<(typeof INSERT_COLUMNS)[number], string>> = {
  robot_id: 'String',
  fleet_id: 'String',
  ts_ms: 'Int64',
  received_at_ms: 'Int64',
  lat: 'Float64',
  lon: 'Float64',
  elevation_m: 'Float64',
  pose_x_m: 'Float64',
  pose_y_m: 'Float64',
  pose_z_m: 'Float64',
  heading_deg: 'Float64',
  speed_mps: 'Float64',
  yaw_rate_dps: 'Float64',
  battery_pct: 'Float32',
  voltage_v: 'Float32',
  charging: 'UInt8',
  mode: 'String',
  estop: 'UInt8',
  gps_fix: 'Int32',
  mission_run_id: 'String',
  mission_state: 'String',
  progress_pct: 'Float32',
  step_index: 'Int32',
  remaining_distance_m: 'Float64',
  eta_s: 'Float64',
  health_level: "Enum8('unspecified' = 0, 'ok' = 1, 'warn' = 2, 'error' = 3)",
  faults: 'Array(String)',
  cpu_temp_c: 'Float32',
};

/** `robot_id String, fleet_id String, ...`: the structure argument of a RowBinary `file()` read. */
export const ROWBINARY_STRUCTURE = INSERT_COLUMNS.map((c) => `${c} ${ROWBINARY_TYPES[c]}`).join(', ');

/** `(robot_id, fleet_id, ...)` for an INSERT statement. */
export const INSERT_COLUMN_LIST = `(${INSERT_COLUMNS.join(', ')})`;
