/**
 * A downsampled series of one robot's numeric fields (docs/telemetry-history.md): the range cut into
 * fixed buckets from `fromMs` (bucket length from the range and the points asked for, limits.ts),
 * with the sample count and min/max/avg of every numeric field per bucket that has samples.
 *
 * One constant query summarizes every numeric field; the fields a caller asks for are picked from
 * its rows, so no request ever changes the SQL text. Only finite values count (a robot may send NaN
 * or infinities; JSON has neither): a field without one in a bucket is left out of that point.
 */
import type { BoundQuery, Rows } from '../../../telemetry/store/index.js';
import { SERIES_FIELDS } from './fields.js';
import type { HistoryRange } from './limits.js';
import { RANGE_WHERE, rangeParams, type HistoryRobot } from './range-sql.js';

export const SERIES_SQL = `
SELECT intDiv(ts_ms - {from_ms:Int64}, {bucket_ms:Int64}) AS b, count(),
  ${SERIES_FIELDS.map((f) => `minIf(${f.column}, isFinite(${f.column})), maxIf(${f.column}, isFinite(${f.column})), avgIf(${f.column}, isFinite(${f.column}))`).join(',\n  ')}
FROM telemetry_samples
WHERE ${RANGE_WHERE}
GROUP BY b
ORDER BY b`;

/** The series query. */
export function seriesQuery(robot: HistoryRobot, range: HistoryRange, bucketMs: number): BoundQuery {
  return { sql: SERIES_SQL, params: { ...rangeParams(robot, range), bucket_ms: { type: 'Int64', value: bucketMs } } };
}

/** A field's summary over one bucket. */
export interface Stat {
  min: number;
  max: number;
  avg: number;
}

/** One bucket: its start, its sample count and the summaries of the fields asked for. */
export interface SeriesPoint {
  tsMs: number;
  count: number;
  values: Record<string, Stat>;
}

/**
 * Averages as the engines print them can differ in the last digits with summation order; twelve
 * significant digits are far beyond any sensor and make chdb and a server answer alike.
 */
function avg(text: string): number {
  return Number(Number(text).toPrecision(12));
}

/** The points, keeping the named fields (REST names, each one of SERIES_FIELDS). */
export function parseSeriesRows(rows: Rows, range: HistoryRange, bucketMs: number, fields: readonly string[]): SeriesPoint[] {
  const wanted = new Set(fields);
  const picked = SERIES_FIELDS.map((f, i) => ({ name: f.name, i })).filter((f) => wanted.has(f.name));
  return rows.map((row) => {
    const values: Record<string, Stat> = {};
    for (const { name, i } of picked) {
      const at = 2 + 3 * i;
      const mean = avg(row[at + 2] ?? '');
      // avgIf over no finite value is NaN (minIf/maxIf then read 0): nothing to show.
      if (Number.isFinite(mean)) values[name] = { min: Number(row[at]), max: Number(row[at + 1]), avg: mean };
    }
    return { tsMs: range.fromMs + Number(row[0]) * bucketMs, count: Number(row[1]), values };
  });
}
