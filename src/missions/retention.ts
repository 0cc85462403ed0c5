/**
 * Bounded retention of the mission data in LMDB: settled fires, finished runs (with their index keys)
 * and events. Without it `fires`, `runs` and `events` grow for ever (1,000 one-second schedules write
 * about 86 M fires a day).
 *
 * Policy (defaults in DEFAULT_MISSION_RETENTION, docs/missions.md "Retention"):
 *   fires   settled (deployed, failed, cancelled) and ended more than 7 days ago; the schedule's open
 *           fire (`openFireKey`) and any fire still being worked on are never removed
 *   runs    finished (completed, failed, cancelled, aborted) and ended more than 90 days ago (the
 *           mission history window), with `runsByFleet/…`, `runsByRobot/…`, `runsBySchedule/…`
 *   events  `atMs` more than 30 days ago
 *
 * None of the three has a global time index, but each key space is grouped (`<scheduleId>/<dueAt>`,
 * `runsByFleet/<fleet>/<startedAt>/<run>`, `<fleet>/<correlation>/<seq>`) and time-ordered inside a
 * group, so the sweep visits group by group and reads only the old head of each group: the range up
 * to the cutoff for fires and runs, and for events up to the first recent event (seq order is append
 * order). The cost is one seek per group plus the old records; each run reads at most `scanBudget`
 * keys and removes at most `batch` records, then resumes from an in-memory cursor on the next run
 * (after a restart it starts over from the beginning, which only costs re-reading kept heads).
 */
import type { Logger } from 'pino';
import type { EventLog } from '../events/index.js';
import { walkGroups, type Budget } from '../store/group-walk.js';
import type { Store } from '../store/lmdb.js';
import type { FireRecord } from './scheduling/records.js';
import type { RunRecord } from './runs/records.js';
import { isFinished, removeRunSync, RUN_TIME_INDEX } from './runs/runs.js';
import { FIRE_KEYS } from './scheduling/scheduler.js';

const DAY = 24 * 3600 * 1000;

export interface MissionRetention {
  /** Settled fires ended longer ago than this are removed (default 7 days). */
  fireRetentionMs: number;
  /** Finished runs ended longer ago than this are removed (default 90 days). */
  runRetentionMs: number;
  /** Events older than this are removed (default 30 days). */
  eventRetentionMs: number;
  /** Records removed per run, all kinds together (default 10,000): one short write transaction. */
  batch: number;
  /** Keys read per run, all kinds together (default 50,000): bounds the time a run holds the loop. */
  scanBudget: number;
}

export const DEFAULT_MISSION_RETENTION: MissionRetention = {
  fireRetentionMs: 7 * DAY,
  runRetentionMs: 90 * DAY,
  eventRetentionMs: 30 * DAY,
  batch: 10_000,
  scanBudget: 50_000,
};

/** Where each kind's walk resumes on the next run ('' = from the start). */
export interface SweepCursor {
  fires: string;
  runs: string;
  events: string;
}

export interface SweepResult {
  fires: number;
  runs: number;
  events: number;
}

const SETTLED = new Set<FireRecord['phase']>(['deployed', 'failed', 'cancelled']);

/**
 * One bounded sweep at `nowMs`: removes old settled fires, finished runs with their index keys, and
 * old events, within `opts.batch` removals and `opts.scanBudget` key reads. Advances `cursor`.
 */
