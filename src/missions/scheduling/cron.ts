/**
 * Cron expressions: the classic five fields `minute hour day-of-month month day-of-week`, each a
 * `*`, a number, a range `a-b`, a step `* /n` or `a-b/n` (written without the space), or a comma list
 * of those; month and weekday also take names (JAN..DEC, SUN..SAT) and weekday 7 means Sunday.
 * Macros: @yearly (@annually), @monthly, @weekly, @daily (@midnight), @hourly.
 *
 * Day rule (Vixie cron): when both day-of-month and day-of-week are restricted (neither is `*`), a day
 * matches when EITHER matches; otherwise both must.
 *
 * Seconds fields are not supported: the finest recurrence a cron schedule has is one minute
 * (`{interval:{everySeconds}}` covers sub-minute work).
 */

export interface CronExpr {
  readonly source: string;
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  readonly daysOfMonth: ReadonlySet<number>;
  readonly months: ReadonlySet<number>;
  readonly daysOfWeek: ReadonlySet<number>;
  readonly domRestricted: boolean;
  readonly dowRestricted: boolean;
}

export class CronSyntaxError extends Error {}

const MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

const MONTH_NAMES = ['JAN', 'FEB', 'MAR', 'APR', 'MAY', 'JUN', 'JUL', 'AUG', 'SEP', 'OCT', 'NOV', 'DEC'];
const DAY_NAMES = ['SUN', 'MON', 'TUE', 'WED', 'THU', 'FRI', 'SAT'];

interface FieldSpec {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
  /** Value of names[0] (1 for months, 0 for weekdays). */
  nameBase?: number;
}

const FIELDS: readonly FieldSpec[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day-of-month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTH_NAMES, nameBase: 1 },
  { name: 'day-of-week', min: 0, max: 7, names: DAY_NAMES, nameBase: 0 },
];

/**
 * Parses a cron expression.
 * @throws CronSyntaxError naming the bad field
 */
export function parseCron(source: string): CronExpr {
  const trimmed = source.trim();
  const expanded = MACROS[trimmed.toLowerCase()] ?? trimmed;
  const parts = expanded.split(/\s+/);
  if (parts.length !== 5) throw new CronSyntaxError(`expected 5 fields (minute hour day-of-month month day-of-week), got ${parts.length}`);
  const sets = parts.map((p, i) => parseField(p, FIELDS[i]!));
  const dow = new Set([...sets[4]!].map((d) => (d === 7 ? 0 : d)));
  const expr: CronExpr = {
    source: trimmed,
    minutes: [...sets[0]!].sort((a, b) => a - b),
    hours: [...sets[1]!].sort((a, b) => a - b),
    daysOfMonth: sets[2]!,
    months: sets[3]!,
    daysOfWeek: dow,
    domRestricted: parts[2] !== '*',
    dowRestricted: parts[4] !== '*',
  };
  if (!canEverMatch(expr)) throw new CronSyntaxError('day-of-month and month never coincide (e.g. 31 in a 30-day month)');
  return expr;
}

function parseField(text: string, spec: FieldSpec): Set<number> {
  const out = new Set<number>();
  for (const item of text.split(',')) {
    if (item === '') throw new CronSyntaxError(`${spec.name}: empty list item`);
    const [rangePart, stepPart, extra] = item.split('/');
    if (extra !== undefined || rangePart === undefined) throw new CronSyntaxError(`${spec.name}: bad step in '${item}'`);
    let step = 1;
    if (stepPart !== undefined) {
      if (!/^\d+$/.test(stepPart) || Number(stepPart) < 1) throw new CronSyntaxError(`${spec.name}: step must be a positive integer in '${item}'`);
      step = Number(stepPart);
    }
    let lo: number;
    let hi: number;
    if (rangePart === '*') {
      lo = spec.min;
      hi = spec.name === 'day-of-week' ? 6 : spec.max;
    } else {
      const bounds = rangePart.split('-');
      if (bounds.length > 2) throw new CronSyntaxError(`${spec.name}: bad range '${rangePart}'`);
      lo = value(bounds[0]!, spec);
      hi = bounds.length === 2 ? value(bounds[1]!, spec) : stepPart !== undefined ? spec.max : lo;
      if (lo > hi) throw new CronSyntaxError(`${spec.name}: range '${rangePart}' runs backwards`);
    }
    for (let v = lo; v <= hi; v += step) out.add(v);
  }
  return out;
}

function value(token: string, spec: FieldSpec): number {
  const upper = token.toUpperCase();
  const named = spec.names?.indexOf(upper) ?? -1;
  const v = named >= 0 ? named + (spec.nameBase ?? 0) : /^\d+$/.test(token) ? Number(token) : NaN;
  if (!Number.isInteger(v) || v < spec.min || v > spec.max) {
    throw new CronSyntaxError(`${spec.name}: '${token}' is outside ${spec.min}-${spec.max}`);
  }
  return v;
}

const MAX_DAYS = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function canEverMatch(e: CronExpr): boolean {
  if (e.dowRestricted && e.domRestricted) return true; // either may match
  if (!e.domRestricted) return true;
  for (const m of e.months) for (const d of e.daysOfMonth) if (d <= MAX_DAYS[m - 1]!) return true;
  return false;
}

/** True when the calendar day matches the expression's month and day rules. */
export function dayMatches(e: CronExpr, month: number, day: number, weekday: number): boolean {
  if (!e.months.has(month)) return false;
  const dom = e.daysOfMonth.has(day);
  const dow = e.daysOfWeek.has(weekday);
  if (e.domRestricted && e.dowRestricted) return dom || dow;
  return dom && dow;
}
