/**
 * Mission run records in LMDB (`runs` db) and the index keys that find them (all in `index`):
 *   runsByFleet/<fleetId>/<startedAt 16 hex>/<runId>        every run, by start time
 *   runsByRobot/<robotId>/<startedAt 16 hex>/<runId>        every run of a robot
 *   runsBySchedule/<scheduleId>/<startedAt 16 hex>/<runId>  every run of a schedule
 *   activeRunsByTemplate/<missionId>/<runId>                while the run is not finished (the
 *                                                           catalog refuses to delete the template)
 *   activeRuns/<fleetId>/<runId>                            while the run is not finished
 * Finished runs are the mission history; src/missions/retention.ts removes them (and these keys) 90
 * days after they ended.
 */
import { firstIndexed, keyPrefix, lastSegment, prefixRange, sortableNumber } from '../../store/keys.js';
import { keysetOver, type Keyset } from '../../store/keyset.js';
import type { Store } from '../../store/lmdb.js';
import type { RunRecord, RunState } from './records.js';
import { ACTIVE_BY_TEMPLATE, ACTIVE_RUNS, activeKeys, RUNS_BY_FLEET, RUNS_BY_ROBOT, RUNS_BY_SCHEDULE, timeKeys } from './keys.js';

export const FINISHED_STATES: ReadonlySet<RunState> = new Set<RunState>(['completed', 'failed', 'cancelled', 'aborted']);

/** True once the run ended (completed, failed, cancelled, aborted). */
export function isFinished(state: RunState): boolean {
  return FINISHED_STATES.has(state);
}

/** Inside a write transaction: stores a new run and all its index keys. */
export function putNewRun(store: Store, r: RunRecord): void {
  store.runs.putSync(r.runId, r);
  for (const k of timeKeys(r)) store.index.putSync(k, true);
  if (!isFinished(r.state)) for (const k of activeKeys(r)) store.index.putSync(k, true);
}

/** Writes an updated run (async; in call order); drops the active keys when it just finished. */
export function saveRun(store: Store, r: RunRecord, wasFinished: boolean): Promise<boolean> {
  if (isFinished(r.state) && !wasFinished) {
    return store.root.transaction(() => {
      store.runs.putSync(r.runId, r);
      for (const k of activeKeys(r)) store.index.removeSync(k);
      return true;
    });
  }
  return store.runs.put(r.runId, r);
}

/** Every run not finished, across fleets (start-up). */
export function loadActiveRuns(store: Store): RunRecord[] {
  const out: RunRecord[] = [];
  for (const key of store.index.getKeys(prefixRange(`${ACTIVE_RUNS}/`))) {
    const r = store.runs.get(lastSegment(key));
    if (r) out.push(r);
  }
  return out;
}

/** An unfinished run of the template, if any (the catalog refuses to delete a template in use). */
export function activeRunOfTemplate(store: Store, missionId: string): string | undefined {
  return firstIndexed(store, `${ACTIVE_BY_TEMPLATE}/${missionId}`);
}

export interface RunQuery {
  fleetId: string;
  /** Only runs started at or after this time. */
  sinceMs: number;
  /** Only runs started before this time (default: no bound). */
  untilMs?: number;
  scheduleId?: string;
  robotId?: string;
  /** Skips the runs a list's filters refuse (e.g. unfinished ones for the mission history). */
  where?: (r: RunRecord) => boolean;
}

/**
 * The runs matching the query, newest first (by start time, then run id), as a keyset: every run of
 * the window is reachable page by page. Read through the narrowest index the query allows; runs of
 * another fleet (an id of another fleet's schedule or robot) are never returned.
 */
export function runsOf(store: Store, q: RunQuery): Keyset<RunRecord> {
  const prefix = q.scheduleId !== undefined
    ? keyPrefix(RUNS_BY_SCHEDULE, q.scheduleId)
    : q.robotId !== undefined ? keyPrefix(RUNS_BY_ROBOT, q.robotId) : keyPrefix(RUNS_BY_FLEET, q.fleetId);
  const to = q.untilMs !== undefined ? { to: sortableNumber(Math.max(0, q.untilMs)) } : {};
  return keysetOver(store.index, { prefix, from: sortableNumber(q.sinceMs), ...to, reverse: true }, (key) => {
    const r = store.runs.get(lastSegment(key));
    if (!r || r.fleetId !== q.fleetId) return undefined;
    if (q.robotId !== undefined && r.robotId !== q.robotId) return undefined;
    if (q.where !== undefined && !q.where(r)) return undefined;
    return r;
  });
}

/**
 * Inside a write transaction: removes a run record with every index key filed for it (retention).
 * Also the active keys, should a run be removed before it was seen finished.
 */
export function removeRunSync(store: Store, r: RunRecord): void {
  for (const k of timeKeys(r)) store.index.removeSync(k);
  for (const k of activeKeys(r)) store.index.removeSync(k);
  store.runs.removeSync(r.runId);
}

/**
 * Where retention walks finished runs: the fleet time index, grouped by fleet, start time ordered
 * inside a group. `groupOf` gives a key's group prefix, `runIdOf` the run it names, `before` the
 * exclusive upper bound of a group's runs started before `ms`.
 */
export const RUN_TIME_INDEX = {
  root: `${RUNS_BY_FLEET}/`,
  groupOf: (key: string): string | null => {
    const a = key.indexOf('/');
    const b = a < 0 ? -1 : key.indexOf('/', a + 1);
    return b < 0 ? null : key.slice(0, b + 1);
  },
  runIdOf: (key: string): string => lastSegment(key),
  before: (group: string, ms: number): string => {
    return `${group}${sortableNumber(ms)}`;
  },
} as const;

/** The most recent run of `missionId` on `robotId`, or undefined. */
export function latestRunOf(store: Store, robotId: string, missionId: string): RunRecord | undefined {
  const { start, end } = prefixRange(keyPrefix(RUNS_BY_ROBOT, robotId));
  let scanned = 0;
  for (const key of store.index.getKeys({ start: end, end: start, reverse: true })) {
    const r = store.runs.get(lastSegment(key));
    if (r && r.missionId === missionId) return r;
    // Bounded look-back: control-mission without run_id concerns recent work.
    if (++scanned >= 1000) break;
  }
  return undefined;
}
