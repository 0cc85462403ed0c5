/**
 * One robot's telemetry history (`robots:read`, access as `GET /v1/robots/{robot_id}`):
 * raw samples (paged), a downsampled series, the path as GeoJSON and an MCAP export
 * (docs/telemetry-history.md).
 */
import type { Logger } from 'pino';
import { assertRobotVisible } from '../../auth/access.js';
import type { AuthContext } from '../../auth/context.js';
import { apiError } from '../../errors/catalog.js';
import { SERIES_FIELD_NAMES } from '../../fleet/history/telemetry/fields.js';
import { exportMcap, readPath, readSamples, readSeries, type HistoryRobot, type HistorySelect } from '../../fleet/history/telemetry/history.js';
import { historyRange, MAX_EXPORT_BYTES, MAX_EXPORT_SAMPLES, MAX_POINTS, SAMPLE_PAGE, type HistoryRange } from '../../fleet/history/telemetry/limits.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { defineRoute } from '../define-route.js';
import { decodeCursor, encodeCursor, type CursorBinding } from '../list-cursor.js';
import { ResponseStream } from '../stream-body.js';
import type { RouteDef } from '../route.js';
import { RobotPathParams } from '../schemas/robots.js';
import {
  TelemetryExportQuery, TelemetryPath, TelemetryPathQuery, TelemetrySamplePage, TelemetrySamplesQuery, TelemetrySeries, TelemetrySeriesQuery,
} from '../schemas/telemetry-history.js';

export interface TelemetryHistoryDeps {
  /** Robot records for the access check (the registry's). */
  identity: Pick<IdentityReads, 'robot'>;
  /**
   * Bound-parameter reads on the telemetry store. Null where the process has no telemetry store (the
   * offline document, openapi-document.ts, which serves nothing): the routes answer 503.
   */
  select: HistorySelect | null;
  now?: () => number;
  log?: Logger;
  /** Bytes of messages an MCAP export writes at most (default MAX_EXPORT_BYTES). */
  exportMaxBytes?: number;
  /** MCAP exports running at once at most (default MAX_EXPORTS); more are answered 503 with Retry-After. */
  maxExports?: number;
}

/** Exports at once by default: each holds a read chunk, an MCAP chunk (1 MiB) and the socket's backlog. */
export const MAX_EXPORTS = 4;

const READ_ERRORS = ['invalid_query', 'robot_not_found', 'forbidden_fleet', 'telemetry_reads_unavailable'] as const;

