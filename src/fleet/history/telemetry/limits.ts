/**
 * The history API's bounds (docs/telemetry-history.md, Limits). Every request reads one robot over
 * at most {@link MAX_RANGE_MS}; what it returns is bounded by a page size, a point count or an export
 * sample count, each a 400 naming the limit when a request would pass it.
 */

/** Longest range one request reads (the store scans at most a day of one robot: 864,000 rows at 10 Hz). */
export const MAX_RANGE_MS = 24 * 3600 * 1000;
/** The range when `from_ms` is absent: the last ten minutes before `to_ms`. */
export const DEFAULT_RANGE_MS = 10 * 60 * 1000;
/** How far past the gateway's clock `to_ms` may reach (client clock skew); the range ends at the gateway's now. */
export const FUTURE_SLACK_MS = 60_000;
/** Raw samples per page. */
export const SAMPLE_PAGE = { default: 1000, max: 10_000 } as const;
/**
 * Most rows one page returns whatever shares its last timestamp: a robot whose clock stood still can
 * send any number of samples with one timestamp; past this many the rest of that timestamp is skipped.
 */
export const SAMPLE_PAGE_ROWS = 2 * SAMPLE_PAGE.max;
/**
 * About how many bytes of JSON one page's samples may take (estimated from the values' text and the
 * field names): a page stops before the sample that would pass it, with a cursor to continue. With
 * the ingest's string bounds (docs/robot-link.md) a sample is at most about 5 KB, so a page of
 * worst-case samples holds some 800; ordinary samples (about 700 bytes) fill a 10,000 page first.
 */
export const SAMPLE_PAGE_BYTES = 4 * 1024 * 1024;
/** Samples read from the store per query while a page or an export is built (bounds what one read holds). */
export const SAMPLE_READ_CHUNK = 2000;
/** Points of a series or a path. */
export const MAX_POINTS = { default: 500, max: 5000 } as const;
/** Samples in one MCAP export (an hour at 10 Hz); more in the range is a 400: ask for a shorter range. */
export const MAX_EXPORT_SAMPLES = 36_000;
/**
 * Bytes of messages one MCAP export writes (its indexes and summary come on top: about 50 bytes a
 * message). An hour of ordinary samples (about 1 KB of file each) fits; worst-case samples (every
 * string at its bound, about 5.6 KB) reach it after some 8,500: the export then ends early and says so
 * in its `fleetgw.export.result` metadata (`complete` false, `next_from_ms` to continue from).
 */
export const MAX_EXPORT_BYTES = 48 * 1024 * 1024;

/** A robot's history range, `fromMs` inclusive, `toMs` exclusive. */
export interface HistoryRange {
  fromMs: number;
  toMs: number;
}

/** Why a range is refused: the parameter at fault and what it must be. */
export interface RangeError {
  param: 'from_ms' | 'to_ms';
  detail: string;
}

/**
 * The effective range of a request, or why it is refused. `to_ms` defaults to now and `from_ms` to
 * ten minutes before `to_ms`; a `to_ms` past now (within the slack) is cut to now.
 */
export function historyRange(fromMs: number | undefined, toMs: number | undefined, nowMs: number): HistoryRange | RangeError {
  if (toMs !== undefined && toMs > nowMs + FUTURE_SLACK_MS) return { param: 'to_ms', detail: 'must not be in the future' };
  const to = Math.min(toMs ?? nowMs, nowMs);
  const from = fromMs ?? to - DEFAULT_RANGE_MS;
  if (from >= to) return { param: 'from_ms', detail: 'must be before to_ms (and before now)' };
  if (to - from > MAX_RANGE_MS) return { param: 'from_ms', detail: `must be at most ${MAX_RANGE_MS / 3_600_000} hours before to_ms (the history range limit)` };
  return { fromMs: from, toMs: to };
}

/** Bucket lengths a series or path uses: 1, 2 and 5 times a power of ten milliseconds, so points fall on round times. */
export function bucketMsFor(range: HistoryRange, maxPoints: number): number {
  const min = Math.max(1, Math.ceil((range.toMs - range.fromMs) / maxPoints));
  for (let p = 1; ; p *= 10) {
    for (const m of [1, 2, 5]) if (m * p >= min) return m * p;
  }
}
