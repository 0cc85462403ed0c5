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
import type { Database } from 'lmdb';
import { EVENT_KEYS } from '../events/index.js';
import { KEY_END } from '../store/keys.js';
import type { Store } from '../store/lmdb.js';
import type { EventRecord } from '../events/record.js';
import type { FireRecord } from './scheduling/records.js';
import type { RunRecord } from './runs/records.js';
import { isFinished, removeRunSync, RUN_TIME_INDEX } from './runs/runs.js';
import { FIRE_KEYS } from './scheduling/scheduler.js';

const DAY = 24 * 3600 * 1000;
const HIGH = KEY_END;

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

type Verdict = 'remove' | 'keep' | 'stop';

interface Walk<V> {
  db: Database<V, string>;
  /** Key space walked: keys starting with `root`. */
  root: string;
  /** Group prefix of a key (ends with '/'), or null for a malformed key. */
  groupOf(key: string): string | null;
  /** Exclusive upper bound of the candidates inside a group. */
  endOf(group: string): string;
  judge(key: string, value: V): Verdict;
}

interface Budget {
  scan: number;
  remove: number;
}

/** Walks groups from `cursor`, collecting removable keys within the budget; returns the next cursor. */
function walk<V>(w: Walk<V>, cursor: string, budget: Budget, out: string[]): string {
  let at = cursor === '' ? w.root : cursor;
  while (budget.scan > 0 && budget.remove > 0) {
    let first: string | undefined;
    for (const k of w.db.getKeys({ start: at, end: `${w.root}${HIGH}`, limit: 1 })) first = k;
    budget.scan--;
    if (first === undefined) return ''; // end of the key space: next run starts over
    const group = w.groupOf(first);
    if (group === null) {
      at = `${first}\u0000`;
      continue;
    }
    let resume: string | null = null;
    for (const { key, value } of w.db.getRange({ start: first, end: w.endOf(group) })) {
      if (budget.scan <= 0 || budget.remove <= 0) {
        resume = key;
        break;
      }
      budget.scan--;
      const v = w.judge(key, value);
      if (v === 'stop') break;
      if (v === 'remove') {
        out.push(key);
        budget.remove--;
      }
    }
    if (resume !== null) return resume;
    at = `${group}${HIGH}`;
  }
  return at;
}

const SETTLED = new Set<FireRecord['phase']>(['deployed', 'failed', 'cancelled']);

/**
 * One bounded sweep at `nowMs`: removes old settled fires, finished runs with their index keys, and
 * old events, within `opts.batch` removals and `opts.scanBudget` key reads. Advances `cursor`.
 */
export async function sweepMissionData(
  store: Store,
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
  cursor.fires = walk<FireRecord>({
    db: store.fires,
    root: '',
    groupOf: FIRE_KEYS.groupOf,
    // dueAt <= endedAt, so every candidate is due before the cutoff.
    endOf: (g) => FIRE_KEYS.dueBefore(g, fireCut),
    judge: (_k, f) => (fireSettled(f) ? 'remove' : 'keep'),
  }, cursor.fires, budget, fires);

  const runKeys: string[] = [];
  cursor.runs = walk<true>({
    db: store.index,
    root: RUN_TIME_INDEX.root,
    groupOf: RUN_TIME_INDEX.groupOf,
    endOf: (g) => RUN_TIME_INDEX.before(g, runCut),
    judge: (k) => (runOld(store.runs.get(RUN_TIME_INDEX.runIdOf(k))) ? 'remove' : 'keep'),
  }, cursor.runs, budget, runKeys);

  const events: string[] = [];
  cursor.events = walk<EventRecord>({
    db: store.events,
    root: EVENT_KEYS.root,
    groupOf: EVENT_KEYS.groupOf,
    endOf: EVENT_KEYS.groupEnd,
    // seq order is append order, so the first recent event ends the old head of the timeline.
    judge: (_k, e) => (e.atMs < eventCut ? 'remove' : 'stop'),
  }, cursor.events, budget, events);

  if (fires.length + runKeys.length + events.length === 0) return { fires: 0, runs: 0, events: 0 };
  return store.root.transaction(() => {
    const res: SweepResult = { fires: 0, runs: 0, events: 0 };
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
    for (const k of events) {
      const e = store.events.get(k);
      if (e && e.atMs < eventCut) {
        store.events.removeSync(k);
        res.events++;
      }
    }
    return res;
  });
}

export interface MissionRetentionOptions extends Partial<MissionRetention> {
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
export function startMissionRetention(store: Store, opts: MissionRetentionOptions = {}): () => void {
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
      const r = await sweepMissionData(store, cursor, now(), policy);
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
