/**
 * Raw samples of one robot, a page at a time, in robot time order (docs/telemetry-history.md).
 *
 * A page holds the first `limit` samples after the previous page's last timestamp, plus any more that
 * share the page's last timestamp: pages end between timestamps, so a keyset on `ts_ms` alone loses
 * nothing (up to SAMPLE_PAGE_ROWS rows a page: a stuck robot clock cannot make a page unbounded).
 * The page's cut-off is found in the same query (the `limit`-th smallest timestamp), because a bound
 * value cannot stand in `LIMIT` on every store (18.16 reads parameters through scalar subqueries, and
 * `LIMIT` takes a literal); `arrayElement` needs an unsigned index there.
 */
import type { BoundQuery, Rows } from '../../telemetry/bound-query.js';
import { HISTORY_FIELDS, type HistoryField } from './fields.js';
import { SAMPLE_PAGE_ROWS, type HistoryRange } from './limits.js';
import { RANGE_WHERE, rangeParams, type HistoryRobot } from './range-sql.js';

/** How a column is selected: fault lists travel as one string (see {@link parseFaults}). */
function selectExpr(f: HistoryField): string {
  if (f.kind === 'strings') {
    // Counted, then each code with `%` and `,` percent-encoded: a TSV array field cannot be told
    // apart from its own escapes once the TSV layer is unescaped.
    return `concat(toString(length(${f.column})), ':', arrayStringConcat(arrayMap(x -> replaceAll(replaceAll(x, '%', '%25'), ',', '%2C'), ${f.column}), ','))`;
  }
  return f.column;
}

/** Every sample field as selected, in {@link HISTORY_FIELDS} order. */
export const SAMPLE_COLUMNS = HISTORY_FIELDS.map(selectExpr).join(', ');

/**
 * Robot time order; samples a robot sent with one timestamp (rare: a clock step) are ordered by what
 * they hold, so every store returns them alike.
 */
export const SAMPLE_ORDER = 'ts_ms, received_at_ms, pose_x_m, pose_y_m, lat, lon';

const WHERE = `${RANGE_WHERE}
  AND ts_ms > {after_ms:Int64}`;

export const SAMPLES_SQL = `
SELECT ${SAMPLE_COLUMNS},
  (SELECT count() FROM telemetry_samples WHERE ${WHERE}) AS left_in_range
FROM telemetry_samples
WHERE ${WHERE}
  AND ts_ms <= (
    SELECT if(count() > {limit:Int64}, arrayElement(arraySort(groupArray(ts_ms)), toUInt64({limit:Int64})), {to_ms:Int64})
    FROM telemetry_samples WHERE ${WHERE})
ORDER BY ${SAMPLE_ORDER}
LIMIT ${SAMPLE_PAGE_ROWS}`;

/** The query of one page: samples after `afterMs` (the previous page's last timestamp; `fromMs - 1` for the first). */
export function samplesQuery(robot: HistoryRobot, range: HistoryRange, afterMs: number, limit: number): BoundQuery {
  return {
    sql: SAMPLES_SQL,
    params: { ...rangeParams(robot, range), after_ms: { type: 'Int64', value: afterMs }, limit: { type: 'Int64', value: limit } },
  };
}

/** A sample as the API shows it: REST names to values. */
export type HistorySample = Record<string, number | boolean | string | string[] | null>;

/** Decodes a fault list written by {@link selectExpr}. */
export function parseFaults(text: string): string[] {
  const colon = text.indexOf(':');
  if (Number(text.slice(0, colon)) === 0) return [];
  return text.slice(colon + 1).split(',').map((s) => s.replace(/%2C/g, ',').replace(/%25/g, '%'));
}

function value(f: HistoryField, text: string): number | boolean | string | string[] | null {
  switch (f.kind) {
    case 'number': {
      // NaN and infinities (a robot may send them; the store prints `nan`, `inf`) have no JSON form: null, as on the live stream.
      const n = Number(text);
      return Number.isFinite(n) ? n : null;
    }
    case 'boolean':
      return text === '1';
    case 'string':
      return text;
    case 'strings':
      return parseFaults(text);
  }
}

/** A sample from a row whose first columns are {@link SAMPLE_COLUMNS}. */
export function parseSample(row: readonly string[]): HistorySample {
  const s: HistorySample = {};
  HISTORY_FIELDS.forEach((f, i) => (s[f.name] = value(f, row[i] ?? '')));
  return s;
}

/** One page read: its samples and whether more follow in the range. */
export interface SamplePage {
  samples: HistorySample[];
  more: boolean;
}

/** The page's samples from the query's rows. */
export function parseSampleRows(rows: Rows): SamplePage {
  const samples: HistorySample[] = [];
  let left = 0;
  for (const row of rows) {
    samples.push(parseSample(row));
    left = Number(row[HISTORY_FIELDS.length]);
  }
  // Every row carries the count of samples after the previous page: more follow when the page took fewer.
  return { samples, more: left > samples.length };
}
