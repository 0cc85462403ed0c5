/**
 * IANA time zones through Intl (no tz database of our own): wall-clock fields of an instant, and the
 * instant of a wall-clock time, with explicit rules for the two daylight-saving edge cases.
 *
 * DST rules (the same as Temporal's `disambiguation: 'compatible'`, and what Vixie cron does):
 * - Gap (spring forward, e.g. 02:30 on 2026-03-08 in America/New_York does not exist): the wall time
 *   is read with the offset in force before the gap, so it lands the gap's length later (03:30 EDT).
 * - Overlap (fall back, e.g. 01:30 on 2026-11-01 in America/New_York happens twice): the earlier
 *   instant is used (01:30 EDT); the repeated hour's wall times do not fire a second time.
 */

/** Wall-clock fields (month 1-12, weekday 0 = Sunday). */
export interface WallTime {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
// Bounded: the zone names are validated against Intl's own list, so at most ~600 formatters exist.
const KNOWN_ZONES = new Set<string>(Intl.supportedValuesOf('timeZone'));
KNOWN_ZONES.add('UTC');

/** True for an IANA zone name this runtime knows (`UTC` included). */
export function isValidTimeZone(tz: string): boolean {
  if (KNOWN_ZONES.has(tz)) return true;
  try {
    // Aliases (e.g. "US/Eastern", "Etc/GMT+5") are accepted by Intl but not listed.
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    // Intl's RangeError for an unknown zone: the caller answers 400 naming the field.
    return false;
  }
}

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** Offset of `tz` from UTC at instant `utcMs`, in ms (east positive), minute precision. */
export function offsetAt(tz: string, utcMs: number): number {
  const w = fields(tz, utcMs);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  const floored = Math.floor(utcMs / 1000) * 1000;
  return asUtc - floored;
}

function fields(tz: string, utcMs: number): Omit<WallTime, 'weekday'> & { second: number } {
  const out = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const p of formatter(tz).formatToParts(utcMs)) {
    switch (p.type) {
      case 'year': out.year = Number(p.value); break;
      case 'month': out.month = Number(p.value); break;
      case 'day': out.day = Number(p.value); break;
      case 'hour': out.hour = Number(p.value); break;
      case 'minute': out.minute = Number(p.value); break;
      case 'second': out.second = Number(p.value); break;
      default: break;
    }
  }
  return out;
}

/** Wall-clock fields of instant `utcMs` in `tz`. */
export function wallTimeOf(tz: string, utcMs: number): WallTime {
  const f = fields(tz, utcMs);
  return { year: f.year, month: f.month, day: f.day, hour: f.hour, minute: f.minute, weekday: weekdayOf(f.year, f.month, f.day) };
}

/** Day of the week of a calendar date (0 = Sunday). */
export function weekdayOf(year: number, month: number, day: number): number {
  return new Date(Date.UTC(year, month - 1, day)).getUTCDay();
}

const DAY_MS = 86_400_000;

/**
 * The instant of a wall-clock time in `tz`, by the gap/overlap rules in the header. Assumes at most
 * one offset change within a day either side, which holds for every real zone.
 */
export function instantOf(tz: string, year: number, month: number, day: number, hour: number, minute: number): number {
  const naive = Date.UTC(year, month - 1, day, hour, minute);
  const before = offsetAt(tz, naive - DAY_MS);
  const after = offsetAt(tz, naive + DAY_MS);
  if (before === after) {
    // Common case: no transition nearby; still verify (zones with two changes in two days are rare).
    const t = naive - before;
    if (offsetAt(tz, t) === before) return t;
  }
  const valid: number[] = [];
  for (const o of before === after ? [before] : [before, after]) {
    const t = naive - o;
    if (offsetAt(tz, t) === o) valid.push(t);
  }
  if (valid.length > 0) return Math.min(...valid); // overlap: the earlier instant
  return naive - before; // gap: the pre-transition offset pushes it past the gap
}
