/**
 * The fields of a stored telemetry sample as the history API names them (docs/telemetry-history.md),
 * derived from the one telemetry field table (src/telemetry/sample/sample-table.ts) so a new column shows up
 * here without a second list to keep in step.
 *
 * Naming: a field the robot reports takes its flat name in the REST robot view (`latitude`,
 * `speedMps`, `batteryPct`, ...), or, where the view shows it only nested (`motionTelemetry.pose.xM`),
 * the camelCase of its column (`poseXM`); a nested last segment alone (`xM`) would not say what it
 * belongs to. The gateway's receive time is `receivedAtMs` (the robot view's `lastSeenMs` means the
 * newest sample's; here it is each sample's). `robot_id` and `fleet_id` are left out: the robot is in
 * the path. The robot's timestamp is `tsMs`.
 */
import { SAMPLE_FIELDS, type RowType, type SampleField } from '../../../telemetry/sample/index.js';

/** A value kind as the history API returns it. */
export type HistoryKind = 'number' | 'boolean' | 'string' | 'strings';

export interface HistoryField {
  /** The REST name (see the module comment). */
  readonly name: string;
  readonly column: string;
  readonly rowType: RowType;
  readonly kind: HistoryKind;
}

function camel(column: string): string {
  return column.replace(/_([a-z])/g, (_m, c: string) => c.toUpperCase());
}

// Columns whose camelCase is not the concept's name (docs/api-conventions.md, "Field names"):
// the robot view's statusTelemetry.mission and the runs say it this way.
const CONCEPT_NAMES: Readonly<Record<string, string>> = {
  step_index: 'currentStepIndex',
  eta_s: 'estimatedTimeRemainingS',
};

function restName(f: SampleField): string {
  if (f.column === 'ts_ms') return 'tsMs';
  if (f.proto === null) return camel(f.column);
  return f.view.find((v) => !v.includes('.')) ?? CONCEPT_NAMES[f.column] ?? camel(f.column);
}

function kindOf(f: SampleField): HistoryKind {
  switch (f.rowType) {
    case 'UInt8':
      return 'boolean'; // the table's UInt8 columns are the robot's flags (charging, estop)
    case 'String':
    case 'Enum8':
      return 'string';
    case 'Array(String)':
      return 'strings';
    default:
      return 'number';
  }
}

/** Every field of a stored sample, in table order, `tsMs` first among them (robot and fleet left out). */
export const HISTORY_FIELDS: readonly HistoryField[] = SAMPLE_FIELDS
  .filter((f) => f.column !== 'robot_id' && f.column !== 'fleet_id')
  .map((f) => ({ name: restName(f), column: f.column, rowType: f.rowType, kind: kindOf(f) }));

/**
 * The fields a series summarizes (min/max/avg per bucket): the numeric values the robot reports.
 * Timestamps are the buckets themselves; flags, strings and fault lists have no average.
 */
export const SERIES_FIELDS: readonly HistoryField[] = HISTORY_FIELDS.filter(
  (f) => f.kind === 'number' && SAMPLE_FIELDS.find((s) => s.column === f.column)?.proto !== null && f.column !== 'ts_ms',
);

/** Series field names, in table order. */
export const SERIES_FIELD_NAMES: readonly string[] = SERIES_FIELDS.map((f) => f.name);
