/**
 * Tracked objects (docs/objects.md): `…/objects` under
 * `/v1/orgs/{org_id}/fleets/{fleet_id}`: list (filters `class`, `source`, `robot_id`), read, create,
 * update and delete. Read with `robots:read`, manage with `robots:write` (spec: Permissions).
 */
import type { ObjectRecord } from '../../fleet/site/objects/records.js';
import { getObject, objectsOf } from '../../fleet/site/objects/object-store.js';
import type { ObjectTracker } from '../../fleet/site/objects/tracker.js';
import { withIdempotency, type IdempotencyClaims } from '../../idempotency/index.js';
import { validateGeometry } from '../../missions/catalog/geometry.js';
import { apiError } from '../../errors/catalog.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import { defineRoute } from '../define-route.js';
import { fleetFromPath } from '../fleet-scope.js';
import { defineList, type ListQuery } from '../list-reader.js';
import { toObjectView } from '../object-view.js';
import type { RouteDef } from '../route.js';
import { FleetPathParams } from '../schemas/features.js';
import {
  ObjectCreateBody,
  ObjectListQuery,
  ObjectListResponse,
  ObjectPathParams,
  OBJECTS_LIMIT,
  ObjectUpdateBody,
  TrackedObjectView,
  type ObjectListQuery as ObjectListQueryT,
} from '../schemas/objects.js';
import { GEOMETRY_BODY_MAX_BYTES } from '../schemas/body-bounds.js';

const BASE = '/v1/orgs/{org_id}/fleets/{fleet_id}/objects';

export interface ObjectRouteDeps {
  store: Store;
  /** Fleet and robot records for the access checks (the registry's). */
  identity: IdentityReads;
  objects: ObjectTracker;
  idempotency: IdempotencyClaims;
}

