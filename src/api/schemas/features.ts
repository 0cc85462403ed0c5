/**
 * Features (work areas): nested REST routes under the fleet path and the `control-feature` Agent tool.
 * The spec leaves the field names open; these are the gateway's.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Uuid } from './common.js';
import { CursorParam, LimitParam, Page, type ListLimit } from './list.js';
import { named } from './named.js';

export const FleetPathParams = Type.Object({ org_id: Uuid, fleet_id: Uuid }, { additionalProperties: false });
export type FleetPathParams = Static<typeof FleetPathParams>;

export const FeaturePathParams = Type.Object({ org_id: Uuid, fleet_id: Uuid, feature_id: Uuid }, { additionalProperties: false });
export type FeaturePathParams = Static<typeof FeaturePathParams>;

const Position = Type.Array(Type.Number(), { minItems: 2, maxItems: 3, description: '[longitude, latitude] or [longitude, latitude, elevation], WGS84 degrees.' });
const Ring = Type.Array(Position, { minItems: 4, maxItems: 10_000, description: 'Closed linear ring: at least 4 positions, the last equal to the first.' });
const PolygonCoords = Type.Array(Ring, { minItems: 1, maxItems: 100, description: 'Exterior ring, then holes.' });

export const GeometrySchema = named('Geometry', Type.Union(
  [
    Type.Object({ type: Type.Literal('Polygon'), coordinates: PolygonCoords }, { additionalProperties: false }),
    Type.Object({ type: Type.Literal('MultiPolygon'), coordinates: Type.Array(PolygonCoords, { minItems: 1, maxItems: 100 }) }, { additionalProperties: false }),
  ],
  { description: 'GeoJSON Polygon or MultiPolygon (RFC 7946); longitudes in [-180, 180], latitudes in [-90, 90]; at most 10000 positions.' },
));

const Name = Type.String({ minLength: 1, maxLength: 200 });

export const FeatureCreateBody = named('FeatureCreateRequest', Type.Object({ name: Name, geometry: GeometrySchema }, { additionalProperties: false }));
export type FeatureCreateBody = Static<typeof FeatureCreateBody>;

export const FeatureUpdateBody = named('FeatureUpdateRequest', Type.Object(
  { name: Type.Optional(Name), geometry: Type.Optional(GeometrySchema) },
  { additionalProperties: false, description: 'Omitted fields are kept.' },
));
export type FeatureUpdateBody = Static<typeof FeatureUpdateBody>;

export const FeatureView = named('Feature', Type.Object(
  {
    featureId: Uuid,
    name: Type.String(),
    geometry: GeometrySchema,
    locked: Type.Boolean({ description: 'No run is dispatched on a locked feature.' }),
    lockReason: Nullable(Type.String()),
    holders: Type.Array(Uuid, { description: 'Robots currently working in the area.' }),
    decompositionEpoch: Type.Integer({ description: 'Bumped by resets: robots re-decompose the area from scratch.' }),
    createdAtMs: Type.Integer(),
    updatedAtMs: Type.Integer(),
  },
  { additionalProperties: false },
));
export type FeatureView = Static<typeof FeatureView>;

export const FEATURES_LIMIT: ListLimit = { default: 100, max: 500 };

export const FeatureListQuery = Type.Object(
  { limit: Type.Optional(LimitParam(FEATURES_LIMIT)), cursor: Type.Optional(CursorParam()) },
  { additionalProperties: false },
);
export type FeatureListQuery = Static<typeof FeatureListQuery>;

export const FeatureListResponse = Page(
  'FeatureList',
  Type.Object({ featureId: Uuid, name: Type.String(), locked: Type.Boolean() }, { additionalProperties: false }),
  'Ordered by featureId.',
);
export type FeatureListResponse = Static<typeof FeatureListResponse>;

export const CONTROL_FEATURE_ACTIONS = ['lock', 'unlock', 'reset', 'enable_field_rule', 'disable_field_rule'] as const;

export const ControlFeatureBody = named('ControlFeatureRequest', Type.Object(
  {
    org_id: Uuid,
    fleet_id: Uuid,
    action: Type.Unsafe<(typeof CONTROL_FEATURE_ACTIONS)[number]>({
      type: 'string',
      enum: [...CONTROL_FEATURE_ACTIONS],
      description: 'lock / unlock / reset a feature (`feature_id`); enable_field_rule / disable_field_rule a field rule (`directive_id`, docs/field-rules.md).',
    }),
    feature_id: Type.Optional(Uuid),
    lock_reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'Only with `lock`.' })),
    directive_id: Type.Optional(Uuid),
  },
  { additionalProperties: false, description: '`feature_id` with lock, unlock and reset; `directive_id` with enable_field_rule and disable_field_rule.' },
));
export type ControlFeatureBody = Static<typeof ControlFeatureBody>;

export const ControlFeatureResponse = named('ControlFeatureResult', Type.Object(
  { success: Type.Literal(true), action: Type.String(), feature: FeatureView },
  { additionalProperties: false },
));
export type ControlFeatureResponse = Static<typeof ControlFeatureResponse>;
