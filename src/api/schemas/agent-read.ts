/**
 * `get-map-context` and `explain-capability` (spec: Agent API, read tools). The interface leaves the
 * explain-capability shapes open; these are the gateway's. (query-entities, get-entity and resolve
 * are built from the kind registry: src/api/entities/schemas.ts.)
 */
import { Type, type Static } from '@sinclair/typebox';
import { FreeForm, Nullable, Uuid } from './common.js';
import { GeometrySchema } from './features.js';
import { named } from './named.js';

export const MAP_INCLUDES = ['robots', 'features', 'field_rules', 'objects'] as const;
export type MapInclude = (typeof MAP_INCLUDES)[number];

/** Most robots and features one map context returns (the rest: `truncated`). */
export const MAX_MAP_ROBOTS = 5000;
export const MAX_MAP_FEATURES = 2000;

const Lon = Type.Number({ minimum: -180, maximum: 180 });
const Lat = Type.Number({ minimum: -90, maximum: 90 });

export const MapContextBody = named('MapContextRequest', Type.Object(
  {
    org_id: Uuid,
    fleet_id: Uuid,
    include: Type.Array(Type.Unsafe<MapInclude>({ type: 'string', enum: [...MAP_INCLUDES] }), { minItems: 1, maxItems: MAP_INCLUDES.length }),
    bbox: Type.Optional(Type.Array(Type.Union([Lon, Lat]), {
      minItems: 4,
      maxItems: 4,
      description:
        '[min_longitude, min_latitude, max_longitude, max_latitude] (WGS84 degrees; min <= max). Validated but not applied: the whole fleet is returned ' +
        '(`bbox_applied` false).',
    })),
  },
  {
    additionalProperties: false,
    description:
      'Needs operations:read, plus robots:read for `robots` and `objects` and features:read for `features` and `field_rules`.',
  },
));
export type MapContextBody = Static<typeof MapContextBody>;

export const MapRobot = named('MapRobot', Type.Object(
  {
    robot_id: Uuid,
    name: Type.String(),
    latitude: Nullable(Type.Number()),
    longitude: Nullable(Type.Number()),
    elevation_m: Nullable(Type.Number()),
    online: Type.Boolean(),
  },
  { additionalProperties: false, description: 'A robot active in the fleet at its latest reported position (null before any).' },
));

export const MapFeature = named('MapFeature', Type.Object(
  { feature_id: Uuid, name: Type.String(), geometry: GeometrySchema, locked: Type.Boolean() },
  { additionalProperties: false },
));

export const MapFieldRule = named('MapFieldRule', Type.Object(
  { directive_id: Uuid, name: Type.String(), type: Type.String(), enabled: Type.Boolean(), geometry: GeometrySchema },
  { additionalProperties: false },
));

export const MapObject = named('MapObject', Type.Object(
  {
    object_id: Uuid,
    object_class: Type.String(),
    latitude: Type.Number(),
    longitude: Type.Number(),
    elevation_m: Nullable(Type.Number()),
    geometry: Nullable(GeometrySchema),
  },
  { additionalProperties: false },
));

export const MapContextResponse = named('MapContext', Type.Object(
  {
    bbox_applied: Type.Literal(false, { description: 'Always false: the whole fleet is returned.' }),
    robots: Type.Optional(Type.Array(MapRobot, { description: `By robot_id; at most ${MAX_MAP_ROBOTS}.` })),
    features: Type.Optional(Type.Array(MapFeature, { description: `By feature_id; at most ${MAX_MAP_FEATURES}.` })),
    field_rules: Type.Optional(Type.Array(MapFieldRule, { description: `By directive_id; at most ${MAX_MAP_FEATURES}.` })),
    objects: Type.Optional(Type.Array(MapObject, { description: `Newest first; at most ${MAX_MAP_ROBOTS}.` })),
    truncated: Type.Array(Type.Unsafe<MapInclude>({ type: 'string', enum: [...MAP_INCLUDES] }), { description: 'Includes cut at their bound.' }),
  },
  { additionalProperties: false, description: 'Only the included parts are present.' },
));
export type MapContextResponse = Static<typeof MapContextResponse>;

export const ExplainCapabilityBody = named('ExplainCapabilityRequest', Type.Object(
  {
    org_id: Uuid,
    fleet_id: Uuid,
    capability: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'A capability (as query-entities `capability` filters robots; an invocable one is a control-robot `invoke_action` `action_name`); omit for every capability of the fleet\'s robots.' })),
    online: Type.Optional(Type.Boolean({ description: 'Only robots that are (true) or are not (false) connected now.' })),
  },
  { additionalProperties: false, description: 'Needs robots:read. Robots active in the fleet only.' },
));
export type ExplainCapabilityBody = Static<typeof ExplainCapabilityBody>;

export const CapabilityRobot = named('CapabilityRobot', Type.Object(
  {
    robot_id: Uuid,
    name: Type.String(),
    online: Type.Boolean(),
    available: Type.Boolean({ description: 'Online and not running a mission.' }),
    invocable: Type.Boolean({ description: 'Its advertised command policy has this action: control-robot `invoke_action` can call it.' }),
    arguments_schema: Nullable(FreeForm({ description: 'JSON Schema (2020-12) of the arguments object this robot accepts for the action; null when the action takes none or is not invocable.' })),
    advertised_at_ms: Nullable(Type.Integer({ description: 'When its Hello advertised it; null when only its registration lists it (not advertised since the gateway started).' })),
  },
  { additionalProperties: false },
));

export const ExplainCapabilityResponse = named('CapabilityExplanation', Type.Object(
  {
    items: Type.Array(Type.Object(
      { capability: Type.String(), robots: Type.Array(CapabilityRobot, { description: 'By robot_id.' }) },
      { additionalProperties: false },
    ), { description: 'One per capability (the one asked for, also when no robot has it), by name.' }),
    robots_without_policy: Type.Array(Uuid, {
      description: 'Active robots whose advertised policy is not known: not connected since the gateway started, or connected without a command policy.',
    }),
  },
  { additionalProperties: false, description: 'From each active robot\'s capabilities (registered plus those its latest Hello since the gateway started advertised) and its advertised command policy.' },
));
export type ExplainCapabilityResponse = Static<typeof ExplainCapabilityResponse>;
