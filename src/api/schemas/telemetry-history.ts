/**
 * The telemetry history routes (`GET /v1/robots/{robot_id}/telemetry…`, docs/telemetry-history.md).
 * Sample and series field names come from the telemetry field table (src/fleet/history/telemetry/fields.ts).
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { HISTORY_FIELDS, SERIES_FIELDS, type HistoryKind } from '../../fleet/history/telemetry/fields.js';
import { MAX_POINTS, MAX_RANGE_MS, SAMPLE_PAGE } from '../../fleet/history/telemetry/limits.js';
import { Nullable, Uuid } from './common.js';
import { CursorParam, LimitParam, Page } from './list.js';
import { named } from './named.js';

const HOURS = MAX_RANGE_MS / 3_600_000;

const range = {
  from_ms: Type.Optional(Type.Integer({ minimum: 0, description: `Range start (Unix ms, inclusive, robot clock); default: ten minutes before to_ms; at most ${HOURS} hours before to_ms.` })),
  to_ms: Type.Optional(Type.Integer({ minimum: 1, description: 'Range end (Unix ms, exclusive); default: now. Not in the future (up to 60 s ahead is cut to now).' })),
};

const maxPoints = Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_POINTS.max, description: `Most points returned; default ${MAX_POINTS.default}, at most ${MAX_POINTS.max}. The bucket length is chosen from the range and this.` }));

export const TelemetrySamplesQuery = Type.Object(
  { ...range, limit: Type.Optional(LimitParam(SAMPLE_PAGE)), cursor: Type.Optional(CursorParam()) },
  { additionalProperties: false },
);
export type TelemetrySamplesQuery = Static<typeof TelemetrySamplesQuery>;

export const TelemetrySeriesQuery = Type.Object(
  {
    ...range,
    max_points: maxPoints,
    fields: Type.Optional(Type.String({ minLength: 1, maxLength: 1000, description: `Comma-separated field names to summarize; default: every numeric field (${SERIES_FIELDS.map((f) => f.name).join(', ')}).` })),
  },
  { additionalProperties: false },
);
export type TelemetrySeriesQuery = Static<typeof TelemetrySeriesQuery>;

export const TelemetryPathQuery = Type.Object({ ...range, max_points: maxPoints }, { additionalProperties: false });
export type TelemetryPathQuery = Static<typeof TelemetryPathQuery>;

export const TelemetryExportQuery = Type.Object(range, { additionalProperties: false });
export type TelemetryExportQuery = Static<typeof TelemetryExportQuery>;

const KIND: Record<HistoryKind, () => TSchema> = {
  number: () => Nullable(Type.Number({ description: 'null where the robot sent NaN or an infinity (JSON has neither).' })),
  boolean: () => Type.Boolean(),
  string: () => Type.String(),
  strings: () => Type.Array(Type.String()),
};

export const TelemetrySample = named('TelemetrySample', Type.Object(
  Object.fromEntries(HISTORY_FIELDS.map((f) => [f.name, KIND[f.kind]()])),
  { additionalProperties: false, description: 'One stored sample: `tsMs` (robot clock), `receivedAtMs` (gateway clock), and the robot-reported fields under their names in the robot view.' },
));

export const TelemetrySamplePage = Page('TelemetrySamplePage', TelemetrySample, 'Oldest first (robot clock); a page ends between timestamps.');
export type TelemetrySamplePage = Static<typeof TelemetrySamplePage>;

export const SeriesStat = named('SeriesStat', Type.Object({ min: Type.Number(), max: Type.Number(), avg: Type.Number() }, { additionalProperties: false }));

export const TelemetrySeries = named('TelemetrySeries', Type.Object(
  {
    robotId: Uuid,
    fromMs: Type.Integer(),
    toMs: Type.Integer({ description: 'The range end used (now when to_ms was absent or ahead of now).' }),
    bucketMs: Type.Integer({ description: 'Bucket length: 1, 2 or 5 times a power of ten ms, so that the range holds at most max_points buckets.' }),
    fields: Type.Array(Type.String(), { description: 'The fields summarized.' }),
    points: Type.Array(
      Type.Object(
        {
          tsMs: Type.Integer({ description: 'Bucket start: fromMs + k * bucketMs.' }),
          count: Type.Integer({ description: 'Samples in the bucket (buckets without samples are left out).' }),
          values: Type.Object(Object.fromEntries(SERIES_FIELDS.map((f) => [f.name, Type.Optional(SeriesStat)])), {
            additionalProperties: false,
            description: 'Per field asked for, over its finite values in the bucket; a field with none (the robot sent only NaN) is left out.',
          }),
        },
        { additionalProperties: false },
      ),
      { description: 'Buckets with samples, oldest first.' },
    ),
  },
  { additionalProperties: false },
));
export type TelemetrySeries = Static<typeof TelemetrySeries>;

export const TelemetryPath = named('TelemetryPath', Type.Object(
  {
    type: Type.Literal('Feature'),
    geometry: Type.Object(
      {
        type: Type.Literal('LineString'),
        coordinates: Type.Array(Type.Array(Type.Number(), { minItems: 2, maxItems: 2 }), { description: 'WGS84 [longitude, latitude], oldest first: the last fix of each bucket. Fewer than two when the range has fewer fixes.' }),
      },
      { additionalProperties: false },
    ),
    properties: Type.Object(
      {
        robotId: Uuid,
        fromMs: Type.Integer(),
        toMs: Type.Integer(),
        bucketMs: Type.Integer(),
        points: Type.Integer({ description: 'Positions in coordinates.' }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, description: 'A GeoJSON Feature (RFC 7946) with the robot\'s path as a LineString.' },
));
export type TelemetryPath = Static<typeof TelemetryPath>;
