/**
 * The telemetry part of utilization: one bound-parameter query (src/telemetry/store/bound-query.ts), the
 * same SQL on chdb, a modern ClickHouse server and Debian's 18.16 (no window functions, no
 * DateTime64 arithmetic, nothing newer than 18.16 has).
 *
 * Per robot of the fleet, the window is cut into 5-second slots; a slot with at least one sample is
 * online and takes the state of its samples: halted (estop, or mode `paused` / `stopped`), else
 * running a mission (the slot overlaps one of the robot's runs, passed in as arrays), else charging,
 * else idle. Distance is each online slot's mean speed times its length.
 */
import type { BoundQuery } from '../../../telemetry/store/index.js';
import { SLOT_MS, type UtilizationWindow } from './window.js';

/** Per robot: online, running, halted and charging milliseconds, and metres travelled. */
export const UTILIZATION_SQL = `
SELECT rid,
  sum(len_ms) AS online_ms,
  sum(if(halted = 0 AND in_run = 1, len_ms, 0)) AS running_ms,
  sum(if(halted = 1, len_ms, 0)) AS halted_ms,
  sum(if(halted = 0 AND in_run = 0 AND chg = 1, len_ms, 0)) AS charging_ms,
  sum(v * len_ms) / 1000 AS distance_m
FROM
(
  SELECT rid, chg, halted, v,
    least(toInt64(${SLOT_MS}), {to_ms:Int64} - ({from_ms:Int64} + b * ${SLOT_MS})) AS len_ms,
    arrayExists((r, s, e) -> r = rid AND s < {from_ms:Int64} + (b + 1) * ${SLOT_MS} AND e > {from_ms:Int64} + b * ${SLOT_MS},
      {run_robot:Array(String)}, {run_start:Array(Int64)}, {run_end:Array(Int64)}) AS in_run
  FROM
  (
    SELECT toString(robot_id) AS rid,
      intDiv(ts_ms - {from_ms:Int64}, ${SLOT_MS}) AS b,
      max(charging) AS chg,
      max(if(estop = 1 OR mode = 'paused' OR mode = 'stopped', 1, 0)) AS halted,
      avg(abs(speed_mps)) AS v
    FROM telemetry_samples
    WHERE fleet_id = {fleet_id:String}
      AND ({robot_id:String} = '' OR robot_id = {robot_id:String})
      AND ts >= toDateTime(intDiv({from_ms:Int64}, 1000))
      AND ts <= toDateTime(intDiv({to_ms:Int64}, 1000) + 1)
      AND ts_ms >= {from_ms:Int64} AND ts_ms < {to_ms:Int64}
    GROUP BY rid, b
  )
)
GROUP BY rid
ORDER BY rid`;

/** A robot's run, clipped by nothing: the query intersects it with each slot. */
export interface RunInterval {
  robotId: string;
  startMs: number;
  endMs: number;
}

/** The query for a fleet (or one robot of it) over the window, with the runs that overlap it. */
export function utilizationQuery(fleetId: string, robotId: string | null, w: UtilizationWindow, runs: readonly RunInterval[]): BoundQuery {
  return {
    sql: UTILIZATION_SQL,
    params: {
      fleet_id: { type: 'String', value: fleetId },
      robot_id: { type: 'String', value: robotId ?? '' },
      from_ms: { type: 'Int64', value: w.fromMs },
      to_ms: { type: 'Int64', value: w.toMs },
      run_robot: { type: 'Array(String)', value: runs.map((r) => r.robotId) },
      run_start: { type: 'Array(Int64)', value: runs.map((r) => r.startMs) },
      run_end: { type: 'Array(Int64)', value: runs.map((r) => r.endMs) },
    },
  };
}

/** One robot's row of the query. */
export interface TelemetryFigures {
  onlineMs: number;
  runningMs: number;
  haltedMs: number;
  chargingMs: number;
  distanceM: number;
}

/** The query's rows by robot id. */
export function parseUtilizationRows(rows: readonly string[][]): Map<string, TelemetryFigures> {
  const out = new Map<string, TelemetryFigures>();
  for (const [robotId, online, running, halted, charging, distance] of rows) {
    if (robotId === undefined) continue;
    out.set(robotId, {
      onlineMs: Number(online),
      runningMs: Number(running),
      haltedMs: Number(halted),
      chargingMs: Number(charging),
      distanceM: Number(distance),
    });
  }
  return out;
}
