// Bounded retention of fires, runs (with index keys) and events on a real temp LMDB, with an injected clock.
import { captureLog } from '../support/capture-log.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EventLog } from '../../src/events/log.js';
import { DEFAULT_MISSION_RETENTION, startMissionRetention, sweepMissionData, type SweepCursor } from '../../src/missions/retention.js';
import type { EventRecord } from '../../src/events/record.js';
import type { FirePhase, FireRecord, ScheduleRecord } from '../../src/missions/scheduling/records.js';
import type { RunRecord, RunState } from '../../src/missions/runs/records.js';
import { putNewRun } from '../../src/missions/runs/runs.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { until } from '../support/until.js';

const DAY = 24 * 3600 * 1000;
const NOW = 1_800_000_000_000;
const hex = (ms: number): string => ms.toString(16).padStart(16, '0');

const open: { store: Store; dir: string }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.store.close();
    rmSync(o.dir, { recursive: true, force: true });
  }
});

function temp(): Store {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-retention-'));
  const store = openStore(dir);
  open.push({ store, dir });
  return store;
}

function schedule(id: string, openFireKey: string | null): ScheduleRecord {
  return {
    scheduleId: id, orgId: 'o1', fleetId: 'f1', target: { type: 'mission', missionId: 'm1' }, robotIds: [],
    schedule: null, status: 'scheduled', lastFailureReason: null, lastFailureDetail: null, deploymentDeadlineMs: null,
    retryLimit: 0, retryIntervalSecs: 0, nextFireAtMs: null, cancelled: false, correlationId: `c-${id}`,
    createdBy: { apiKeyId: 'k' }, createdAtMs: NOW - 200 * DAY, updatedAtMs: NOW - 200 * DAY, openFireKey,
    firesTotal: 0, skippedFires: 0, lastRunId: null,
  };
}

function fire(scheduleId: string, dueAtMs: number, phase: FirePhase, endedAtMs: number | null): FireRecord {
  return {
    fireKey: `${scheduleId}/${hex(dueAtMs)}`, scheduleId, orgId: 'o1', fleetId: 'f1', dueAtMs, firedAtMs: dueAtMs,
    phase, attempt: 0, attemptDeadlineMs: null, retryAtMs: null, robotId: null, runId: null, commandIds: [],
    failureReason: null, failureDetail: null, endedAtMs,
  };
}

function run(runId: string, startedAtMs: number, state: RunState, endedAtMs: number | null, fleetId = 'f1'): RunRecord {
  return {
    runId, orgId: 'o1', fleetId, missionId: 'm1', scheduleId: 's1', robotId: 'r1', state, progressPct: 0, stepIndex: 0,
    remainingDistanceM: null, etaS: null, detail: null, cancelRequested: null, correlationId: 'c-s1', startedAtMs,
    endedAtMs, lastReportAtMs: null, fireKey: null, startCommandId: null, name: runId,
  };
}

function event(fleetId: string, correlationId: string, seq: number, atMs: number): [string, EventRecord] {
  const rec: EventRecord = { eventId: `e${seq}`, fleetId, correlationId, seq, atMs, kind: 'run.progress', subject: { type: 'run', id: 'x' }, data: {} };
  return [`${fleetId}/${correlationId}/${hex(seq)}`, rec];
}

const runIndexKeys = (store: Store, runId: string): string[] =>
  [...store.index.getKeys({ start: 'runs', end: 'runs\uffff' })].filter((k) => k.endsWith(`/${runId}`));

const fresh = (): SweepCursor => ({ fires: '', runs: '', events: '' });