/** The tracked-object routes. */
export function objectRoutes(deps: ObjectRouteDeps): RouteDef[] {
  const { store, identity, objects, idempotency } = deps;
  const tags = ['Tracked objects'];
  const fleetErrors = ['forbidden_org', 'fleet_not_found', 'forbidden_fleet'] as const;
  const list = defineList<ListQuery & ObjectListQueryT, ObjectRecord, TrackedObjectView>({
    kind: 'objects',
    limit: OBJECTS_LIMIT,
    filters: (q) => ({ class: q.class, source: q.source, robot_id: q.robot_id }),
    source: (fleet, q) => objectsOf(store, fleet.fleetId, {
      ...(q.class !== undefined ? { objectClass: q.class } : {}),
      ...(q.source !== undefined ? { source: q.source } : {}),
      ...(q.robot_id !== undefined ? { robotId: q.robot_id } : {}),
    }),
    view: toObjectView,
  });
  const geometryOk = (g: ObjectCreateBody['geometry']): void => {
    if (g !== undefined && g !== null) validateGeometry(g);
  };
  return [
    defineRoute({
      method: 'GET',
      path: BASE,
      operationId: 'listObjects',
      summary: "The fleet's tracked objects, newest first; filters `class`, `source` (robot or manual), `robot_id` (the robot that saw it last).",
      tags,
      auth: 'robots:read',
      params: FleetPathParams,
      query: ObjectListQuery,
      responses: { 200: { description: 'One page of objects.', schema: ObjectListResponse } },
      errors: [...fleetErrors, 'cursor_invalid'],
    }).handle(({ auth, params, query }) => ({ status: 200, body: list.read(identity, auth, { ...params, ...query }) })),
    defineRoute({
      method: 'POST',
      path: BASE,
      operationId: 'createObject',
      summary: 'Create a manual tracked object (never expires). An Idempotency-Key header is honoured when sent.',
      tags,
      auth: 'robots:write',
      params: FleetPathParams,
      body: ObjectCreateBody,
      maxBodyBytes: GEOMETRY_BODY_MAX_BYTES,
      idempotencyKey: 'optional',
      responses: { 201: { description: 'Created; the server minted objectId.', schema: TrackedObjectView } },
      errors: [...fleetErrors, 'invalid_geometry', 'objects_full', 'idempotency_key_invalid', 'idempotency_in_progress'],
    }).handle((ctx) => {
      const fleet = fleetFromPath(identity, ctx.auth, ctx.params);
      geometryOk(ctx.body.geometry);
      return withIdempotency(
        idempotency,
        { actor: ctx.auth.apiKeyId, orgId: fleet.orgId, fleetId: fleet.fleetId, endpoint: `POST ${BASE}` },
        ctx.idempotencyKey,
        ctx.body,
        async () => {
          const { objectClass, position, geometry, label } = ctx.body;
          const o = await objects.create(
            fleet,
            { objectClass, position: { latitude: position.latitude, longitude: position.longitude, elevationM: position.elevationM ?? null }, geometry: geometry ?? null, label: label ?? null },
            { apiKeyId: ctx.auth.apiKeyId },
            ctx.nowMs,
          );
          return { status: 201 as const, body: toObjectView(o) };
        },
        { required: false },
      );
    }),
    defineRoute({
      method: 'GET',
      path: `${BASE}/{object_id}`,
      operationId: 'getObject',
      summary: 'One tracked object.',
      tags,
      auth: 'robots:read',
      params: ObjectPathParams,
      responses: { 200: { description: 'The object.', schema: TrackedObjectView } },
      errors: [...fleetErrors, 'object_not_found'],
    }).handle(({ auth, params }) => {
      const fleet = fleetFromPath(identity, auth, params);
      const o = getObject(store, fleet.fleetId, params.object_id);
      if (!o) throw apiError('object_not_found', { objectId: params.object_id });
      return { status: 200, body: toObjectView(o) };
    }),
    defineRoute({
      method: 'PATCH',
      path: `${BASE}/{object_id}`,
      operationId: 'updateObject',
      summary: 'Edit an object (class, position, geometry, label); omitted fields are kept. A robot object keeps expiring unless seen again.',
      tags,
      auth: 'robots:write',
      params: ObjectPathParams,
      body: ObjectUpdateBody,
      maxBodyBytes: GEOMETRY_BODY_MAX_BYTES,
      responses: { 200: { description: 'The edited object.', schema: TrackedObjectView } },
      errors: [...fleetErrors, 'object_not_found', 'invalid_geometry'],
    }).handle(async ({ auth, params, body, nowMs }) => {
      const fleet = fleetFromPath(identity, auth, params);
      geometryOk(body.geometry);
      const o = await objects.update(
        fleet.fleetId,
        params.object_id,
        {
          ...(body.objectClass !== undefined ? { objectClass: body.objectClass } : {}),
          ...(body.position !== undefined ? { position: { latitude: body.position.latitude, longitude: body.position.longitude, elevationM: body.position.elevationM ?? null } } : {}),
          ...(body.geometry !== undefined ? { geometry: body.geometry } : {}),
          ...(body.label !== undefined ? { label: body.label } : {}),
        },
        { apiKeyId: auth.apiKeyId },
        nowMs,
      );
      return { status: 200, body: toObjectView(o) };
    }),
    defineRoute({
      method: 'DELETE',
      path: `${BASE}/{object_id}`,
      operationId: 'deleteObject',
      summary: 'Delete an object (manual or robot; a robot that sees it again reports a new one).',
      tags,
      auth: 'robots:write',
      params: ObjectPathParams,
      responses: { 204: { description: 'Deleted.' } },
      errors: [...fleetErrors, 'object_not_found'],
    }).handle(async ({ auth, params, nowMs }) => {
      const fleet = fleetFromPath(identity, auth, params);
      await objects.remove(fleet.fleetId, params.object_id, { apiKeyId: auth.apiKeyId }, nowMs);
      return { status: 204, body: null };
    }),
  ];
}
