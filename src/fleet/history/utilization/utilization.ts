/**
 * Utilization of a fleet's robots over a window (docs/utilization.md): time online, running missions,
 * idle, charging, paused/stopped and offline; missions completed and failed; distance travelled.
 * Mission counts and the run intervals come from the run records (LMDB), everything else from the
 * telemetry store through one bound-parameter query (query.ts), so chdb and a ClickHouse server give
 * the same figures.
 */
import { runsOf } from '../../../missions/runs/runs.js';
import { fleetRobotIds } from '../../../store/identity.js';
import type { Store } from '../../../store/lmdb.js';
import type { BoundQuery, Rows } from '../../../telemetry/store/index.js';
import { parseUtilizationRows, utilizationQuery, type RunInterval } from './query.js';
import { MAX_RUNS, RUN_LOOKBACK_MS, type UtilizationWindow } from './window.js';

/** The figures of one robot, or of the fleet (their sums). Durations in ms add up to the window per robot. */
export interface UtilizationFigures {
  onlineMs: number;
  runningMissionMs: number;
  idleMs: number;
  chargingMs: number;
  pausedMs: number;
  offlineMs: number;
  missionsCompleted: number;
  missionsFailed: number;
  distanceM: number;
}

export interface UtilizationResult {
  window: UtilizationWindow;
  fleet: UtilizationFigures & { robots: number };
  robots: (UtilizationFigures & { robotId: string })[];
  /** True when the fleet had more runs around the window than MAX_RUNS: mission figures cover the newest MAX_RUNS. */
  runsTruncated: boolean;
}

/** Runs a bound query on the telemetry store. */
export type TelemetrySelect = (q: BoundQuery) => Promise<Rows>;

const zero = (): UtilizationFigures => ({
  onlineMs: 0, runningMissionMs: 0, idleMs: 0, chargingMs: 0, pausedMs: 0, offlineMs: 0, missionsCompleted: 0, missionsFailed: 0, distanceM: 0,
});

/** Distances to the decimetre: enough for fleet figures, and equal whatever order the engine summed in. */
function roundM(m: number): number {
  return Math.round(m * 10) / 10;
}

/**
 * Computes utilization for the fleet's robots (or the one robot given, which must be of the fleet),
 * `nowMs` ending runs still open.
 */
export async function utilization(store: Store, select: TelemetrySelect, fleetId: string, robotId: string | null, w: UtilizationWindow, nowMs: number): Promise<UtilizationResult> {
  const robotIds = robotId !== null ? [robotId] : fleetRobotIds(store, fleetId);
  const wanted = new Set(robotIds);
  const intervals: RunInterval[] = [];
  const counts = new Map<string, { completed: number; failed: number }>();
  const runs = runsOf(store, { fleetId, sinceMs: w.fromMs - RUN_LOOKBACK_MS, ...(robotId !== null ? { robotId } : {}) });
  let after: string | null = null;
  let examined = 0;
  let truncated = false;
  for (;;) {
    const page = runs.page(after, 1000);
    for (const r of page.items) {
      if (!wanted.has(r.robotId)) continue;
      const end = r.endedAtMs ?? nowMs;
      if (r.startedAtMs < w.toMs && end > w.fromMs) intervals.push({ robotId: r.robotId, startMs: r.startedAtMs, endMs: end });
      if (r.endedAtMs !== null && r.endedAtMs >= w.fromMs && r.endedAtMs < w.toMs && (r.state === 'completed' || r.state === 'failed')) {
        const c = counts.get(r.robotId) ?? { completed: 0, failed: 0 };
        if (r.state === 'completed') c.completed++;
        else c.failed++;
        counts.set(r.robotId, c);
      }
    }
    examined += page.items.length;
    if (!page.more || page.last === null) break;
    if (examined >= MAX_RUNS) {
      truncated = true;
      break;
    }
    after = page.last;
  }
  const rows = parseUtilizationRows(await select(utilizationQuery(fleetId, robotId, w, intervals)));
  const windowMs = w.toMs - w.fromMs;
  const fleet = { ...zero(), robots: robotIds.length };
  const perRobot = robotIds.map((id) => {
    const t = rows.get(id);
    const c = counts.get(id);
    const online = Math.min(windowMs, t?.onlineMs ?? 0);
    const running = t?.runningMs ?? 0;
    const paused = t?.haltedMs ?? 0;
    const charging = t?.chargingMs ?? 0;
    const f: UtilizationFigures = {
      onlineMs: online,
      runningMissionMs: running,
      idleMs: Math.max(0, online - running - paused - charging),
      chargingMs: charging,
      pausedMs: paused,
      offlineMs: windowMs - online,
      missionsCompleted: c?.completed ?? 0,
      missionsFailed: c?.failed ?? 0,
      distanceM: roundM(t?.distanceM ?? 0),
    };
    for (const k of Object.keys(f) as (keyof UtilizationFigures)[]) fleet[k] += f[k];
    return { robotId: id, ...f };
  });
  fleet.distanceM = roundM(fleet.distanceM);
  return { window: w, fleet, robots: perRobot, runsTruncated: truncated };
}