describe('mission data retention', () => {
  it('removes old settled fires, finished runs with their index keys and old events; keeps the rest', async () => {
    const store = temp();
    const old = NOW - 100 * DAY;
    const openOld = fire('s1', old - 1000, 'deployed', old);
    await store.root.transaction(() => {
      store.schedules.putSync('s1', schedule('s1', openOld.fireKey));
      // The schedule's open fire stays even though it looks settled and old.
      store.fires.putSync(openOld.fireKey, openOld);
      for (const [i, phase] of (['deployed', 'failed', 'cancelled'] as const).entries()) {
        const f = fire('s1', old + i, phase, old + i);
        store.fires.putSync(f.fireKey, f);
      }
      const working = fire('s1', old + 10, 'retry_wait', null);
      store.fires.putSync(working.fireKey, working);
      const recentFire = fire('s1', NOW - 6 * DAY, 'deployed', NOW - 6 * DAY);
      store.fires.putSync(recentFire.fireKey, recentFire);
      putNewRun(store, run('old-done', NOW - 120 * DAY, 'completed', NOW - 119 * DAY));
      putNewRun(store, run('old-aborted', NOW - 120 * DAY, 'aborted', NOW - 100 * DAY, 'f2'));
      putNewRun(store, run('old-running', NOW - 120 * DAY, 'running', null));
      // Started before the window but ended inside it: still history.
      putNewRun(store, run('ended-recently', NOW - 95 * DAY, 'failed', NOW - 80 * DAY));
      putNewRun(store, run('recent', NOW - DAY, 'completed', NOW - DAY));
      for (const [k, v] of [event('f1', 'c1', 1, NOW - 40 * DAY), event('f1', 'c1', 2, NOW - 31 * DAY), event('f1', 'c1', 3, NOW - DAY),
        event('f1', 'c2', 4, NOW - 35 * DAY), event('f2', 'c3', 5, NOW - 29 * DAY)]) store.events.putSync(k, v);
    });

    const res = await sweepMissionData(store, new EventLog(store), fresh(), NOW);
    expect(res).toEqual({ fires: 3, runs: 2, events: 3 });

    expect([...store.fires.getKeys()]).toEqual([openOld.fireKey, `s1/${hex(old + 10)}`, `s1/${hex(NOW - 6 * DAY)}`]);
    expect(store.runs.get('old-done')).toBeUndefined();
    expect(store.runs.get('old-aborted')).toBeUndefined();
    expect(runIndexKeys(store, 'old-done')).toEqual([]);
    expect(runIndexKeys(store, 'old-aborted')).toEqual([]);
    for (const id of ['old-running', 'ended-recently', 'recent']) {
      expect(store.runs.get(id)?.runId).toBe(id);
      expect(runIndexKeys(store, id).length).toBeGreaterThanOrEqual(3);
    }
    expect([...store.events.getRange()].map(({ value }) => value.seq)).toEqual([3, 5]);
  });

  it('removes at most `batch` records per run and works a backlog off over later runs', async () => {
    const store = temp();
    const old = NOW - 30 * DAY;
    await store.root.transaction(() => {
      store.schedules.putSync('s1', schedule('s1', null));
      store.schedules.putSync('s2', schedule('s2', null));
      for (let i = 0; i < 50; i++) {
        for (const s of ['s1', 's2']) {
          const f = fire(s, old + i, 'deployed', old + i);
          store.fires.putSync(f.fireKey, f);
        }
      }
    });
    const policy = { ...DEFAULT_MISSION_RETENTION, batch: 30 };
    const cursor = fresh();
    const counts: number[] = [];
    for (let i = 0; i < 5; i++) counts.push((await sweepMissionData(store, new EventLog(store), cursor, NOW, policy)).fires);
    expect(counts).toEqual([30, 30, 30, 10, 0]);
    expect(store.fires.getKeysCount()).toBe(0);
  });

  it('bounds the keys read per run with scanBudget (kept records are not re-read for ever)', async () => {
    const store = temp();
    await store.root.transaction(() => {
      store.schedules.putSync('s1', schedule('s1', null));
      for (let i = 0; i < 40; i++) {
        const f = fire('s1', NOW - 30 * DAY + i, i < 20 ? 'retry_wait' : 'failed', i < 20 ? null : NOW - 20 * DAY);
        store.fires.putSync(f.fireKey, f);
      }
    });
    const cursor = fresh();
    const policy = { ...DEFAULT_MISSION_RETENTION, scanBudget: 15 };
    const first = await sweepMissionData(store, new EventLog(store), cursor, NOW, policy);
    expect(first.fires).toBe(0); // budget spent on the 20 open fires at the head
    let total = 0;
    for (let i = 0; i < 6; i++) total += (await sweepMissionData(store, new EventLog(store), cursor, NOW, policy)).fires;
    expect(total).toBe(20);
    expect(store.fires.getKeysCount()).toBe(20);
  });

  it('the periodic sweeper runs after its first delay with the injected clock and stops', async () => {
    const store = temp();
    const f = fire('s1', NOW - 10 * DAY, 'failed', NOW - 10 * DAY);
    await store.fires.put(f.fireKey, f);
    const lines: string[] = [];
    const stop = startMissionRetention(store, { events: new EventLog(store), firstDelayMs: 20, intervalMs: 60_000, now: () => NOW, log: captureLog(lines) });
    try {
      expect(store.fires.get(f.fireKey)).toBeDefined();
      await until(() => lines.join('\n').includes('removed 1 fires'), 10_000, 'the first sweep');
      expect(store.fires.get(f.fireKey)).toBeUndefined();
    } finally {
      stop();
    }
  });
});
