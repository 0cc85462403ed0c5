/**
 * When a schedule fires: `once` at `startTimeMs`; `{interval:{everySeconds}}` at startTimeMs + k *
 * everySeconds (elapsed time, so daylight-saving changes do not move it); `{cron:{expr}}` at every
 * wall-clock minute matching the expression in the schedule's IANA zone, from startTimeMs on (gap and
 * overlap rules: tz.ts).
 */
import type { ScheduleSpec } from './records.js';
import { CronSyntaxError, dayMatches, parseCron, type CronExpr } from './cron.js';
import { instantOf, isValidTimeZone, wallTimeOf, weekdayOf } from './tz.js';

/** Smallest interval accepted (one second; finer recurrences would be timer noise, not work). */
export const MIN_INTERVAL_S = 1;
/** Largest interval accepted (one year). */
export const MAX_INTERVAL_S = 366 * 86_400;
/**
 * Latest instant a schedule may start at or fire at: 9999-12-31T23:59:59.999Z, the last instant an
 * ISO 8601 date (and so every answer and event that shows one) can name. Requests beyond it are
 * refused (400) before anything is written; a recurrence has no occurrence after it.
 */
export const MAX_TIME_MS = 253_402_300_799_999;
/** How far ahead a cron search looks before declaring the expression exhausted (covers 29 Feb). */
const CRON_HORIZON_DAYS = 8 * 366;

const cronCache = new Map<string, CronExpr>();
const CRON_CACHE_MAX = 4096;

function cron(expr: string): CronExpr {
  let c = cronCache.get(expr);
  if (!c) {
    c = parseCron(expr);
    // Bounded cache: dropped whole when full (parsing again is cheap; the bound is what matters).
    if (cronCache.size >= CRON_CACHE_MAX) cronCache.clear();
    cronCache.set(expr, c);
  }
  return c;
}

/** Why a schedule object is unusable, or null when it is fine. */
export function validateSchedule(spec: ScheduleSpec): string | null {
  if (!isValidTimeZone(spec.timezone)) return `timezone '${spec.timezone}' is not an IANA time zone name`;
  if (!Number.isSafeInteger(spec.startTimeMs) || spec.startTimeMs < 0 || spec.startTimeMs > MAX_TIME_MS) {
    return `startTimeMs must be an integer from 0 to ${MAX_TIME_MS} (9999-12-31T23:59:59.999Z)`;
  }
  const k = spec.kind;
  if (k === 'once') return null;
  if ('interval' in k) {
    const s = k.interval.everySeconds;
    if (!Number.isInteger(s) || s < MIN_INTERVAL_S || s > MAX_INTERVAL_S) return `interval.everySeconds must be an integer from ${MIN_INTERVAL_S} to ${MAX_INTERVAL_S}`;
    return null;
  }
  try {
    cron(k.cron.expr);
    return null;
  } catch (err) {
    if (err instanceof CronSyntaxError) return `cron.expr: ${err.message}`;
    throw err;
  }
}

/**
 * The first fire strictly after `afterMs` (and not before startTimeMs), or null when none is left
 * (none comes after {@link MAX_TIME_MS}). Pass `afterMs = -1` (or anything below startTimeMs) for
 * the first fire.
 */
export function nextFireAfter(spec: ScheduleSpec, afterMs: number): number | null {
  if (afterMs >= MAX_TIME_MS || spec.startTimeMs > MAX_TIME_MS) return null;
  const t = occurrenceAfter(spec, afterMs);
  return t !== null && t <= MAX_TIME_MS ? t : null;
}

function occurrenceAfter(spec: ScheduleSpec, afterMs: number): number | null {
  const k = spec.kind;
  const start = spec.startTimeMs;
  if (k === 'once') return start > afterMs ? start : null;
  if ('interval' in k) {
    if (start > afterMs) return start;
    const every = k.interval.everySeconds * 1000;
    return start + (Math.floor((afterMs - start) / every) + 1) * every;
  }
  return nextCron(cron(k.cron.expr), spec.timezone, Math.max(afterMs + 1, start));
}

/** The first instant >= lowerMs whose wall-clock minute in `tz` matches `e`. */
function nextCron(e: CronExpr, tz: string, lowerMs: number): number | null {
  // Cron works in whole minutes: round the bound up to the next minute boundary.
  const lb = Math.ceil(lowerMs / 60_000) * 60_000;
  const w = wallTimeOf(tz, lb);
  // Start a day early: a gap pushes wall times of the previous day forward past midnight only in
  // zones that change at 24:00, and looking one day back costs little.
  let date = Date.UTC(w.year, w.month - 1, w.day) - 86_400_000;
  for (let i = 0; i < CRON_HORIZON_DAYS; i++, date += 86_400_000) {
    const d = new Date(date);
    const year = d.getUTCFullYear();
    const month = d.getUTCMonth() + 1;
    const day = d.getUTCDate();
    if (!dayMatches(e, month, day, weekdayOf(year, month, day))) continue;
    const best = earliestOnDay(e, tz, year, month, day, lb);
    if (best !== null) return best;
  }
  return null;
}

/**
 * Earliest matching instant >= lb on one local day. Wall times map to instants monotonically except
 * inside a DST gap (shifted forward), so a plain first-match could pick a later instant; on a day
 * with an offset change every candidate is checked.
 */
function earliestOnDay(e: CronExpr, tz: string, year: number, month: number, day: number, lb: number): number | null {
  const first = instantOf(tz, year, month, day, 0, 0);
  const last = instantOf(tz, year, month, day, 23, 59);
  const steady = last - first === (23 * 60 + 59) * 60_000;
  if (steady && last < lb) return null;
  let best: number | null = null;
  for (const h of e.hours) {
    for (const m of e.minutes) {
      const t = steady ? first + (h * 60 + m) * 60_000 : instantOf(tz, year, month, day, h, m);
      if (t < lb) continue;
      if (steady) return t;
      if (best === null || t < best) best = t;
    }
  }
  return best;
}
