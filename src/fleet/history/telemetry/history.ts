/**
 * One robot's telemetry history (docs/telemetry-history.md): raw sample pages, a downsampled series,
 * the path and an MCAP export, each one bound-parameter query on the telemetry store, so chdb and
 * any ClickHouse server (18.16 included) answer alike.
 */
import type { BoundQuery, Rows } from '../../../telemetry/store/index.js';
import { exportCountQuery, tooManyToExport } from './export-query.js';
import { bucketMsFor, MAX_EXPORT_BYTES, SAMPLE_PAGE_BYTES, SAMPLE_READ_CHUNK, type HistoryRange } from './limits.js';
import { writeMcap, type ByteSink, type McapResult } from './mcap.js';
import { inReadSlot } from './read-slots.js';

/** Samples an export reads per query: small reads keep each turn on the event loop short (parsing, JSON). */
const EXPORT_READ_CHUNK = 500;
import { parsePathRows, pathQuery } from './path.js';
import type { HistoryRobot } from './range-sql.js';
import { parseSampleRows, samplesQuery, type HistorySample, type SamplePage } from './samples.js';
import { parseSeriesRows, seriesQuery, type SeriesPoint } from './series.js';

export type { HistoryRobot } from './range-sql.js';

/** Runs a bound query on the telemetry store. */
export type HistorySelect = (q: BoundQuery) => Promise<Rows>;

/**
 * The page of samples after `afterMs` (`range.fromMs - 1` for the first page): `limit` samples (plus
 * those sharing the last one's timestamp) or fewer when they pass `budgetBytes` of JSON. Read from
 * the store {@link SAMPLE_READ_CHUNK} at a time, so one read holds a chunk's rows, not a page's.
 */
export async function readSamples(select: HistorySelect, robot: HistoryRobot, range: HistoryRange, afterMs: number, limit: number, budgetBytes = SAMPLE_PAGE_BYTES): Promise<SamplePage> {
  const samples: HistorySample[] = [];
  let bytes = 0;
  let after = afterMs;
  for (;;) {
    const want = Math.min(limit - samples.length, SAMPLE_READ_CHUNK);
    const chunk = parseSampleRows(await select(samplesQuery(robot, range, after, want)), budgetBytes - bytes, samples.length === 0);
    for (const s of chunk.samples) samples.push(s);
    bytes += chunk.bytes;
    // Each chunk ends between timestamps, so chunks add up to the page a single query would read.
    if (!chunk.more || chunk.full || samples.length >= limit || chunk.samples.length === 0) {
      return { samples, more: chunk.more, bytes, full: chunk.full };
    }
    after = samples.at(-1)!.tsMs as number;
  }
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

/** Writes an export into a sink (the HTTP response), a page of samples at a time. */
export type McapProducer = (sink: ByteSink) => Promise<McapResult>;

/**
 * The range as an MCAP file written as it is read, or `tooMany` when it holds more samples than one
 * export may (asked first: the answer's status precedes the file). The file stops at `maxBytes` of
 * messages and says so in its `fleetgw.export.result` metadata.
 */
export async function exportMcap(select: HistorySelect, robot: HistoryRobot, range: HistoryRange, maxBytes = MAX_EXPORT_BYTES): Promise<{ produce: McapProducer } | { tooMany: true }> {
  if (tooManyToExport(await select(exportCountQuery(robot, range)))) return { tooMany: true };
  async function* pages(signal: AbortSignal | undefined): AsyncGenerator<readonly HistorySample[]> {
    let after = range.fromMs - 1;
    for (;;) {
      const page = parseSampleRows(await inReadSlot(() => select(samplesQuery(robot, range, after, EXPORT_READ_CHUNK)), signal));
      if (page.samples.length > 0) yield page.samples;
      if (!page.more || page.samples.length === 0) return;
      after = page.samples.at(-1)!.tsMs as number;
    }
  }
  return { produce: (sink) => writeMcap(robot.robotId, range, pages(sink.signal), sink, maxBytes) };
}
