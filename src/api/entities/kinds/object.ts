/**
 * Kind `object`: tracked objects (src/fleet/site/objects), newest first by first sighting; filters
 * object_class, source and robot_id (last reported by). `get-entity` adds the footprint.
 */
import { Type, type Static } from '@sinclair/typebox';
import { apiError } from '../../../errors/catalog.js';
import { getObject, objectsOf } from '../../../fleet/site/objects/object-store.js';
import type { ObjectRecord, ObjectSource } from '../../../fleet/site/objects/records.js';
import { Nullable, Uuid } from '../../schemas/common.js';
import { GeometrySchema } from '../../schemas/features.js';
import { named } from '../../schemas/named.js';
import { defineKind } from '../kind.js';
import { AGENT_LIST_LIMIT, KindTag, RobotIdFilter } from './common.js';

const SourceSchema = Type.Unsafe<ObjectSource>({ type: 'string', enum: ['robot', 'manual'] });

const common = {
  object_id: Uuid,
  object_class: Type.String(),
  source: SourceSchema,
  label: Nullable(Type.String()),
  latitude: Type.Number(),
  longitude: Type.Number(),
  elevation_m: Nullable(Type.Number()),
  confidence: Nullable(Type.Number()),
  sightings: Type.Integer(),
  first_seen_ms: Type.Integer(),
  last_seen_ms: Type.Integer(),
  expires_at_ms: Nullable(Type.Integer()),
};

export const ObjectItem = named('ObjectEntityItem', Type.Object({ kind: KindTag('object'), ...common }, { additionalProperties: false }));
type ObjectItem = Static<typeof ObjectItem>;

export const ObjectDetail = named('ObjectEntity', Type.Object(
  {
    kind: KindTag('object'),
    ...common,
    geometry: Nullable(GeometrySchema),
    last_reported_by: Nullable(Uuid),
    updated_at_ms: Type.Integer(),
  },
  { additionalProperties: false },
));
type ObjectDetail = Static<typeof ObjectDetail>;

function item(o: ObjectRecord): ObjectItem {
  return {
    kind: 'object',
    object_id: o.objectId,
    object_class: o.objectClass,
    source: o.source,
    label: o.label,
    latitude: o.position.latitude,
    longitude: o.position.longitude,
    elevation_m: o.position.elevationM,
    confidence: o.confidence,
    sightings: o.sightings,
    first_seen_ms: o.firstSeenMs,
    last_seen_ms: o.lastSeenMs,
    expires_at_ms: o.expiresAtMs,
  };
}

export const objectKind = defineKind<ObjectRecord, ObjectItem, ObjectDetail>({
  name: 'object',
  permission: 'robots:read',
  describe: 'tracked objects, newest first by first sighting; filters object_class, source, robot_id (last reported by)',
  filters: {
    object_class: Type.String({ minLength: 1, maxLength: 64, description: 'Only objects of this (lower-case) class, e.g. pallet, person.' }),
    source: Type.Unsafe<ObjectSource>({ type: 'string', enum: ['robot', 'manual'], description: 'Only objects a robot reported (robot) or an operator created (manual).' }),
    robot_id: RobotIdFilter,
  },
  limit: AGENT_LIST_LIMIT,
  item: ObjectItem,
  source(deps, fleet, f) {
    const q = f as { object_class?: string; source?: ObjectSource; robot_id?: string };
    return objectsOf(deps.store, fleet.fleetId, {
      ...(q.object_class !== undefined ? { objectClass: q.object_class.toLowerCase() } : {}),
      ...(q.source !== undefined ? { source: q.source } : {}),
      ...(q.robot_id !== undefined ? { robotId: q.robot_id } : {}),
    });
  },
  view: (_deps, o) => item(o),
  detail: {
    schema: ObjectDetail,
    get(deps, fleet, id) {
      const o = getObject(deps.store, fleet.fleetId, id!);
      if (o === undefined) throw apiError('object_not_found', { objectId: id! });
      return { ...item(o), geometry: o.geometry, last_reported_by: o.lastReportedBy?.robotId ?? null, updated_at_ms: o.updatedAtMs };
    },
  },
});
