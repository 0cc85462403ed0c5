// The durable scheduler on a real LMDB store with an injected clock: due fires are committed once,
// recurrences follow their zone's wall clock across DST, and a restart applies the misfire policy
// without ever firing an occurrence twice.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ScheduleRecord, ScheduleSpec } from '../../src/missions/scheduling/records.js';
import { newScheduleRecord, putNewSchedule } from '../../src/missions/scheduling/schedules.js';
import { ManualClock } from '../../src/missions/clock.js';
import { Scheduler, type FireOutcome } from '../../src/missions/scheduling/scheduler.js';
import { openStore, type Store } from '../../src/store/lmdb.js';

const dirs: string[] = [];
const stores: Store[] = [];
afterEach(async () => {
  for (const s of stores.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function store(dir?: string): { dir: string; store: Store } {
  const d = dir ?? mkdtempSync(join(tmpdir(), 'fleetgw-sched-'));
  if (!dir) dirs.push(d);
  const s = openStore(d);
  stores.push(s);
  return { dir: d, store: s };
}

const Z = (iso: string): number => Date.parse(iso);

async function addSchedule(st: Store, spec: ScheduleSpec | null, nowMs: number, extra: Partial<ScheduleRecord> = {}): Promise<ScheduleRecord> {
  const s = {
    ...newScheduleRecord({
      orgId: 'o', fleetId: 'f', target: { type: 'mission', missionId: 'm' }, robotIds: [], schedule: spec,
      deploymentDeadlineMs: 60_000, retryLimit: 0, retryIntervalSecs: 30, createdBy: { apiKeyId: 'k' },
    }, nowMs),
    ...extra,
  };
  await st.root.transaction(() => putNewSchedule(st, s));
  return s;
}

/** A scheduler whose handler records outcomes and (like the dispatcher) closes each fire at once. */
function scheduler(st: Store, clock: ManualClock, closeFires = true): { sched: Scheduler; outcomes: FireOutcome[] } {
  const outcomes: FireOutcome[] = [];
  const sched = new Scheduler({
    store: st,
    clock,
    onOutcome: (o) => {
      outcomes.push(o);
      if (closeFires && o.kind === 'fired') {
        const s = st.schedules.get(o.schedule.scheduleId)!;
        st.schedules.putSync(s.scheduleId, { ...s, openFireKey: null, status: 'deployed' });
      }
    },
  });
  return { sched, outcomes };
}

/** Advances the clock in steps, letting each commit land between steps. */
async function advance(clock: ManualClock, totalMs: number, stepMs: number): Promise<void> {
  // A fixed pause was not enough on a loaded host (a commit could land after it): each round waits
  // for every open store's pending writes to commit, then lets their callbacks run.
  const settle = async (): Promise<void> => {
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
      await Promise.all(stores.map((s) => s.root.committed));
    }
  };
  for (let t = 0; t < totalMs; t += stepMs) {
    clock.advance(Math.min(stepMs, totalMs - t));
    await settle();
  }
  // Timers re-armed by a commit that landed after the last step run now.
  for (let i = 0; i < 3; i++) {
    clock.advance(0);
    await settle();
  }
}

const fired = (o: FireOutcome[]): string[] => o.filter((x) => x.kind === 'fired').map((x) => new Date((x).fire.dueAtMs).toISOString());

describe('scheduler', () => {
  it('commits each interval occurrence once, with the schedule advanced in the same transaction', async () => {
    const { store: st } = store();
    const clock = new ManualClock(Z('2026-06-01T00:00:00Z'));
    const s = await addSchedule(st, { owner: 't', timezone: 'UTC', startTimeMs: clock.now() + 10_000, kind: { interval: { everySeconds: 10 } } }, clock.now());
    const { sched, outcomes } = scheduler(st, clock);
    await sched.start();
    await advance(clock, 35_000, 1000);
    expect(fired(outcomes)).toEqual(['2026-06-01T00:00:10.000Z', '2026-06-01T00:00:20.000Z', '2026-06-01T00:00:30.000Z']);
    const rec = st.schedules.get(s.scheduleId)!;
    expect(rec.nextFireAtMs).toBe(Z('2026-06-01T00:00:40Z'));
    expect(rec.firesTotal).toBe(3);
    expect([...st.fires.getKeys({ start: `${s.scheduleId}/`, end: `${s.scheduleId}/\uffff` })]).toHaveLength(3);
    sched.stop();
  });

  it('fires a daily cron at the zone\'s wall time across the 2026 spring-forward gap', async () => {
    const { store: st } = store();
    const clock = new ManualClock(Z('2026-03-06T12:00:00Z'));
    await addSchedule(st, { owner: 't', timezone: 'America/New_York', startTimeMs: clock.now(), kind: { cron: { expr: '30 2 * * *' } } }, clock.now());
    const { sched, outcomes } = scheduler(st, clock);
    await sched.start();
    await advance(clock, 4 * 86_400_000, 15 * 60_000);
    expect(fired(outcomes)).toEqual(['2026-03-07T07:30:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z', '2026-03-10T06:30:00.000Z']);
    sched.stop();
  });

  it('skips an occurrence while the previous fire is still open (bounded work)', async () => {
    const { store: st } = store();
    const clock = new ManualClock(Z('2026-06-01T00:00:00Z'));
    const s = await addSchedule(st, { owner: 't', timezone: 'UTC', startTimeMs: clock.now() + 1000, kind: { interval: { everySeconds: 1 } } }, clock.now());
    const { sched, outcomes } = scheduler(st, clock, false);
    await sched.start();
    await advance(clock, 3500, 500);
    expect(outcomes.map((o) => o.kind)).toEqual(['fired', 'skipped', 'skipped']);
    // Skips are not written at once (nothing ran); the live view has them, the next write stores them.
    const stored = st.schedules.get(s.scheduleId)!;
    expect(stored).toMatchObject({ skippedFires: 0, firesTotal: 1, status: 'pending' });
    expect(sched.liveView(stored)).toMatchObject({ skippedFires: 2, firesTotal: 3, nextFireAtMs: Z('2026-06-01T00:00:04Z') });
    st.schedules.putSync(s.scheduleId, { ...stored, openFireKey: null });
    await advance(clock, 1000, 500);
    expect(outcomes.map((o) => o.kind)).toEqual(['fired', 'skipped', 'skipped', 'fired']);
    expect(st.schedules.get(s.scheduleId)).toMatchObject({ skippedFires: 2, firesTotal: 4, nextFireAtMs: Z('2026-06-01T00:00:05Z') });
    sched.stop();
  });

  it('after a restart: missed occurrences coalesce into one late fire, nothing fires twice, a stale once fails as missed', async () => {
    const { dir, store: st } = store();
    const clock = new ManualClock(Z('2026-06-01T00:00:00Z'));
    const every = await addSchedule(st, { owner: 't', timezone: 'UTC', startTimeMs: clock.now() + 10_000, kind: { interval: { everySeconds: 10 } } }, clock.now());
    const staleOnce = await addSchedule(st, { owner: 't', timezone: 'UTC', startTimeMs: clock.now() + 20_000, kind: 'once' }, clock.now(), { deploymentDeadlineMs: 5000 });
    const { sched, outcomes } = scheduler(st, clock);
    await sched.start();
    await advance(clock, 15_000, 1000);
    expect(fired(outcomes)).toEqual(['2026-06-01T00:00:10.000Z']);
    // "Crash": the process stops; 47 s pass while it is down.
    sched.stop();
    await st.close();
    stores.splice(stores.indexOf(st), 1);
    clock.advance(47_000); // now 00:01:02
    const { store: st2 } = store(dir);
    const second = scheduler(st2, clock);
    await second.sched.start();
    await advance(clock, 100, 50);
    // 20, 30, 40, 50, 60 were missed: 60 fires (late, inside its 60 s window), the four others are skipped.
    expect(fired(second.outcomes)).toEqual(['2026-06-01T00:01:00.000Z']);
    const rec = st2.schedules.get(every.scheduleId)!;
    expect(rec).toMatchObject({ skippedFires: 4, firesTotal: 6, nextFireAtMs: Z('2026-06-01T00:01:10Z') });
    expect([...st2.fires.getKeys({ start: `${every.scheduleId}/`, end: `${every.scheduleId}/\uffff` })]).toHaveLength(2);
    // The once schedule fell due at 00:00:20 with a 5 s window: failed, not run.
    expect(st2.schedules.get(staleOnce.scheduleId)).toMatchObject({ status: 'failed', lastFailureReason: 'missed', nextFireAtMs: null });
    expect(second.outcomes.find((o) => o.kind === 'missed_failed')).toBeDefined();
    // A third start right away finds nothing due: no occurrence is fired again.
    second.sched.stop();
    const third = scheduler(st2, clock);
    await third.sched.start();
    await advance(clock, 100, 50);
    expect(third.outcomes).toEqual([]);
    third.sched.stop();
  });
});
