/**
 * The samples of an MCAP export: the whole range in robot time order, at most
 * {@link MAX_EXPORT_SAMPLES} (one more is read to tell that the range holds more: the route answers
 * 400 naming the limit rather than a silently cut file).
 */
import type { BoundQuery, Rows } from '../../telemetry/bound-query.js';
import { MAX_EXPORT_SAMPLES, type HistoryRange } from './limits.js';
import { RANGE_WHERE, rangeParams, type HistoryRobot } from './range-sql.js';
import { parseSample, SAMPLE_COLUMNS, SAMPLE_ORDER, type HistorySample } from './samples.js';

// The LIMIT is a constant of this module (a literal on every store), never a request value.
export const EXPORT_SQL = `
SELECT ${SAMPLE_COLUMNS}
FROM telemetry_samples
WHERE ${RANGE_WHERE}
ORDER BY ${SAMPLE_ORDER}
LIMIT ${MAX_EXPORT_SAMPLES + 1}`;

/** The export query. */
export function exportQuery(robot: HistoryRobot, range: HistoryRange): BoundQuery {
  return { sql: EXPORT_SQL, params: rangeParams(robot, range) };
}

/** The samples, or `tooMany` when the range holds more than the export limit. */
export function parseExportRows(rows: Rows): { samples: HistorySample[]; tooMany: boolean } {
  if (rows.length > MAX_EXPORT_SAMPLES) return { samples: [], tooMany: true };
  return { samples: rows.map(parseSample), tooMany: false };
}
