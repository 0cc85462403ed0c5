/**
 * One robot's telemetry history (docs/telemetry-history.md): raw sample pages, a downsampled series,
 * the path and an MCAP export, each one bound-parameter query on the telemetry store, so chdb and
 * any ClickHouse server (18.16 included) answer alike.
 */
import type { BoundQuery, Rows } from '../../telemetry/bound-query.js';
import { exportQuery, parseExportRows } from './export-query.js';
import { bucketMsFor, type HistoryRange } from './limits.js';
import { writeMcap } from './mcap.js';
import { parsePathRows, pathQuery } from './path.js';
import type { HistoryRobot } from './range-sql.js';
import { parseSampleRows, samplesQuery, type SamplePage } from './samples.js';
import { parseSeriesRows, seriesQuery, type SeriesPoint } from './series.js';

export type { HistoryRobot } from './range-sql.js';

/** Runs a bound query on the telemetry store. */
export type HistorySelect = (q: BoundQuery) => Promise<Rows>;

/** The page of samples after `afterMs` (`range.fromMs - 1` for the first page). */
export async function readSamples(select: HistorySelect, robot: HistoryRobot, range: HistoryRange, afterMs: number, limit: number): Promise<SamplePage> {
  return parseSampleRows(await select(samplesQuery(robot, range, afterMs, limit)));
}

/** The series of the named fields, in buckets chosen for at most `maxPoints` points. */
export async function readSeries(select: HistorySelect, robot: HistoryRobot, range: HistoryRange, maxPoints: number, fields: readonly string[]): Promise<{ bucketMs: number; points: SeriesPoint[] }> {
  const bucketMs = bucketMsFor(range, maxPoints);
  return { bucketMs, points: parseSeriesRows(await select(seriesQuery(robot, range, bucketMs)), range, bucketMs, fields) };
}

/** The path as `[lon, lat]` positions, at most `maxPoints`. */
export async function readPath(select: HistorySelect, robot: HistoryRobot, range: HistoryRange, maxPoints: number): Promise<{ bucketMs: number; coordinates: [number, number][] }> {
  const bucketMs = bucketMsFor(range, maxPoints);
  return { bucketMs, coordinates: parsePathRows(await select(pathQuery(robot, range, bucketMs))) };
}

/** The range as an MCAP file, or `tooMany` when it holds more samples than one export may. */
export async function exportMcap(select: HistorySelect, robot: HistoryRobot, range: HistoryRange): Promise<{ file: Uint8Array } | { tooMany: true }> {
  const r = parseExportRows(await select(exportQuery(robot, range)));
  if (r.tooMany) return { tooMany: true };
  return { file: await writeMcap(robot.robotId, range, r.samples) };
}
