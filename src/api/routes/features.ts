/**
 * Features: `…/features` CRUD (nested under `/v1/orgs/{org_id}/fleets/{fleet_id}`) and the
 * `control-feature` Agent tool (lock with an optional reason, unlock, reset).
 */
import { Type } from '@sinclair/typebox';
import type { FieldRuleService } from '../../fleet/safety/field-rules/index.js';
import type { IdempotencyClaims } from '../../idempotency/index.js';
import type { EventLog } from '../../events/index.js';
import { requireFleet, requireOrg } from '../../auth/access.js';
import { apiError } from '../../errors/catalog.js';
import { changeAnswer } from '../field-rule-views.js';
import { FieldRuleChangeResult, FieldRulePartialResult } from '../schemas/field-rules.js';
import { fleetFromPath } from '../fleet-scope.js';
import { defineRoute } from '../define-route.js';
import type { RouteDef } from '../route.js';
import { withIdempotency } from '../../idempotency/index.js';
import {
  createFeature,
  deleteFeature,
  featuresOf,
  lockFeature,
  requireFeature,
  resetFeature,
  unlockFeature,
  updateFeature,
} from '../../missions/catalog/features.js';
import type { FeatureRecord } from '../../missions/catalog/records.js';
import { defineList, type ListQuery } from '../list-reader.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import {
  ControlFeatureBody,
  ControlFeatureResponse,
  FeatureCreateBody,
  FEATURES_LIMIT,
  FeatureListQuery,
  FeatureListResponse,
  FeaturePathParams,
  FeatureUpdateBody,
  FeatureView,
  FleetPathParams,
} from '../schemas/features.js';
import { GEOMETRY_BODY_MAX_BYTES, KIB } from '../schemas/body-bounds.js';

const BASE = '/v1/orgs/{org_id}/fleets/{fleet_id}/features';

/** The public view of a feature. */
export function featureView(f: FeatureRecord): FeatureView {
  return {
    featureId: f.featureId,
    name: f.name,
    geometry: f.geometry,
    locked: f.locked,
    lockReason: f.lockReason,
    holders: f.holders,
    decompositionEpoch: f.decompositionEpoch,
    createdAtMs: f.createdAtMs,
    updatedAtMs: f.updatedAtMs,
  };
}

