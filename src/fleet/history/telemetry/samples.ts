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
import type { BoundQuery, Rows } from '../../../telemetry/store/index.js';
import { SAMPLE_FIELDS, utf8CutEnd } from '../../../telemetry/sample/index.js';
import { HISTORY_FIELDS, type HistoryField } from './fields.js';
import { SAMPLE_PAGE_ROWS, type HistoryRange } from './limits.js';
import { RANGE_WHERE, rangeParams, type HistoryRobot } from './range-sql.js';

/** Each bounded string field's bound in bytes, by REST name. */
const MAX_BYTES = new Map(HISTORY_FIELDS.flatMap((f) => {
  const bound = SAMPLE_FIELDS.find((x) => x.column === f.column)?.bound;
  return bound === undefined || bound === null ? [] : [[f.name, bound.maxBytes] as const];
}));

/**
 * The store's cut (`substring`, in bytes) may split a character; it keeps this many bytes past the
 * bound, so the character that straddles the bound is whole and the cut in JS ({@link cutUtf8})
 * drops it, as the ingest's cut does.
 */
const UTF8_SLACK = 3;

/**
 * How a column is selected: fault lists travel as one string (see {@link parseFaults}). Bounded
 * strings are cut near their bound here (in bytes), and to it on a character boundary when parsed,
 * so rows stored before the ingest bounded them cannot make a read unbounded either.
 */
function selectExpr(f: HistoryField): string {
  const bound = SAMPLE_FIELDS.find((x) => x.column === f.column)?.bound ?? null;
  if (f.kind === 'strings') {
    const list = bound?.maxItems === undefined ? f.column : `arraySlice(${f.column}, 1, ${bound.maxItems})`;
    const item = bound === null ? 'x' : `substring(x, 1, ${bound.maxBytes + UTF8_SLACK})`;
    // Counted, then each code with `%` and `,` percent-encoded: a TSV array field cannot be told
    // apart from its own escapes once the TSV layer is unescaped.
    return `concat(toString(length(${list})), ':', arrayStringConcat(arrayMap(x -> replaceAll(replaceAll(${item}, '%', '%25'), ',', '%2C'), ${list}), ','))`;
  }
  return bound === null ? f.column : `substring(${f.column}, 1, ${bound.maxBytes + UTF8_SLACK})`;
}

const utf8 = new TextEncoder();
const utf8Decoder = new TextDecoder();

/** `s` cut to at most `maxBytes` of UTF-8 on a character boundary (the ingest's rule: utf8CutEnd). */
export function cutUtf8(s: string, maxBytes: number): string {
  if (s.length * 3 <= maxBytes) return s;
  const b = utf8.encode(s);
  if (b.length <= maxBytes) return s;
  return utf8Decoder.decode(b.subarray(0, utf8CutEnd(b, 0, b.length, maxBytes)));
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
    case 'string': {
      const max = MAX_BYTES.get(f.name);
      return max === undefined ? text : cutUtf8(text, max);
    }
    case 'strings': {
      const max = MAX_BYTES.get(f.name);
      const items = parseFaults(text);
      return max === undefined ? items : items.map((x) => cutUtf8(x, max));
    }
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
  /** The samples' estimated JSON bytes (see {@link rowBytes}). */
  bytes: number;
  /** The page stopped at its byte budget. */
  full: boolean;
}

// Per sample: every field name quoted, a colon and a comma, and the braces.
const NAMES_BYTES = HISTORY_FIELDS.reduce((n, f) => n + f.name.length + 4, 2);
/** How each column is counted: robot text as JSON writes it (UTF-8, escapes, quotes), a boolean as `false`, a number as its text or `null`. */
const KIND = HISTORY_FIELDS.map((f) => f.kind);

/**
 * At least the bytes of `s` in a JSON string, quotes included: UTF-8 lengths, and escapes (a control
 * character is counted as `\u00XX`, its longest form; a lone surrogate as `\uXXXX`).
 */
export function jsonStringBytes(s: string): number {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20) n += 6;
    else if (c === 0x22 || c === 0x5c) n += 2;
    else if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length && (s.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      n += 4;
      i++;
    } else if (c >= 0xd800 && c <= 0xdfff) n += 6;
    else n += 3;
  }
  return n;
}

/**
 * At least about the JSON bytes of a row's sample: the names, numbers as their text (`null` for a
 * non-finite one), booleans as `false`, and robot text as JSON writes it (a fault list as its
 * encoded text plus two quotes an item).
 */
export function rowBytes(row: readonly string[]): number {
  let n = NAMES_BYTES;
  for (let i = 0; i < HISTORY_FIELDS.length; i++) {
    const t = row[i] ?? '';
    const kind = KIND[i];
    n += kind === 'number' ? Math.max(t.length, 4) : kind === 'boolean' ? 5 : jsonStringBytes(t);
    // A list's items each have two quotes in JSON (its text has one comma between them).
    if (kind === 'strings') n += 2 * (Number.parseInt(t, 10) || 0);
  }
  return n;
}

/**
 * The page's samples from the query's rows, within `budgetBytes`. A page ends between timestamps (the
 * keyset is `tsMs`), so a timestamp whose samples do not all fit is left for the next page; only when
 * the page would otherwise be empty (`first`), the samples that fit are kept and the rest of that
 * timestamp is skipped, as past SAMPLE_PAGE_ROWS.
 */
export function parseSampleRows(rows: Rows, budgetBytes = Number.POSITIVE_INFINITY, first = true): SamplePage {
  const samples: HistorySample[] = [];
  let left = 0;
  let bytes = 0;
  let groupTs: string | undefined;
  let groupStart = 0;
  let groupBytes = 0;
  for (const row of rows) {
    const size = rowBytes(row);
    if (row[0] !== groupTs) {
      groupTs = row[0];
      groupStart = samples.length;
      groupBytes = bytes;
    }
    if (bytes + size > budgetBytes && (samples.length > 0 || !first)) {
      if (groupStart > 0 || !first) {
        samples.length = groupStart;
        bytes = groupBytes;
      }
      return { samples, more: true, bytes, full: true };
    }
    samples.push(parseSample(row));
    bytes += size;
    left = Number(row[HISTORY_FIELDS.length]);
  }
  // Every row carries the count of samples after the previous page: more follow when the page took fewer.
  return { samples, more: left > samples.length, bytes, full: false };
}
