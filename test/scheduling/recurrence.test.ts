// Recurrence rules, with the daylight-saving cases on real 2026 transitions (Intl's tz database).
import { describe, expect, it } from 'vitest';
import type { ScheduleSpec } from '../../src/missions/scheduling/records.js';
import { CronSyntaxError, parseCron } from '../../src/missions/scheduling/cron.js';
import { MAX_TIMER_MS, systemClock } from '../../src/missions/clock.js';
import { MAX_TIME_MS, nextFireAfter, validateSchedule } from '../../src/missions/scheduling/recurrence.js';
import { instantOf, isValidTimeZone, offsetAt, wallTimeOf } from '../../src/missions/scheduling/tz.js';

const Z = (iso: string): number => Date.parse(iso);
const cron = (expr: string, timezone: string, start = '2026-01-01T00:00:00Z'): ScheduleSpec => ({ owner: 't', timezone, startTimeMs: Z(start), kind: { cron: { expr } } });

/** The first `n` fires after `from`. */
function fires(spec: ScheduleSpec, from: string, n: number): string[] {
  const out: string[] = [];
  let t = Z(from);
  for (let i = 0; i < n; i++) {
    const next = nextFireAfter(spec, t);
    if (next === null) break;
    out.push(new Date(next).toISOString());
    t = next;
  }
  return out;
}

