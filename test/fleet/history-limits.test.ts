/** The history API's range defaults and refusals, and the bucket lengths it picks (src/fleet/history/telemetry/limits.ts). */
import { describe, expect, it } from 'vitest';
import { bucketMsFor, historyRange, MAX_POINTS } from '../../src/fleet/history/telemetry/limits.js';

const NOW = 1_800_000_000_000;

describe('history range', () => {
  it('defaults to the last ten minutes before now', () => {
    expect(historyRange(undefined, undefined, NOW)).toEqual({ fromMs: NOW - 600_000, toMs: NOW });
    expect(historyRange(undefined, NOW - 1000, NOW)).toEqual({ fromMs: NOW - 601_000, toMs: NOW - 1000 });
  });

  it('cuts a to_ms slightly ahead to now and refuses one further ahead', () => {
    expect(historyRange(NOW - 5000, NOW + 30_000, NOW)).toEqual({ fromMs: NOW - 5000, toMs: NOW });
    expect(historyRange(NOW - 5000, NOW + 61_000, NOW)).toEqual({ param: 'to_ms', detail: 'must not be in the future' });
  });

  it('refuses an empty, inverted or too long range, naming the limit', () => {
    expect(historyRange(NOW, NOW, NOW)).toMatchObject({ param: 'from_ms' });
    expect(historyRange(NOW - 1000, NOW - 2000, NOW)).toMatchObject({ param: 'from_ms' });
    expect(historyRange(NOW - 24 * 3_600_000, NOW, NOW)).toEqual({ fromMs: NOW - 24 * 3_600_000, toMs: NOW });
    expect(historyRange(NOW - 24 * 3_600_000 - 1, NOW, NOW)).toEqual({ param: 'from_ms', detail: 'must be at most 24 hours before to_ms (the history range limit)' });
  });
});

describe('bucket length', () => {
  const r = (ms: number) => ({ fromMs: 0, toMs: ms });
  it('is the smallest 1/2/5 x 10^k ms that gives at most max_points buckets', () => {
    expect(bucketMsFor(r(600_000), 500)).toBe(2000); // 1,200 rounded up
    expect(bucketMsFor(r(60_000), 60)).toBe(1000);
    expect(bucketMsFor(r(10_000), 500)).toBe(20);
    expect(bucketMsFor(r(100), 5000)).toBe(1);
    expect(bucketMsFor(r(86_400_000), 500)).toBe(200_000);
    for (const ms of [1, 999, 123_457, 86_400_000]) {
      for (const p of [1, 7, 500, MAX_POINTS.max]) expect(Math.ceil(ms / bucketMsFor(r(ms), p))).toBeLessThanOrEqual(p);
    }
  });
});
