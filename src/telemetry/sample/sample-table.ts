/**
 * The telemetry sample shape, written once: one entry per `telemetry_samples` column, in insert
 * order, saying where its value comes from (the TelemetrySample field, or the batch's context) and
 * where it goes (the RowBinary row, the LMDB snapshot, the live-stream message, the REST robot view,
 * the agent's `SampleInput`).
 *
 * What this table drives:
 * - at module load: the insert column list and RowBinary structure (store/columns.ts), the reference
 *   decoder (decode/reference.ts), the live message's layout (live-json.ts), reading a snapshot back
 *   (snapshot-codec.ts); at compile time: the `TelemetrySnapshot` type (snapshot.ts);
 * - through `npm run gen` (scripts/derived-files.mjs; `npm run gen:check` and
 *   test/telemetry/field-forms.test.ts fail when a file is stale): the DDL files
 *   (telemetry/schema/*.sql, plain SQL for operators), the JS reader's field code
 *   (decode/fast-reader.ts), the REST robot view's telemetry (api/robot-view.ts, typed against its
 *   published schema api/schemas/robots.ts) and the agent's `SampleInput` and encoder
 *   (agent/sample-encoder.ts). The generated code is the straight-line code a person would write:
 *   nothing walks this table per sample.
 * Written by hand, and held to this table by tests: the C++ addon (decoders.test.ts, byte for byte
 * against the reference), the published view schema, the Foxglove status channel, and the migration
 * that adds a column to existing stores. docs/adding-a-telemetry-field.md walks through a new field.
 */

/** RowBinary wire type of a column (also its type in the legacy DDL; modern adds storage details). */
export type RowType = 'String' | 'Int64' | 'Float64' | 'Float32' | 'UInt8' | 'Int32' | 'Enum8' | 'Array(String)';

/** Scalar kind of the proto field a column is read from. */
export type ProtoType = 'int64' | 'int32' | 'enum' | 'bool' | 'double' | 'float' | 'string' | 'repeated string';

export interface SampleField {
  /** ClickHouse column. */
  readonly column: string;
  readonly rowType: RowType;
  /**
   * TelemetrySample field numbers, outer first ([2, 1] = position.latitude); null for values that
   * come from the batch's context (robot, fleet, gateway receive time).
   */
  readonly proto: readonly number[] | null;
  readonly protoType: ProtoType | null;
  /** Dotted path in the live-stream "sample" message (docs/telemetry-stream.md). */
  readonly live: string;
  /** Dotted path in `TelemetrySnapshot` (GET /v1/robots). */
  readonly snapshot: string;
  /**
   * Dotted paths in the REST robot view (`RobotView`, GET /v1/robots and /v1/robots/{robot_id}) that
   * show this value: the flat field for simple clients and/or its place in `motionTelemetry` /
   * `statusTelemetry`. These are the published names (docs/api-conventions.md governs renames).
   */
  readonly view: readonly string[];
  /** Dotted path in the agent's `SampleInput`; null for context values. */
  readonly agent: string | null;
  /**
   * The bound on a robot-supplied string (or each string of a list), null for other columns: every
   * decoder cuts a longer value to its longest UTF-8 prefix of at most `maxBytes` bytes, and keeps
   * the first `maxItems` strings of a list (docs/robot-link.md, "Bounds on telemetry strings").
   */
  readonly bound: StringBound | null;
  /**
   * The column's type in the modern DDL when not the default for its `rowType` (store/samples-ddl.ts:
   * a codec per type, strings dictionary-coded); null for the default.
   */
  readonly modern: string | null;
}

/** Byte bound of a string column (see {@link SampleField.bound}). */
export interface StringBound {
  readonly maxBytes: number;
  /** For a list: how many strings are kept. */
  readonly maxItems?: number;
}

/** Health level names by proto enum value (also the ClickHouse Enum8 value). */
export const HEALTH_LEVEL_NAMES = ['unspecified', 'ok', 'warn', 'error'] as const;
export type HealthLevelName = (typeof HEALTH_LEVEL_NAMES)[number];

/** `Enum8(...)` as the DDL and the RowBinary structure spell it. */
export const HEALTH_LEVEL_ENUM8 = `Enum8(${HEALTH_LEVEL_NAMES.map((n, i) => `'${n}' = ${i}`).join(', ')})`;