describe('time zones', () => {
  it('reads offsets and wall times of real 2026 transitions', () => {
    expect(offsetAt('America/New_York', Z('2026-03-08T06:59:00Z'))).toBe(-5 * 3600_000);
    expect(offsetAt('America/New_York', Z('2026-03-08T07:00:00Z'))).toBe(-4 * 3600_000);
    expect(offsetAt('Europe/Berlin', Z('2026-10-25T01:00:00Z'))).toBe(3600_000);
    expect(wallTimeOf('Australia/Sydney', Z('2026-04-04T16:30:00Z'))).toMatchObject({ day: 5, hour: 2, minute: 30 });
    expect(isValidTimeZone('Europe/Berlin')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus')).toBe(false);
  });

  it('gap: a missing wall time lands the gap length later; overlap: the earlier instant', () => {
    expect(new Date(instantOf('America/New_York', 2026, 3, 8, 2, 30)).toISOString()).toBe('2026-03-08T07:30:00.000Z'); // 03:30 EDT
    expect(new Date(instantOf('America/New_York', 2026, 11, 1, 1, 30)).toISOString()).toBe('2026-11-01T05:30:00.000Z'); // 01:30 EDT
    expect(new Date(instantOf('Europe/Berlin', 2026, 3, 29, 2, 15)).toISOString()).toBe('2026-03-29T01:15:00.000Z'); // 03:15 CEST
    expect(new Date(instantOf('Europe/Berlin', 2026, 10, 25, 2, 30)).toISOString()).toBe('2026-10-25T00:30:00.000Z'); // 02:30 CEST
  });
});

describe('cron in a time zone', () => {
  it('a daily job inside the spring-forward gap runs once that day, an hour later in wall time', () => {
    expect(fires(cron('30 2 * * *', 'America/New_York'), '2026-03-07T00:00:00Z', 3)).toEqual([
      '2026-03-07T07:30:00.000Z', // 02:30 EST
      '2026-03-08T07:30:00.000Z', // gap: 03:30 EDT
      '2026-03-09T06:30:00.000Z', // 02:30 EDT
    ]);
  });

  it('a daily job inside the fall-back overlap runs once, at the first occurrence', () => {
    expect(fires(cron('30 1 * * *', 'America/New_York'), '2026-10-31T00:00:00Z', 3)).toEqual([
      '2026-10-31T05:30:00.000Z',
      '2026-11-01T05:30:00.000Z', // 01:30 EDT; 01:30 EST (06:30Z) does not fire
      '2026-11-02T06:30:00.000Z',
    ]);
  });

  it('an hourly job collapses the missing hour and skips the repeated one', () => {
    expect(fires(cron('0 * * * *', 'America/New_York'), '2026-03-08T05:30:00Z', 3)).toEqual([
      '2026-03-08T06:00:00.000Z', // 01:00 EST
      '2026-03-08T07:00:00.000Z', // 02:00 (gap) and 03:00 EDT are the same instant: one fire
      '2026-03-08T08:00:00.000Z',
    ]);
    expect(fires(cron('0 * * * *', 'America/New_York'), '2026-11-01T04:30:00Z', 3)).toEqual([
      '2026-11-01T05:00:00.000Z', // 01:00 EDT
      '2026-11-01T07:00:00.000Z', // 02:00 EST; 01:00 EST is a repeat of a fired wall time
      '2026-11-01T08:00:00.000Z',
    ]);
  });

  it('weekday mornings keep their wall time across the European change (and in the southern hemisphere)', () => {
    expect(fires(cron('0 9 * * MON-FRI', 'Europe/Berlin'), '2026-03-27T00:00:00Z', 2)).toEqual([
      '2026-03-27T08:00:00.000Z', // Fri 09:00 CET
      '2026-03-30T07:00:00.000Z', // Mon 09:00 CEST
    ]);
    expect(fires(cron('0 2 * * *', 'Australia/Sydney'), '2026-10-02T00:00:00Z', 3)).toEqual([
      '2026-10-02T16:00:00.000Z', // Sat 3 Oct 02:00 AEST
      '2026-10-03T16:00:00.000Z', // Sun 4 Oct 02:00 is in the gap: 03:00 AEDT
      '2026-10-04T15:00:00.000Z', // Mon 02:00 AEDT
    ]);
  });

  it('does not fire before startTimeMs, and day-of-month OR day-of-week when both are set', () => {
    expect(fires(cron('0 12 * * *', 'UTC', '2026-05-10T13:00:00Z'), '2026-01-01T00:00:00Z', 1)).toEqual(['2026-05-11T12:00:00.000Z']);
    // The 13th or any Friday: Fri 6 Feb, Fri 13 Feb (both), Fri 20 Feb, ... and Fri 13 Mar.
    expect(fires(cron('0 0 13 * FRI', 'UTC'), '2026-02-01T00:00:00Z', 4)).toEqual([
      '2026-02-06T00:00:00.000Z',
      '2026-02-13T00:00:00.000Z',
      '2026-02-20T00:00:00.000Z',
      '2026-02-27T00:00:00.000Z',
    ]);
    expect(fires(cron('0 0 29 2 *', 'UTC'), '2026-01-01T00:00:00Z', 1)).toEqual(['2028-02-29T00:00:00.000Z']);
  });

  it('parses lists, ranges, steps, names and macros, and names the bad field', () => {
    const e = parseCron('0,30 8-17/3 * JAN,jul 7');
    expect(e.minutes).toEqual([0, 30]);
    expect(e.hours).toEqual([8, 11, 14, 17]);
    expect([...e.months]).toEqual([1, 7]);
    expect([...e.daysOfWeek]).toEqual([0]);
    expect(parseCron('@hourly').minutes).toEqual([0]);
    expect(() => parseCron('60 * * * *')).toThrow(/minute/);
    expect(() => parseCron('* * * *')).toThrow(CronSyntaxError);
    expect(() => parseCron('0 0 31 2 *')).toThrow(/never/);
    expect(() => parseCron('*/0 * * * *')).toThrow(/step/);
  });
});

describe('interval and once', () => {
  it('intervals count elapsed time from startTimeMs, unaffected by DST', () => {
    const spec: ScheduleSpec = { owner: 't', timezone: 'America/New_York', startTimeMs: Z('2026-03-08T05:00:00Z'), kind: { interval: { everySeconds: 3600 } } };
    expect(fires(spec, '2026-03-08T00:00:00Z', 3)).toEqual(['2026-03-08T05:00:00.000Z', '2026-03-08T06:00:00.000Z', '2026-03-08T07:00:00.000Z']);
    expect(nextFireAfter(spec, Z('2026-03-08T06:30:00Z'))).toBe(Z('2026-03-08T07:00:00Z'));
  });

  it('once fires at startTimeMs and then never', () => {
    const spec: ScheduleSpec = { owner: 't', timezone: 'UTC', startTimeMs: 1000, kind: 'once' };
    expect(nextFireAfter(spec, -1)).toBe(1000);
    expect(nextFireAfter(spec, 1000)).toBeNull();
  });

  it('validates zone, interval and cron', () => {
    const base = { owner: 't', startTimeMs: 0 };
    expect(validateSchedule({ ...base, timezone: 'Nowhere/City', kind: 'once' })).toMatch(/timezone/);
    expect(validateSchedule({ ...base, timezone: 'UTC', kind: { interval: { everySeconds: 0 } } })).toMatch(/everySeconds/);
    expect(validateSchedule({ ...base, timezone: 'UTC', kind: { cron: { expr: 'x' } } })).toMatch(/cron\.expr/);
    expect(validateSchedule({ ...base, timezone: 'Europe/Paris', kind: { cron: { expr: '*/5 * * * *' } } })).toBeNull();
  });
});

describe('time bounds (issue 8 item 9)', () => {
  it('refuses a start beyond 9999-12-31T23:59:59.999Z and schedules nothing after it', () => {
    const at = (startTimeMs: number, kind: ScheduleSpec['kind']): ScheduleSpec => ({ owner: 't', timezone: 'UTC', startTimeMs, kind });
    expect(validateSchedule(at(MAX_TIME_MS, 'once'))).toBeNull();
    expect(validateSchedule(at(MAX_TIME_MS + 1, 'once'))).toContain('startTimeMs');
    expect(validateSchedule(at(Number.MAX_SAFE_INTEGER, { cron: { expr: '0 3 * * *' } }))).toContain('startTimeMs');
    expect(nextFireAfter(at(MAX_TIME_MS, 'once'), 0)).toBe(MAX_TIME_MS);
    // The last occurrences before the bound, then none.
    const daily = at(Z('9999-12-30T00:00:00Z'), { interval: { everySeconds: 86_400 } });
    expect(fires(daily, '9999-12-29T00:00:00Z', 5)).toEqual(['9999-12-30T00:00:00.000Z', '9999-12-31T00:00:00.000Z']);
    expect(fires(cron('0 12 * * *', 'Pacific/Kiritimati', '9999-12-30T00:00:00Z'), '9999-12-30T00:00:00Z', 5)).toEqual(['9999-12-30T22:00:00.000Z', '9999-12-31T22:00:00.000Z']);
  });

  it('a system timer asked for longer than Node can wait fires at the bound, not after 1 ms', async () => {
    let fired = false;
    const cancel = systemClock.setTimer(() => {
      fired = true;
    }, 2 ** 40);
    // A 20 ms timer set after it: timers fire in due order, so a clamp to 1 ms would have fired first.
    await new Promise<void>((resolve) => systemClock.setTimer(resolve, 20));
    cancel();
    expect(fired).toBe(false);
    expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
  });
});