/** The telemetry history routes. */
export function telemetryHistoryRoutes(deps: TelemetryHistoryDeps): RouteDef[] {
  const { identity } = deps;
  const now = deps.now ?? Date.now;
  const maxExports = deps.maxExports ?? MAX_EXPORTS;
  // Counted from before the first store read until the producer ends (the handler returns earlier).
  let exportsRunning = 0;

  const robotOf = (auth: AuthContext, robotId: string): HistoryRobot => {
    const robot = identity.robot(robotId);
    assertRobotVisible(auth, robotId, robot);
    return { robotId: robot.robotId, fleetId: robot.fleetId };
  };
  const rangeOf = (q: { from_ms?: number; to_ms?: number }): HistoryRange => {
    const r = historyRange(q.from_ms, q.to_ms, now());
    if ('param' in r) throw apiError('invalid_query', { detail: `${r.param} ${r.detail}` });
    return r;
  };
  /** Runs a read, turning a store failure into 503 (logged without the query's values). */
  const read = async <T>(robot: HistoryRobot, what: string, f: (select: HistorySelect) => Promise<T>): Promise<T> => {
    const select = deps.select;
    if (select === null) throw apiError('telemetry_reads_unavailable');
    try {
      return await f(select);
    } catch (err) {
      deps.log?.warn({ err, robotId: robot.robotId }, `telemetry history: the ${what} query failed`);
      throw apiError('telemetry_reads_unavailable');
    }
  };
  const fieldsOf = (raw: string | undefined): string[] => {
    if (raw === undefined) return [...SERIES_FIELD_NAMES];
    const names = [...new Set(raw.split(','))];
    const unknown = names.filter((n) => !SERIES_FIELD_NAMES.includes(n));
    if (unknown.length > 0) throw apiError('invalid_query', { detail: `fields may name only numeric telemetry fields (${SERIES_FIELD_NAMES.join(', ')}); ${unknown.length} name(s) are not among them` });
    return names;
  };

  return [
    defineRoute({
      method: 'GET',
      path: '/v1/robots/{robot_id}/telemetry',
      operationId: 'listTelemetrySamples',
      summary: `One robot's stored telemetry samples over a range of at most a day (default: the last 10 minutes), oldest first, ${SAMPLE_PAGE.max} at most per page.`,
      tags: ['Telemetry'],
      auth: 'robots:read',
      params: RobotPathParams,
      query: TelemetrySamplesQuery,
      responses: { 200: { description: 'A page of samples.', schema: TelemetrySamplePage } },
      errors: [...READ_ERRORS, 'cursor_invalid'],
    }).handle(async ({ auth, params, query }) => {
      const robot = robotOf(auth, params.robot_id);
      // Bound to the filters as sent; the effective range (to_ms defaults to now) rides in the
      // position, so every page reads the range the first one did.
      const binding: CursorBinding = { kind: 'telemetry-samples', scope: robot.fleetId, scopeParam: 'fleet_id', filters: { robot_id: robot.robotId, from_ms: query.from_ms, to_ms: query.to_ms } };
      let range: HistoryRange;
      let afterMs: number;
      if (query.cursor !== undefined) {
        const parts = decodeCursor(binding, query.cursor).split(':').map(Number);
        if (parts.length !== 3 || !parts.every((n) => Number.isSafeInteger(n))) {
          throw apiError('cursor_invalid', { param: 'cursor', detail: 'not a cursor this gateway issued; pass the next_cursor of the previous page unchanged' });
        }
        const [from, to, after] = parts as [number, number, number];
        range = rangeOf({ from_ms: from, to_ms: to });
        afterMs = after;
      } else {
        range = rangeOf(query);
        afterMs = range.fromMs - 1;
      }
      const limit = query.limit ?? SAMPLE_PAGE.default;
      const page = await read(robot, 'samples', (select) => readSamples(select, robot, range, afterMs, limit));
      const last = page.samples.at(-1)?.tsMs as number | undefined;
      const next = page.more && last !== undefined ? encodeCursor(binding, `${range.fromMs}:${range.toMs}:${last}`) : null;
      return { status: 200, body: { items: page.samples, next_cursor: next } };
    }),

    defineRoute({
      method: 'GET',
      path: '/v1/robots/{robot_id}/telemetry/series',
      operationId: 'getTelemetrySeries',
      summary: `One robot's numeric telemetry downsampled into fixed buckets (count, min, max, avg per field), at most ${MAX_POINTS.max} points over at most a day (default: the last 10 minutes, ${MAX_POINTS.default} points).`,
      tags: ['Telemetry'],
      auth: 'robots:read',
      params: RobotPathParams,
      query: TelemetrySeriesQuery,
      responses: { 200: { description: 'The series.', schema: TelemetrySeries } },
      errors: [...READ_ERRORS],
    }).handle(async ({ auth, params, query }) => {
      const robot = robotOf(auth, params.robot_id);
      const range = rangeOf(query);
      const fields = fieldsOf(query.fields);
      const s = await read(robot, 'series', (select) => readSeries(select, robot, range, query.max_points ?? MAX_POINTS.default, fields));
      const body: TelemetrySeries = { robotId: robot.robotId, fromMs: range.fromMs, toMs: range.toMs, bucketMs: s.bucketMs, fields, points: s.points };
      return { status: 200, body };
    }),

    defineRoute({
      method: 'GET',
      path: '/v1/robots/{robot_id}/telemetry/path',
      operationId: 'getTelemetryPath',
      summary: `One robot's path over a range as a GeoJSON LineString of WGS84 positions, at most ${MAX_POINTS.max} points (default: the last 10 minutes, ${MAX_POINTS.default} points).`,
      tags: ['Telemetry'],
      auth: 'robots:read',
      params: RobotPathParams,
      query: TelemetryPathQuery,
      responses: { 200: { description: 'The path.', schema: TelemetryPath } },
      errors: [...READ_ERRORS],
    }).handle(async ({ auth, params, query }) => {
      const robot = robotOf(auth, params.robot_id);
      const range = rangeOf(query);
      const p = await read(robot, 'path', (select) => readPath(select, robot, range, query.max_points ?? MAX_POINTS.default));
      const body: TelemetryPath = {
        type: 'Feature',
        geometry: { type: 'LineString', coordinates: p.coordinates },
        properties: { robotId: robot.robotId, fromMs: range.fromMs, toMs: range.toMs, bucketMs: p.bucketMs, points: p.coordinates.length },
      };
      return { status: 200, body };
    }),

    defineRoute({
      method: 'GET',
      path: '/v1/robots/{robot_id}/telemetry/export.mcap',
      operationId: 'exportTelemetryMcap',
      summary: `One robot's samples over a range as an MCAP file (JSON channels /location, /pose, /telemetry with their schemas) for Foxglove and other robotics tools; at most ${MAX_EXPORT_SAMPLES} samples and ${MAX_EXPORT_BYTES / 1048576} MiB of messages (streamed; its \`fleetgw.export.result\` metadata says whether the file is complete and where to continue).`,
      tags: ['Telemetry'],
      auth: 'robots:read',
      params: RobotPathParams,
      query: TelemetryExportQuery,
      responses: { 200: { description: 'The MCAP file.', contentType: 'application/octet-stream' } },
      errors: [...READ_ERRORS, 'unavailable'],
    }).handle(async ({ auth, params, query }) => {
      const robot = robotOf(auth, params.robot_id);
      const range = rangeOf(query);
      if (exportsRunning >= maxExports) {
        throw apiError('unavailable', { what: `An MCAP export (${maxExports} run at once, all taken)` }, { headers: { 'retry-after': '5' } });
      }
      exportsRunning++;
      let handedOver = false;
      try {
        const r = await read(robot, 'export', (select) => exportMcap(select, robot, range, deps.exportMaxBytes ?? MAX_EXPORT_BYTES));
        if ('tooMany' in r) {
          throw apiError('invalid_query', { detail: `from_ms..to_ms holds more than ${MAX_EXPORT_SAMPLES} samples, the MCAP export limit; export a shorter range` });
        }
        const name = `${robot.robotId}-${range.fromMs}-${range.toMs}.mcap`;
        // Streamed: a page of samples at a time, each written before the next is read (the socket's
        // backpressure paces the store reads). A store failure from here on closes the connection.
        // The export's place is given back when the producer ends; a HEAD never runs it.
        let released = false;
        const release = (): void => {
          if (!released) exportsRunning--;
          released = true;
        };
        const body = new ResponseStream('application/octet-stream', async (sink) => {
          try {
            await r.produce(sink);
          } finally {
            release();
          }
        }, release);
        handedOver = true;
        return { status: 200, body, headers: { 'content-disposition': `attachment; filename="${name}"` } };
      } finally {
        if (!handedOver) exportsRunning--;
      }
    }),
  ];
}