/** A row of the table, keeping its column, type and paths as literal types (snapshot.ts derives `TelemetrySnapshot` from them). */
const f = <const C extends string, const R extends RowType, const L extends string, const Sn extends string>(
  column: C, rowType: R, proto: readonly number[] | null, protoType: ProtoType | null,
  live: L, snapshot: Sn, view: readonly string[], agent: string | null, bound: StringBound | null = null, modern: string | null = null,
): SampleField & { readonly column: C; readonly rowType: R; readonly live: L; readonly snapshot: Sn } =>
  ({ column, rowType, proto, protoType, live, snapshot, view, agent, bound, modern });

// REST robot view prefixes.
const M = 'motionTelemetry.';
const S = 'statusTelemetry.';

const TABLE = [
  f('robot_id', 'String', null, null, 'robot_id', 'robotId', ['id'], null),
  f('fleet_id', 'String', null, null, 'fleet_id', 'fleetId', ['fleetId'], null),
  f('ts_ms', 'Int64', [1], 'int64', 'ts_ms', 'tsMs', [M + 'tsMs', S + 'tsMs'], 'tsMs'),
  f('received_at_ms', 'Int64', null, null, 'received_at_ms', 'receivedAtMs', ['lastSeenMs'], null),
  f('lat', 'Float64', [2, 1], 'double', 'latitude', 'latitude', ['latitude', M + 'position.latitude'], 'latitude'),
  f('lon', 'Float64', [2, 2], 'double', 'longitude', 'longitude', ['longitude', M + 'position.longitude'], 'longitude'),
  f('elevation_m', 'Float64', [2, 3], 'double', 'elevation_m', 'elevationM', ['elevationM', M + 'position.elevationM'], 'elevationM'),
  f('pose_x_m', 'Float64', [3, 1], 'double', 'pose.x_m', 'pose.xM', [M + 'pose.xM'], 'xM'),
  f('pose_y_m', 'Float64', [3, 2], 'double', 'pose.y_m', 'pose.yM', [M + 'pose.yM'], 'yM'),
  f('pose_z_m', 'Float64', [3, 3], 'double', 'pose.z_m', 'pose.zM', [M + 'pose.zM'], 'zM'),
  f('heading_deg', 'Float64', [3, 4], 'double', 'pose.heading_deg', 'pose.headingDeg', ['headingDeg', M + 'pose.headingDeg'], 'headingDeg'),
  f('speed_mps', 'Float64', [4, 1], 'double', 'velocity.linear_mps', 'velocity.linearMps', ['speedMps', M + 'velocity.linearMps'], 'linearMps'),
  f('yaw_rate_dps', 'Float64', [4, 2], 'double', 'velocity.angular_dps', 'velocity.angularDps', ['angularDps', M + 'velocity.angularDps'], 'angularDps'),
  f('battery_pct', 'Float32', [5, 1], 'float', 'battery.percent', 'battery.percent', ['batteryPct', S + 'battery.percent'], 'batteryPercent'),
  f('voltage_v', 'Float32', [5, 2], 'float', 'battery.voltage_v', 'battery.voltageV', ['batteryVoltageV', S + 'battery.voltageV'], 'voltageV'),
  f('charging', 'UInt8', [5, 3], 'bool', 'battery.charging', 'battery.charging', ['charging', S + 'battery.charging'], 'charging'),
  f('mode', 'String', [6], 'string', 'mode', 'mode', ['mode', S + 'mode'], 'mode', { maxBytes: 64 }),
  f('estop', 'UInt8', [7], 'bool', 'estop', 'estop', ['estop', S + 'estop'], 'estop'),
  f('gps_fix', 'Int32', [10], 'int32', 'gps_fix', 'gpsFix', ['gpsFix', M + 'gpsFix'], 'gpsFix'),
  // The mission group: `run_id` '' means no mission (live and snapshot show `mission: null`).
  f('mission_run_id', 'String', [8, 1], 'string', 'mission.run_id', 'mission.runId', [S + 'mission.runId'], 'mission.runId', { maxBytes: 64 }, 'String CODEC(ZSTD(1))'),
  f('mission_state', 'String', [8, 2], 'string', 'mission.mission_state', 'mission.missionState', ['missionState', S + 'mission.missionState'], 'mission.missionState', { maxBytes: 64 }),
  f('progress_pct', 'Float32', [8, 3], 'float', 'mission.mission_progress_pct', 'mission.progressPct', ['missionProgressPct', S + 'mission.missionProgressPct'], 'mission.progressPct'),
  f('step_index', 'Int32', [8, 4], 'int32', 'mission.current_step_index', 'mission.stepIndex', [S + 'mission.currentStepIndex'], 'mission.stepIndex'),
  f('remaining_distance_m', 'Float64', [8, 5], 'double', 'mission.remaining_distance_m', 'mission.remainingDistanceM', [S + 'mission.remainingDistanceM'], 'mission.remainingDistanceM'),
  f('eta_s', 'Float64', [8, 6], 'double', 'mission.estimated_time_remaining_s', 'mission.etaS', [S + 'mission.estimatedTimeRemainingS'], 'mission.etaS'),
  f('health_level', 'Enum8', [9, 1], 'enum', 'health.level', 'health.level', ['healthLevel', S + 'health.level'], 'healthLevel'),
  f('faults', 'Array(String)', [9, 2], 'repeated string', 'health.faults', 'health.faults', [S + 'health.faults'], 'faults', { maxBytes: 64, maxItems: 64 }),
  f('cpu_temp_c', 'Float32', [9, 3], 'float', 'health.cpu_temp_c', 'health.cpuTempC', [S + 'health.cpuTempC'], 'cpuTempC'),
  // The map the pose is on: robots on several maps (floors, halls) report x/y per map; '' when not named.
  f('map_id', 'String', [11], 'string', 'map_id', 'mapId', [M + 'mapId'], 'mapId', { maxBytes: 64 }),
  // The load group: a count plus parallel lists of ids and types (the same index is the same load),
  // not one nested column per load: a handful of loads per robot at most, read as lists in history
  // queries (`has(load_ids, 'pallet-7')`), and every decoder already writes string lists.
  f('load_count', 'Int32', [12, 1], 'int32', 'loads.count', 'loads.count', [S + 'loads.count'], 'loads.count'),
  f('load_ids', 'Array(String)', [12, 2], 'repeated string', 'loads.ids', 'loads.ids', [S + 'loads.ids'], 'loads.ids', { maxBytes: 64, maxItems: 16 }, 'Array(String) CODEC(ZSTD(1))'),
  f('load_types', 'Array(String)', [12, 3], 'repeated string', 'loads.types', 'loads.types', [S + 'loads.types'], 'loads.types', { maxBytes: 64, maxItems: 16 }),
  f('load_weight_kg', 'Float32', [12, 4], 'float', 'loads.weight_kg', 'loads.weightKg', [S + 'loads.weightKg'], 'loads.weightKg'),
] as const;

