/**
 * Tracked objects (docs/objects.md): nested REST routes under the fleet path. The
 * spec names the record only; these field names are the gateway's.
 */
import { Type, type Static } from '@sinclair/typebox';
import { Nullable, Uuid } from './common.js';
import { GeometrySchema } from './features.js';
import { CursorParam, LimitParam, Page, type ListLimit } from './list.js';
import { named } from './named.js';

export const ObjectPathParams = Type.Object({ org_id: Uuid, fleet_id: Uuid, object_id: Uuid }, { additionalProperties: false });
export type ObjectPathParams = Static<typeof ObjectPathParams>;

const ObjectClass = Type.String({
  pattern: '^[a-z0-9_-]{1,64}$',
  description: 'Lower-case class, e.g. `pallet`, `person`, `obstacle`, `vehicle` (1-64 of a-z, 0-9, `_`, `-`).',
});

const ObjectSourceSchema = Type.Union([Type.Literal('robot'), Type.Literal('manual')], {
  description: '`robot`: created from a robot detection (expires when not seen again); `manual`: created by an operator (never expires).',
});

export const ObjectPosition = named('ObjectPosition', Type.Object(
  {
    latitude: Type.Number({ minimum: -90, maximum: 90, description: 'WGS 84 degrees.' }),
    longitude: Type.Number({ minimum: -180, maximum: 180, description: 'WGS 84 degrees.' }),
    elevationM: Type.Optional(Nullable(Type.Number({ description: 'Metres; null or omitted when unknown.' }))),
  },
  { additionalProperties: false },
));

const Label = Type.String({ minLength: 1, maxLength: 200 });

export const TrackedObjectView = named('TrackedObject', Type.Object(
  {
    objectId: Uuid,
    objectClass: Type.String(),
    position: Type.Object(
      { latitude: Type.Number(), longitude: Type.Number(), elevationM: Nullable(Type.Number()) },
      { additionalProperties: false },
    ),
    geometry: Nullable(GeometrySchema),
    source: ObjectSourceSchema,
    label: Nullable(Type.String()),
    lastReportedBy: Nullable(Type.Object(
      { robotId: Uuid, trackId: Nullable(Type.String({ description: "The robot's own track id, or null when it sent none." })) },
      { additionalProperties: false, description: 'The robot that saw it last; null when no robot has seen it.' },
    )),
    confidence: Nullable(Type.Number({ minimum: 0, maximum: 1, description: 'Detector confidence of the latest sighting.' })),
    sightings: Type.Integer({ minimum: 0, description: 'Robot detections matched to this object.' }),
    firstSeenMs: Type.Integer({ description: 'Created: first sighting or manual creation (gateway clock, Unix ms).' }),
    lastSeenMs: Type.Integer({ description: 'Latest robot sighting (or creation, for an object no robot has seen since).' }),
    expiresAtMs: Nullable(Type.Integer({ description: 'Robot objects: removed at this time unless seen again (lastSeenMs + the TTL); null for manual objects.' })),
    updatedAtMs: Type.Integer(),
  },
  { additionalProperties: false },
));
export type TrackedObjectView = Static<typeof TrackedObjectView>;

export const ObjectCreateBody = named('TrackedObjectCreateRequest', Type.Object(
  {
    objectClass: ObjectClass,
    position: ObjectPosition,
    geometry: Type.Optional(Nullable(GeometrySchema)),
    label: Type.Optional(Nullable(Label)),
  },
  { additionalProperties: false },
));
export type ObjectCreateBody = Static<typeof ObjectCreateBody>;

export const ObjectUpdateBody = named('TrackedObjectUpdateRequest', Type.Object(
  {
    objectClass: Type.Optional(ObjectClass),
    position: Type.Optional(ObjectPosition),
    geometry: Type.Optional(Nullable(GeometrySchema)),
    label: Type.Optional(Nullable(Label)),
  },
  { additionalProperties: false, minProperties: 1, description: 'Omitted fields are kept; `geometry` or `label` null clears it.' },
));
export type ObjectUpdateBody = Static<typeof ObjectUpdateBody>;

export const OBJECTS_LIMIT: ListLimit = { default: 100, max: 500 };

export const ObjectListQuery = Type.Object(
  {
    class: Type.Optional(ObjectClass),
    source: Type.Optional(ObjectSourceSchema),
    robot_id: Type.Optional(Uuid),
    limit: Type.Optional(LimitParam(OBJECTS_LIMIT)),
    cursor: Type.Optional(CursorParam()),
  },
  { additionalProperties: false },
);
export type ObjectListQuery = Static<typeof ObjectListQuery>;

export const ObjectListResponse = Page('TrackedObjectPage', TrackedObjectView, 'Newest first (by firstSeenMs, then objectId).');
export type ObjectListResponse = Static<typeof ObjectListResponse>;
