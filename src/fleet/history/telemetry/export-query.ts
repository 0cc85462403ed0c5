/**
 * How many samples an MCAP export would hold, asked before it starts: a range with more than
 * {@link MAX_EXPORT_SAMPLES} is a 400 naming the limit (the answer's status goes out before the
 * streamed file, so it cannot be decided half way). The samples themselves are read a page at a time
 * with the raw page query (samples.ts) while the file is written.
 */
import type { BoundQuery, Rows } from '../../../telemetry/store/index.js';
import { MAX_EXPORT_SAMPLES, type HistoryRange } from './limits.js';
import { RANGE_WHERE, rangeParams, type HistoryRobot } from './range-sql.js';

// Counts at most one past the limit: all the answer needs to say.
export const EXPORT_COUNT_SQL = `
SELECT count() FROM (SELECT 1 FROM telemetry_samples WHERE ${RANGE_WHERE} LIMIT ${MAX_EXPORT_SAMPLES + 1})`;

/** The count query. */
export function exportCountQuery(robot: HistoryRobot, range: HistoryRange): BoundQuery {
  return { sql: EXPORT_COUNT_SQL, params: rangeParams(robot, range) };
}

/** Whether the range holds more samples than one export may. */
export function tooManyToExport(rows: Rows): boolean {
  return Number(rows[0]?.[0] ?? 0) > MAX_EXPORT_SAMPLES;
}
