/**
 * The text of the `telemetry_samples` DDL files (telemetry/schema/samples.{modern,legacy}.sql),
 * derived from the field table: `npm run gen` writes them and `npm run gen:check` fails when they
 * differ. They stay plain SQL files so an operator can read and run them without TypeScript; the
 * gateway reads them at start (schema.ts).
 */
import { HEALTH_LEVEL_ENUM8, SAMPLE_FIELDS, type SampleField } from '../sample/index.js';
import type { SchemaFlavor } from './schema.js';

const HEAD: Record<SchemaFlavor, string> = {
  modern: [
    '-- telemetry_samples for ClickHouse 21.x and later (chdb 3.x embeds 26.x): one row per robot sample.',
    '-- Placeholders filled by src/telemetry/store/schema.ts: {retention_days}.',
    '-- `ts` is computed from `ts_ms` (DEFAULT) so the gateway\'s row encoders never write it.',
  ].join('\n'),
  legacy: [
    '-- telemetry_samples for old ClickHouse servers (tested on Debian\'s 18.16): no DateTime64, no CODEC,',
    '-- no TTL, no LowCardinality by default. Same column names and insert order as samples.modern.sql;',
    '-- `ts` has second resolution here (ts_ms keeps the milliseconds). Retention is the operator\'s job',
    '-- (ALTER TABLE ... DROP PARTITION), see telemetry/README.md.',
  ].join('\n'),
};

const TAIL: Record<SchemaFlavor, string> = {
  modern: 'ENGINE = MergeTree\nPARTITION BY toYYYYMMDD(ts)\nORDER BY (fleet_id, robot_id, ts)\nTTL toDateTime(ts) + INTERVAL {retention_days} DAY\nSETTINGS index_granularity = 8192\n',
  legacy: 'ENGINE = MergeTree\nPARTITION BY toYYYYMMDD(ts)\nORDER BY (fleet_id, robot_id, ts)\nSETTINGS index_granularity = 8192\n',
};

/** `ts`, computed from `ts_ms`, follows this column (it is in the sort key, next to the ids). */
const TS_AFTER = 'fleet_id';
const TS_TYPE: Record<SchemaFlavor, string> = {
  modern: 'DateTime64(3, \'UTC\') DEFAULT fromUnixTimestamp64Milli(ts_ms, \'UTC\') CODEC(DoubleDelta, ZSTD(1))',
  legacy: 'DateTime DEFAULT toDateTime(intDiv(ts_ms, 1000))',
};

/**
 * A column's modern type with its storage details: the field's own `modern` when it has one, else
 * the codec that suits its type (timestamps delta-coded, measurements Gorilla, small ints T64,
 * strings dictionary-coded).
 */
function modernType(f: SampleField): string {
  if (f.modern !== null) return f.modern;
  switch (f.rowType) {
    case 'Int64': return 'Int64 CODEC(DoubleDelta, ZSTD(1))';
    case 'Float64': case 'Float32': return `${f.rowType} CODEC(Gorilla, ZSTD(1))`;
    case 'Int32': return 'Int32 CODEC(T64, ZSTD(1))';
    case 'UInt8': return 'UInt8';
    case 'Enum8': return HEALTH_LEVEL_ENUM8;
    case 'String': return 'LowCardinality(String)';
    case 'Array(String)': return 'Array(LowCardinality(String))';
  }
}

const legacyType = (f: SampleField): string => (f.rowType === 'Enum8' ? HEALTH_LEVEL_ENUM8 : f.rowType);

/** The DDL file of `flavor` for the columns of `fields` (the field table unless given). */
export function samplesDdlFile(flavor: SchemaFlavor, fields: readonly SampleField[] = SAMPLE_FIELDS): string {
  const cols: [string, string][] = [];
  for (const f of fields) {
    cols.push([f.column, flavor === 'modern' ? modernType(f) : legacyType(f)]);
    if (f.column === TS_AFTER) cols.push(['ts', TS_TYPE[flavor]]);
  }
  const width = Math.max(...cols.map(([c]) => c.length)) + 1;
  const body = cols.map(([c, t]) => `    ${c.padEnd(width)}${t}`).join(',\n');
  return `${HEAD[flavor]}\nCREATE TABLE IF NOT EXISTS telemetry_samples\n(\n${body}\n)\n${TAIL[flavor]}`;
}