/** Feature routes. */
export function featureRoutes(deps: { store: Store; identity: IdentityReads; events: EventLog; idempotency: IdempotencyClaims; fieldRules: FieldRuleService }): RouteDef[] {
  const { store, identity, events, idempotency, fieldRules } = deps;
  const tags = ['Features'];
  const featureList = defineList<ListQuery & FeatureListQuery, FeatureRecord, FeatureListResponse['items'][number]>({
    kind: 'features',
    limit: FEATURES_LIMIT,
    filters: () => ({}),
    source: (fleet) => featuresOf(store, fleet.fleetId),
    view: (f) => ({ featureId: f.featureId, name: f.name, locked: f.locked }),
  });
  return [
    defineRoute({
      method: 'GET',
      path: BASE,
      operationId: 'listFeatures',
      summary: 'The fleet\'s features.',
      tags,
      auth: 'features:read',
      params: FleetPathParams,
      query: FeatureListQuery,
      responses: { 200: { description: 'Features, ordered by id.', schema: FeatureListResponse } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'cursor_invalid'],
    }).handle(({ auth, params, query }) => ({ status: 200, body: featureList.read(identity, auth, { ...params, ...query }) })),
    defineRoute({
      method: 'POST',
      path: BASE,
      operationId: 'createFeature',
      summary: 'Create a feature from a GeoJSON Polygon or MultiPolygon. An Idempotency-Key header is honoured when sent.',
      tags,
      auth: 'features:write',
      params: FleetPathParams,
      body: FeatureCreateBody,
      maxBodyBytes: GEOMETRY_BODY_MAX_BYTES,
      idempotencyKey: 'optional',
      responses: { 201: { description: 'Created; the server minted featureId.', schema: FeatureView } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'invalid_geometry', 'idempotency_key_invalid', 'idempotency_in_progress'],
    }).handle(
      (ctx) => {
        const fleet = fleetFromPath(identity, ctx.auth, ctx.params);
        return withIdempotency(
          idempotency,
          { actor: ctx.auth.apiKeyId, orgId: fleet.orgId, fleetId: fleet.fleetId, endpoint: `POST ${BASE}` },
          ctx.idempotencyKey,
          ctx.body,
          async () => ({ status: 201, body: featureView(await createFeature(store, events, fleet, ctx.body, ctx.nowMs)) }),
          { required: false },
        );
      },
    ),
    defineRoute({
      method: 'GET',
      path: `${BASE}/{feature_id}`,
      operationId: 'getFeature',
      summary: 'One feature with its geometry.',
      tags,
      auth: 'features:read',
      params: FeaturePathParams,
      responses: { 200: { description: 'The feature.', schema: FeatureView } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'feature_not_found'],
    }).handle(
      ({ auth, params }) => {
        const fleet = fleetFromPath(identity, auth, params);
        return { status: 200, body: featureView(requireFeature(store, fleet.fleetId, params.feature_id)) };
      },
    ),
    defineRoute({
      method: 'PUT',
      path: `${BASE}/{feature_id}`,
      operationId: 'updateFeature',
      summary: 'Edit a feature\'s name and/or geometry; omitted fields are kept.',
      tags,
      auth: 'features:write',
      params: FeaturePathParams,
      body: FeatureUpdateBody,
      maxBodyBytes: GEOMETRY_BODY_MAX_BYTES,
      responses: { 200: { description: 'The edited feature.', schema: FeatureView } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'feature_not_found', 'invalid_geometry'],
    }).handle(
      async ({ auth, params, body, nowMs }) => {
        const fleet = fleetFromPath(identity, auth, params);
        return { status: 200, body: featureView(await updateFeature(store, events, fleet.fleetId, params.feature_id, body, nowMs)) };
      },
    ),
    defineRoute({
      method: 'DELETE',
      path: `${BASE}/{feature_id}`,
      operationId: 'deleteFeature',
      summary: 'Delete a feature; 409 while a mission template uses it.',
      tags,
      auth: 'features:write',
      params: FeaturePathParams,
      responses: { 204: { description: 'Deleted.' } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'feature_not_found', 'feature_in_use'],
    }).handle(
      async ({ auth, params, nowMs }) => {
        const fleet = fleetFromPath(identity, auth, params);
        await deleteFeature(store, events, fleet.fleetId, params.feature_id, nowMs);
        return { status: 204, body: null };
      },
    ),
    defineRoute({
      method: 'POST',
      path: '/v1/agent/control-feature',
      // reset clears holders and restarts decomposition.
      effect: { changes: 'destructive', idempotent: false },
      operationId: 'controlFeature',
      summary: 'Lock (optional lock_reason), unlock or reset (clear holders, restart decomposition) a feature; no run is dispatched on a locked feature. ' +
        'Enable or disable a field rule (directive_id): the fleet\'s new rule set is sent to its online robots and awaited as by upsert-field-rule.',
      tags: ['Agent API'],
      auth: 'features:write',
      body: ControlFeatureBody,
      maxBodyBytes: 8 * KIB,
      responses: {
        200: {
          description: 'The feature after the action (lock, unlock, reset), or the field rule and its delivery (enable_field_rule, disable_field_rule: every online robot applied it).',
          schema: Type.Union([ControlFeatureResponse, FieldRuleChangeResult]),
        },
        207: { description: 'enable_field_rule / disable_field_rule: saved, but not every online robot applied the new rule set (code `partial_failure`).', schema: FieldRulePartialResult },
      },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'feature_not_found', 'field_rule_not_found', 'missing_field', 'action_field_unexpected', 'field_rule_delivery_incomplete'],
    }).handle(
      async ({ auth, body, nowMs }) => {
        requireOrg(auth, body.org_id);
        const fleet = requireFleet(identity, auth, body.fleet_id);
        const { action } = body;
        if (action === 'enable_field_rule' || action === 'disable_field_rule') {
          if (body.directive_id === undefined) throw apiError('missing_field', { action, field: 'directive_id' });
          if (body.feature_id !== undefined) throw apiError('action_field_unexpected', { action, field: 'feature_id' });
          if (body.lock_reason !== undefined) throw apiError('action_field_unexpected', { action, field: 'lock_reason' });
          return changeAnswer(await fieldRules.setEnabled(fleet, body.directive_id, action === 'enable_field_rule', nowMs), 200);
        }
        if (body.directive_id !== undefined) throw apiError('action_field_unexpected', { action, field: 'directive_id' });
        if (body.feature_id === undefined) throw apiError('missing_field', { action, field: 'feature_id' });
        if (body.lock_reason !== undefined && action !== 'lock') throw apiError('invalid_body', { detail: 'lock_reason is accepted only with action lock' });
        const f = action === 'lock'
          ? await lockFeature(store, events, fleet.fleetId, body.feature_id, body.lock_reason ?? null, nowMs)
          : action === 'unlock'
            ? await unlockFeature(store, events, fleet.fleetId, body.feature_id, nowMs)
            : await resetFeature(store, events, fleet.fleetId, body.feature_id, nowMs);
        const res: ControlFeatureResponse = { success: true, action, feature: featureView(f) };
        return { status: 200, body: res };
      },
    ),
  ];
}
