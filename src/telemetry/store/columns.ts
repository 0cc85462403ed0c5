/**
 * The columns every insert into `telemetry_samples` names, in the order the row encoders write them,
 * derived from the field table (sample-table.ts).
 *
 * `ts` is not listed: both DDL variants (telemetry/schema/*.sql) compute it with a DEFAULT from
 * `ts_ms`, which lets one RowBinary encoding serve old servers (DateTime) and modern ones
 * (DateTime64(3)) alike. test/telemetry/schema.test.ts checks this list against both DDL files.
 */
import { HEALTH_LEVEL_ENUM8, SAMPLE_FIELDS } from '../sample/index.js';

export const TABLE_NAME = 'telemetry_samples';

export const INSERT_COLUMNS: readonly string[] = SAMPLE_FIELDS.map((f) => f.column);

/**
 * The RowBinary wire type of each insert column: what a `file(..., RowBinary, structure)` read needs
 * (chdb-store.ts). LowCardinality is a storage detail, so its columns travel as plain String; the
 * INSERT converts to the table's types.
 */
export const ROWBINARY_TYPES: Readonly<Record<string, string>> = Object.fromEntries(
  SAMPLE_FIELDS.map((f) => [f.column, f.rowType === 'Enum8' ? HEALTH_LEVEL_ENUM8 : f.rowType]),
);

/** `robot_id String, fleet_id String, ...`: the structure argument of a RowBinary `file()` read. */
export const ROWBINARY_STRUCTURE = INSERT_COLUMNS.map((c) => `${c} ${ROWBINARY_TYPES[c]}`).join(', ');

/** `(robot_id, fleet_id, ...)` for an INSERT statement. */
export const INSERT_COLUMN_LIST = `(${INSERT_COLUMNS.join(', ')})`;