export async function sweepMissionData(
  store: Store,
  events: EventLog,
  cursor: SweepCursor,
  nowMs: number,
  opts: MissionRetention = DEFAULT_MISSION_RETENTION,
): Promise<SweepResult> {
  const budget: Budget = { scan: opts.scanBudget, remove: opts.batch };
  const fireCut = nowMs - opts.fireRetentionMs;
  const runCut = nowMs - opts.runRetentionMs;
  const eventCut = nowMs - opts.eventRetentionMs;

  const fireSettled = (f: FireRecord | undefined): f is FireRecord => {
    if (!f || !SETTLED.has(f.phase) || f.endedAtMs === null || f.endedAtMs >= fireCut) return false;
    return store.schedules.get(f.scheduleId)?.openFireKey !== f.fireKey;
  };
  const runOld = (r: RunRecord | undefined): r is RunRecord =>
    r !== undefined && isFinished(r.state) && r.endedAtMs !== null && r.endedAtMs < runCut;

  const fires: string[] = [];
  cursor.fires = walkGroups<FireRecord>({
    db: store.fires,
    root: '',
    groupOf: FIRE_KEYS.groupOf,
    // dueAt <= endedAt, so every candidate is due before the cutoff.
    endOf: (g) => FIRE_KEYS.dueBefore(g, fireCut),
    judge: (_k, f) => (fireSettled(f) ? 'remove' : 'keep'),
  }, cursor.fires, budget, fires);

  const runKeys: string[] = [];
  cursor.runs = walkGroups<true>({
    db: store.index,
    root: RUN_TIME_INDEX.root,
    groupOf: RUN_TIME_INDEX.groupOf,
    endOf: (g) => RUN_TIME_INDEX.before(g, runCut),
    judge: (k) => (runOld(store.runs.get(RUN_TIME_INDEX.runIdOf(k))) ? 'remove' : 'keep'),
  }, cursor.runs, budget, runKeys);

  const res: SweepResult = { fires: 0, runs: 0, events: 0 };
  if (fires.length + runKeys.length > 0) {
    await store.root.transaction(() => {
      // Re-checked inside the transaction: a record may have changed since it was read.
      for (const k of fires) {
        if (fireSettled(store.fires.get(k))) {
          store.fires.removeSync(k);
          res.fires++;
        }
      }
      for (const ik of runKeys) {
        const r = store.runs.get(RUN_TIME_INDEX.runIdOf(ik));
        if (!runOld(r)) continue;
        // The walked key too: it is one of the run's keys unless the record moved fleets meanwhile.
        store.index.removeSync(ik);
        removeRunSync(store, r);
        res.runs++;
      }
    });
  }
  // The event log removes its own old events, within what this sweep's budget has left.
  res.events = await events.sweep(cursor, eventCut, budget);
  return res;
}

export interface MissionRetentionOptions extends Partial<MissionRetention> {
  /** The store's event log: it removes its own old events. */
  events: EventLog;
  /** Delay of the first run after start (default 60 s: start-up work first). */
  firstDelayMs?: number;
  /** Period of the following runs (default 1 h). */
  intervalMs?: number;
  now?: () => number;
  log?: Logger;
}

/**
 * Starts the periodic sweep: first run `firstDelayMs` after start, then every `intervalMs`; each run
 * is one bounded sweep (a backlog is worked off over the following runs). Timers are unref'd; call
 * the returned function to stop.
 */
export function startMissionRetention(store: Store, opts: MissionRetentionOptions): () => void {
  const policy: MissionRetention = {
    fireRetentionMs: opts.fireRetentionMs ?? DEFAULT_MISSION_RETENTION.fireRetentionMs,
    runRetentionMs: opts.runRetentionMs ?? DEFAULT_MISSION_RETENTION.runRetentionMs,
    eventRetentionMs: opts.eventRetentionMs ?? DEFAULT_MISSION_RETENTION.eventRetentionMs,
    batch: opts.batch ?? DEFAULT_MISSION_RETENTION.batch,
    scanBudget: opts.scanBudget ?? DEFAULT_MISSION_RETENTION.scanBudget,
  };
  const now = opts.now ?? Date.now;
  const cursor: SweepCursor = { fires: '', runs: '', events: '' };
  let stopped = false;
  let running = false;
  let interval: NodeJS.Timeout | undefined;
  const tick = async (): Promise<void> => {
    if (running || stopped) return;
    running = true;
    try {
      const r = await sweepMissionData(store, opts.events, cursor, now(), policy);
      if (r.fires + r.runs + r.events > 0) opts.log?.info({ fires: r.fires, runs: r.runs, events: r.events }, `mission retention: removed ${r.fires} fires, ${r.runs} runs, ${r.events} events`);
    } catch (err) {
      opts.log?.error({ err }, 'mission retention sweep failed; the next sweep tries again');
    } finally {
      running = false;
    }
  };
  const first = setTimeout(() => {
    void tick();
    interval = setInterval(() => void tick(), opts.intervalMs ?? 3600 * 1000);
    interval.unref();
  }, opts.firstDelayMs ?? 60 * 1000);
  first.unref();
  return () => {
    stopped = true;
    clearTimeout(first);
    if (interval) clearInterval(interval);
  };
}
