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
import type { Store } from '../../store/lmdb.js';
import type { RunRecord, RunState } from './records.js';

export const FINISHED_STATES: ReadonlySet<RunState> = new Set<RunState>(['completed', 'failed', 'cancelled', 'aborted']);

/** True once the run ended (completed, failed, cancelled, aborted). */
export function isFinished(state: RunState): boolean {
  return FINISHED_STATES.has(state);
}

const hex = (ms: number): string => ms.toString(16).padStart(16, '0');

function timeKeys(r: RunRecord): string[] {
  const t = hex(r.startedAtMs);
  const keys = [`runsByFleet/${r.fleetId}/${t}/${r.runId}`, `runsByRobot/${r.robotId}/${t}/${r.runId}`];
  if (r.scheduleId !== null) keys.push(`runsBySchedule/${r.scheduleId}/${t}/${r.runId}`);
  return keys;
}

function activeKeys(r: RunRecord): string[] {
  return [`activeRunsByTemplate/${r.missionId}/${r.runId}`, `activeRuns/${r.fleetId}/${r.runId}`];
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
  for (const key of store.index.getKeys({ start: 'activeRuns/', end: 'activeRuns/\uffff' })) {
    const runId = key.slice(key.lastIndexOf('/') + 1);
    const r = store.runs.get(runId);
    if (r) out.push(r);
  }
  return out;
}

export interface RunQuery {
  fleetId: string;
  /** Only runs started at or after this time. */
  sinceMs: number;
  scheduleId?: string;
  robotId?: string;
  limit: number;
}

/** Runs matching the query, newest first. */
export function listRuns(store: Store, q: RunQuery): RunRecord[] {
  const prefix = q.scheduleId !== undefined ? `runsBySchedule/${q.scheduleId}/` : q.robotId !== undefined ? `runsByRobot/${q.robotId}/` : `runsByFleet/${q.fleetId}/`;
  const out: RunRecord[] = [];
  const range = store.index.getKeys({ start: `${prefix}\uffff`, end: `${prefix}${hex(q.sinceMs)}`, reverse: true });
  for (const key of range) {
    const runId = key.slice(key.lastIndexOf('/') + 1);
    const r = store.runs.get(runId);
    if (!r || r.fleetId !== q.fleetId) continue;
    if (q.robotId !== undefined && r.robotId !== q.robotId) continue;
    out.push(r);
    if (out.length >= q.limit) break;
  }
  return out;
}

/** The most recent run of `missionId` on `robotId`, or undefined. */
export function latestRunOf(store: Store, robotId: string, missionId: string): RunRecord | undefined {
  const prefix = `runsByRobot/${robotId}/`;
  let scanned = 0;
  for (const key of store.index.getKeys({ start: `${prefix}\uffff`, end: prefix, reverse: true })) {
    const r = store.runs.get(key.slice(key.lastIndexOf('/') + 1));
    if (r && r.missionId === missionId) return r;
    // Bounded look-back: control-mission without run_id concerns recent work.
    if (++scanned >= 1000) break;
  }
  return undefined;
}
