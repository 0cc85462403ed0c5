/**
 * The telemetry sample and its encodings, shared by every stage of the pipe: the field table
 * (sample-table.ts, the one place a column is defined), RowBinary rows, the LMDB snapshot codec, the
 * live-stream JSON message and the Foxglove channels. Imports nothing else of telemetry.
 * Code outside this folder imports it through this file only (.dependency-cruiser.mjs).
 */
export { ByteWriter } from './byte-writer.js';
export { FOXGLOVE_KINDS, foxgloveSchemaText, foxgloveTopic } from './foxglove-channels.js';
export { liveJsonPrefix, writeLiveJson } from './live-json.js';
export { encodeRowBinaryString, writeRowFromValues, COLUMN_INDEX, forEachRow } from './row-rowbinary.js';
export type { RowValue, RowValues } from './row-values.js';
export { SAMPLE_FIELDS, utf8CutEnd, BOUND_REASONS, BOUND_LIMITS, HEALTH_LEVEL_ENUM8, BOUND_FAULT, BOUND_FAULTS, BOUND_MODE, BOUND_RUN_ID, BOUND_STATE, HEALTH_LEVEL_NAMES } from './sample-table.js';
export type { RowType, SampleField, ProtoType, StringBound } from './sample-table.js';
export { decodeSnapshot, newSnapshotScalars, readSnapshotScalars, snapshotConditions, snapshotFleetId, SNAPSHOT_FORMAT, snapshotTsOf } from './snapshot-codec.js';
export type { SnapshotScalars } from './snapshot-codec.js';
export type { TelemetrySnapshot } from './snapshot.js';
