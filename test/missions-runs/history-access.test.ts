/** `history:read` rules for finished runs (src/missions/runs/history-access.ts), without a store. */
import { describe, expect, it } from 'vitest';
import { activeRunsKeyset, canReadHistory, runVisibleTo } from '../../src/missions/runs/history-access.js';
import type { RunRecord } from '../../src/missions/runs/records.js';

const run = (runId: string, startedAtMs: number, over: Partial<RunRecord> = {}): RunRecord =>
  ({ runId, fleetId: 'f', robotId: `r-${runId}`, missionId: 'm', scheduleId: 's', state: 'running', startedAtMs, endedAtMs: null, ...over }) as RunRecord;

describe('history access', () => {
  it('finished runs only with history:read; active runs for anyone', () => {
    const withH = { permissions: ['fleet:read', 'history:read'] };
    const without = { permissions: ['fleet:read'] };
    expect(canReadHistory(withH)).toBe(true);
    expect(canReadHistory(without)).toBe(false);
    const done = run('a', 1, { state: 'completed' });
    const live = run('b', 2, { state: 'paused' });
    expect(runVisibleTo(withH, done)).toBe(done);
    expect(runVisibleTo(without, done)).toBeUndefined();
    expect(runVisibleTo(without, live)).toBe(live);
    expect(runVisibleTo(without, undefined)).toBeUndefined();
  });

  it('the active-runs keyset: newest first, window and filters, finished and other fleets left out, pages by position', () => {
    const runs = [
      run('a', 100), run('b', 300), run('c', 200), run('d', 250, { state: 'failed' }), run('e', 400, { fleetId: 'g' }),
      run('f', 50), run('g', 350, { scheduleId: 'other' }),
    ];
    const all = activeRunsKeyset(runs, { fleetId: 'f', sinceMs: 100 });
    const p1 = all.page(null, 2);
    expect(p1.items.map((r) => r.runId)).toEqual(['g', 'b']);
    expect(p1.more).toBe(true);
    const p2 = all.page(p1.last, 2);
    expect(p2.items.map((r) => r.runId)).toEqual(['c', 'a']);
    expect(p2.more).toBe(false);
    expect(activeRunsKeyset(runs, { fleetId: 'f', sinceMs: 0, scheduleId: 's' }).page(null, 10).items.map((r) => r.runId)).toEqual(['b', 'c', 'a', 'f']);
    expect(activeRunsKeyset(runs, { fleetId: 'f', sinceMs: 0, robotId: 'r-c' }).page(null, 10).items.map((r) => r.runId)).toEqual(['c']);
  });
});