/** The table's rows as literal types (for types derived from it: `TelemetrySnapshot`). */
export type SampleTable = typeof TABLE;

export const SAMPLE_FIELDS: readonly SampleField[] = TABLE;

/**
 * Why a decoder bounded a value, one entry per bound in {@link SAMPLE_FIELDS} order: `<column>_too_long`
 * for each bounded column, then `<column>_too_many` for each list. The index is the code the three
 * decoders count under (the C++ addon too: native-bridge/src/telemetry_decoder.cc, kBound*), and the
 * name is the `reason` label of `fleetgw_telemetry_values_bounded_total`.
 */
export const BOUND_REASONS: readonly string[] = [
  ...SAMPLE_FIELDS.filter((x) => x.bound !== null).map((x) => `${x.column}_too_long`),
  ...SAMPLE_FIELDS.filter((x) => x.bound?.maxItems !== undefined).map((x) => `${x.column}_too_many`),
];

/** The limit behind each {@link BOUND_REASONS} entry (bytes, or strings for `_too_many`), as the decoders take it. */
export const BOUND_LIMITS: Uint32Array = Uint32Array.from([
  ...SAMPLE_FIELDS.filter((x) => x.bound !== null).map((x) => x.bound!.maxBytes),
  ...SAMPLE_FIELDS.filter((x) => x.bound?.maxItems !== undefined).map((x) => x.bound!.maxItems!),
]);

/** Indexes into {@link BOUND_REASONS} / {@link BOUND_LIMITS} (the decoders' hot paths read them as constants). */
export const BOUND_MODE = BOUND_REASONS.indexOf('mode_too_long');
export const BOUND_RUN_ID = BOUND_REASONS.indexOf('mission_run_id_too_long');
export const BOUND_STATE = BOUND_REASONS.indexOf('mission_state_too_long');
export const BOUND_FAULT = BOUND_REASONS.indexOf('faults_too_long');
export const BOUND_FAULTS = BOUND_REASONS.indexOf('faults_too_many');

/**
 * The end of the longest prefix of the valid UTF-8 bytes [s, e) of `u8` that is at most `maxBytes`
 * long and ends on a character boundary (`e` when the value fits).
 */
export function utf8CutEnd(u8: Uint8Array, s: number, e: number, maxBytes: number): number {
  if (e - s <= maxBytes) return e;
  let c = s + maxBytes;
  while (c > s && (u8[c]! & 0xc0) === 0x80) c--;
  return c;
}
