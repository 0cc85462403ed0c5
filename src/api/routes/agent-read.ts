/**
 * The Agent read tools (spec: Agent API, read tools): `query-entities`, `get-entity` and `resolve`
 * over the entity kind registry (src/api/entities), `get-map-context` and `explain-capability`.
 * `get-runtime-status` lives with the live mission routes (mission-runtime.ts).
 */
import type { LatestSnapshots } from '../../telemetry/snapshots/index.js';
import { requireFleet, requireOrg, requirePermission } from '../../auth/access.js';
import { apiError } from '../../errors/catalog.js';
import { fieldRulesOf } from '../../fleet/safety/field-rules/index.js';
import { objectsOf } from '../../fleet/site/objects/object-store.js';
import { listFeatures } from '../../missions/catalog/features.js';
import { robotsOf } from '../../store/identity.js';
import { defineRoute, type ContextFor } from '../define-route.js';
import type { KindDeps } from '../entities/kind.js';
import { EntityReader } from '../entities/reader.js';
import { permissionTable } from '../entities/registry.js';
import { parseSchema } from '../entities/kinds/robot.js';
import { robotCapabilities, snapshotOf } from '../entities/robot-live.js';
import {
  EntityDetail,
  GetEntityBody,
  QueryEntitiesBody,
  QueryEntitiesResponse,
  ResolveBody,
  ResolveResponse,
  type QueryEntitiesBody as QueryBody,
} from '../entities/schemas.js';
import type { RouteDef } from '../route.js';
import {
  ExplainCapabilityBody,
  ExplainCapabilityResponse,
  MAX_MAP_FEATURES,
  MAX_MAP_ROBOTS,
  MapContextBody,
  MapContextResponse,
} from '../schemas/agent-read.js';
import { KIB } from '../schemas/body-bounds.js';
import { SMALL_BODY_MAX_BYTES } from '../schemas/control-robot.js';

const FLEET_ERRORS = ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'forbidden_permission'] as const;

