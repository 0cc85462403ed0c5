/**
 * One robot's path over a range as GeoJSON coordinates (docs/telemetry-history.md): WGS84
 * `[longitude, latitude]`, the position the robot reports (`latitude`/`longitude` of the telemetry
 * field table), one point per bucket that has a fix: the bucket's last sample, so every point is a
 * place the robot really was (an average would cut corners). Samples at exactly 0/0 carry no fix
 * (the proto default of a robot that sent no position) and are left out, as are non-finite ones.
 */
import type { BoundQuery, Rows } from '../../../telemetry/store/index.js';
import type { HistoryRange } from './limits.js';
import { RANGE_WHERE, rangeParams, type HistoryRobot } from './range-sql.js';

export const PATH_SQL = `
SELECT intDiv(ts_ms - {from_ms:Int64}, {bucket_ms:Int64}) AS b, argMax(lon, ts_ms), argMax(lat, ts_ms)
FROM telemetry_samples
WHERE ${RANGE_WHERE}
  AND NOT (lat = 0 AND lon = 0) AND isFinite(lat) AND isFinite(lon)
GROUP BY b
ORDER BY b`;

/** The path query. */
export function pathQuery(robot: HistoryRobot, range: HistoryRange, bucketMs: number): BoundQuery {
  return { sql: PATH_SQL, params: { ...rangeParams(robot, range), bucket_ms: { type: 'Int64', value: bucketMs } } };
}

/** The `[lon, lat]` positions in time order. */
export function parsePathRows(rows: Rows): [number, number][] {
  return rows.map((r) => [Number(r[1]), Number(r[2])]);
}