/** The read tool routes. */
export function agentReadRoutes(given: Omit<KindDeps, 'snapshots'> & { snapshots: LatestSnapshots }): RouteDef[] {
  // A page of robots polled faster than they report skips the snapshot decode (one entry per robot).
  const deps: KindDeps = { ...given, snapshots: given.snapshots.cached(10_000) };
  const reader = new EntityReader(deps);
  const { store, identity, link, missions, advertised } = deps;

  function mapContext(ctx: ContextFor<undefined, undefined, typeof MapContextBody>): { status: 200; body: MapContextResponse } {
    const { body, auth } = ctx;
    const include = new Set(body.include);
    if (include.has('robots') || include.has('objects')) requirePermission(auth, 'robots:read');
    if (include.has('features') || include.has('field_rules')) requirePermission(auth, 'features:read');
    if (body.bbox !== undefined) {
      const [minLon, minLat, maxLon, maxLat] = body.bbox as [number, number, number, number];
      for (const [i, v] of [[1, minLat], [3, maxLat]] as const) {
        if (v < -90 || v > 90) throw apiError('invalid_body', { detail: `bbox[${i}] must be a latitude in [-90, 90]` });
      }
      if (minLon > maxLon || minLat > maxLat) throw apiError('invalid_body', { detail: 'bbox must be [min_longitude, min_latitude, max_longitude, max_latitude] with min <= max' });
    }
    requireOrg(auth, body.org_id);
    const fleet = requireFleet(identity, auth, body.fleet_id);
    const out: MapContextResponse = { bbox_applied: false, truncated: [] };
    if (include.has('robots')) {
      const page = robotsOf(store, fleet.fleetId, (r) => r.active).page(null, MAX_MAP_ROBOTS);
      out.robots = page.items.map((r) => {
        const snap = snapshotOf(deps, r.robotId);
        return {
          robot_id: r.robotId,
          name: r.name,
          latitude: snap?.latitude ?? null,
          longitude: snap?.longitude ?? null,
          elevation_m: snap?.elevationM ?? null,
          online: link.isOnline(r.robotId),
        };
      });
      if (page.more) out.truncated.push('robots');
    }
    if (include.has('features')) {
      const all = listFeatures(store, fleet.fleetId);
      out.features = all.slice(0, MAX_MAP_FEATURES).map((f) => ({ feature_id: f.featureId, name: f.name, geometry: f.geometry, locked: f.locked }));
      if (all.length > MAX_MAP_FEATURES) out.truncated.push('features');
    }
    if (include.has('field_rules')) {
      const page = fieldRulesOf(store, fleet.fleetId).page(null, MAX_MAP_FEATURES);
      out.field_rules = page.items.map((r) => ({ directive_id: r.directiveId, name: r.name, type: r.type, enabled: r.enabled, geometry: r.geometry }));
      if (page.more) out.truncated.push('field_rules');
    }
    if (include.has('objects')) {
      const page = objectsOf(store, fleet.fleetId).page(null, MAX_MAP_ROBOTS);
      out.objects = page.items.map((o) => ({
        object_id: o.objectId, object_class: o.objectClass, latitude: o.position.latitude, longitude: o.position.longitude, elevation_m: o.position.elevationM, geometry: o.geometry,
      }));
      if (page.more) out.truncated.push('objects');
    }
    return { status: 200, body: out };
  }

  function explainCapability(ctx: ContextFor<undefined, undefined, typeof ExplainCapabilityBody>): { status: 200; body: ExplainCapabilityResponse } {
    const { body, auth } = ctx;
    requireOrg(auth, body.org_id);
    const fleet = requireFleet(identity, auth, body.fleet_id);
    const byAction = new Map<string, ExplainCapabilityResponse['items'][number]['robots']>();
    if (body.capability !== undefined) byAction.set(body.capability, []);
    const withoutPolicy: string[] = [];
    for (const r of robotsOf(store, fleet.fleetId, (x) => x.active).page(null, Number.MAX_SAFE_INTEGER).items) {
      const online = link.isOnline(r.robotId);
      if (body.online !== undefined && online !== body.online) continue;
      const p = advertised.get(r.robotId);
      if (!p?.policy) withoutPolicy.push(r.robotId);
      const available = online && missions.tracker.activeRunOf(r.robotId) === undefined;
      // The same capabilities query-entities lists; the policy says which are invocable and how.
      const actions = new Map((p?.policy?.actions ?? []).map((a) => [a.name, a]));
      for (const capability of robotCapabilities(deps, r)) {
        if (body.capability !== undefined && capability !== body.capability) continue;
        const a = actions.get(capability);
        let list = byAction.get(capability);
        if (!list) byAction.set(capability, (list = []));
        list.push({
          robot_id: r.robotId, name: r.name, online, available,
          invocable: a !== undefined,
          arguments_schema: a ? parseSchema(a.argumentsSchemaJson) : null,
          advertised_at_ms: p !== undefined && (a !== undefined || p.capabilities.includes(capability)) ? p.advertisedAtMs : null,
        });
      }
    }
    const items = [...byAction.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([capability, robots]) => ({ capability, robots }));
    return { status: 200, body: { items, robots_without_policy: withoutPolicy } };
  }

  const post = { method: 'POST', tags: ['Agent API'] } as const;
  return [
    defineRoute({
      ...post,
      path: '/v1/agent/query-entities',
      effect: 'read',
      operationId: 'queryEntities',
      summary: `List entities of one kind (keyset pages) or several kinds at once (unpaged). Permission per kind: ${permissionTable()}.`,
      auth: 'any',
      body: QueryEntitiesBody,
      maxBodyBytes: 8 * KIB,
      responses: { 200: { description: 'One page of one kind, or the items of several kinds with a report per kind.', schema: QueryEntitiesResponse } },
      errors: [...FLEET_ERRORS, 'invalid_body', 'cursor_invalid'],
    }).handle(({ auth, body }) => ({ status: 200, body: reader.query(auth, body as QueryBody) })),
    defineRoute({
      ...post,
      path: '/v1/agent/get-entity',
      effect: 'read',
      operationId: 'getEntity',
      summary: 'One entity in detail: a robot (identity, live state, capability descriptors, current settings, assignments), feature, operation, mission template, field rule or object.',
      auth: 'any',
      body: GetEntityBody,
      maxBodyBytes: SMALL_BODY_MAX_BYTES,
      responses: { 200: { description: 'The detailed record; `kind` says which.', schema: EntityDetail } },
      errors: [...FLEET_ERRORS, 'missing_field', 'robot_not_found', 'feature_not_found', 'template_not_found', 'operation_not_found', 'entity_not_found', 'field_rule_not_found', 'object_not_found'],
    }).handle(({ auth, body }) => ({ status: 200, body: reader.get(auth, body) })),
    defineRoute({
      ...post,
      path: '/v1/agent/resolve',
      effect: 'read',
      operationId: 'resolve',
      summary: 'Names to ids: exact matches first, then case-insensitive ones; an ambiguous name returns every match.',
      auth: 'any',
      body: ResolveBody,
      maxBodyBytes: 256 * KIB,
      responses: { 200: { description: 'The matches, and the names that matched nothing.', schema: ResolveResponse } },
      errors: [...FLEET_ERRORS],
    }).handle(({ auth, body }) => ({ status: 200, body: reader.resolve(auth, body) })),
    defineRoute({
      ...post,
      path: '/v1/agent/get-map-context',
      effect: 'read',
      operationId: 'getMapContext',
      summary: 'Feature geometry and robot positions of the whole fleet (bbox is validated, not applied).',
      auth: 'operations:read',
      body: MapContextBody,
      maxBodyBytes: SMALL_BODY_MAX_BYTES,
      responses: { 200: { description: 'The included parts.', schema: MapContextResponse } },
      errors: [...FLEET_ERRORS, 'invalid_body'],
    }).handle(mapContext),
    defineRoute({
      ...post,
      path: '/v1/agent/explain-capability',
      effect: 'read',
      operationId: 'explainCapability',
      summary: 'Which robots have a capability (the capabilities query-entities lists: registered plus advertised), online and available or not, whether their policy lets invoke_action call it and the arguments it accepts.',
      auth: 'robots:read',
      body: ExplainCapabilityBody,
      maxBodyBytes: SMALL_BODY_MAX_BYTES,
      responses: { 200: { description: 'Per action, its robots.', schema: ExplainCapabilityResponse } },
      errors: [...FLEET_ERRORS],
    }).handle(explainCapability),
  ];
}
