/**
 * Field rules: the `upsert-field-rule` Agent tool and the nested REST routes to list, read and
 * delete (`/v1/orgs/{org_id}/fleets/{fleet_id}/field-rules`). Enable / disable is `control-feature`
 * (src/api/routes/features.ts). Every change is published to the fleet's online robots before the
 * answer: 201/200 when each applied it, 207 `partial_failure` otherwise (docs/field-rules.md).
 */
import { requireFleet, requireOrg } from '../../auth/access.js';
import { fieldRulesOf, requireFieldRule, type FieldRuleRecord, type FieldRuleService } from '../../fleet/safety/field-rules/index.js';
import { withIdempotency, type IdempotencyClaims } from '../../idempotency/index.js';
import type { Store } from '../../store/lmdb.js';
import type { IdentityReads } from '../../store/identity-reads.js';
import type { FleetRecord } from '../../store/records.js';
import { defineRoute } from '../define-route.js';
import { changeAnswer, fieldRuleView } from '../field-rule-views.js';
import { fleetFromPath } from '../fleet-scope.js';
import { defineList, type ListQuery } from '../list-reader.js';
import type { RouteDef } from '../route.js';
import { FleetPathParams } from '../schemas/features.js';
import {
  FieldRuleChangeResult,
  FieldRuleListQuery,
  FieldRuleListResponse,
  FieldRulePartialResult,
  FieldRulePathParams,
  FIELD_RULES_LIMIT,
  FieldRuleView,
  UpsertFieldRuleBody,
} from '../schemas/field-rules.js';
import { GEOMETRY_BODY_MAX_BYTES } from '../schemas/body-bounds.js';

const BASE = '/v1/orgs/{org_id}/fleets/{fleet_id}/field-rules';

/** Field rule routes. */
export function fieldRuleRoutes(deps: { store: Store; identity: IdentityReads; fieldRules: FieldRuleService; idempotency: IdempotencyClaims }): RouteDef[] {
  const { store, identity, fieldRules, idempotency } = deps;
  const tags = ['Field rules'];
  const ruleList = defineList<ListQuery & FieldRuleListQuery, FieldRuleRecord, FieldRuleView>({
    kind: 'field-rules',
    limit: FIELD_RULES_LIMIT,
    filters: (q) => ({ enabled: q.enabled ?? null, type: q.type ?? null }),
    source: (fleet, q) => fieldRulesOf(store, fleet.fleetId, {
      ...(q.enabled !== undefined ? { enabled: q.enabled } : {}),
      ...(q.type !== undefined ? { type: q.type } : {}),
    }),
    view: fieldRuleView,
  });
  const upsert = async (fleet: FleetRecord, body: UpsertFieldRuleBody, nowMs: number) => {
    const f = body.field_rule;
    const input = {
      name: f.name,
      type: f.type,
      geometry: f.geometry,
      parameters: {
        ...(f.parameters.max_speed_mps !== undefined ? { maxSpeedMps: f.parameters.max_speed_mps } : {}),
        ...(f.parameters.wait_s !== undefined ? { waitS: f.parameters.wait_s } : {}),
      },
      ...(f.enabled !== undefined ? { enabled: f.enabled } : {}),
    };
    const change = await fieldRules.upsert(fleet, body.directive_id, input, nowMs);
    return body.directive_id === undefined ? changeAnswer(change, 201) : changeAnswer(change, 200);
  };
  const partial = { description: 'Saved, but not every online robot of the fleet applied the new rule set (code `partial_failure`); `details.robots` has each online robot\'s outcome.', schema: FieldRulePartialResult };
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/agent/upsert-field-rule',
      // with directive_id it replaces a rule; without an Idempotency-Key a repeat creates a second one.
      effect: { changes: 'destructive', idempotent: false },
      operationId: 'upsertFieldRule',
      summary: 'Create (without directive_id; the server mints it) or replace (with directive_id) a field rule, then send the fleet\'s rule set to its online robots and wait for each to apply it. ' +
        'An Idempotency-Key header is honoured when sent (a retried create then answers the first answer instead of creating a second rule).',
      tags: ['Agent API'],
      auth: 'features:write',
      body: UpsertFieldRuleBody,
      maxBodyBytes: GEOMETRY_BODY_MAX_BYTES,
      idempotencyKey: 'optional',
      responses: {
        200: { description: 'Edited and applied by every online robot.', schema: FieldRuleChangeResult },
        201: { description: 'Created and applied by every online robot.', schema: FieldRuleChangeResult },
        207: partial,
      },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'field_rule_not_found', 'invalid_geometry', 'field_rule_limit', 'field_rule_delivery_incomplete'],
    }).handle(async ({ auth, body, nowMs, idempotencyKey }) => {
      requireOrg(auth, body.org_id);
      const fleet = requireFleet(identity, auth, body.fleet_id);
      const scope = { actor: auth.apiKeyId, orgId: fleet.orgId, fleetId: fleet.fleetId, endpoint: 'POST /v1/agent/upsert-field-rule' };
      return withIdempotency(idempotency, scope, idempotencyKey, body, () => upsert(fleet, body, nowMs), { required: false });
    }),
    defineRoute({
      method: 'GET',
      path: BASE,
      operationId: 'listFieldRules',
      summary: 'The fleet\'s field rules, optionally only enabled or disabled ones, or one type.',
      tags,
      auth: 'features:read',
      params: FleetPathParams,
      query: FieldRuleListQuery,
      responses: { 200: { description: 'Field rules, ordered by directiveId.', schema: FieldRuleListResponse } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'cursor_invalid'],
    }).handle(({ auth, params, query }) => ({ status: 200, body: ruleList.read(identity, auth, { ...params, ...query }) })),
    defineRoute({
      method: 'GET',
      path: `${BASE}/{directive_id}`,
      operationId: 'getFieldRule',
      summary: 'One field rule with its geometry and parameters.',
      tags,
      auth: 'features:read',
      params: FieldRulePathParams,
      responses: { 200: { description: 'The field rule.', schema: FieldRuleView } },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'field_rule_not_found'],
    }).handle(({ auth, params }) => {
      const fleet = fleetFromPath(identity, auth, params);
      return { status: 200, body: fieldRuleView(requireFieldRule(store, fleet.fleetId, params.directive_id)) };
    }),
    defineRoute({
      method: 'DELETE',
      path: `${BASE}/{directive_id}`,
      operationId: 'deleteFieldRule',
      summary: 'Delete a field rule, then send the fleet\'s rule set without it to its online robots and wait for each to apply it.',
      tags,
      auth: 'features:write',
      params: FieldRulePathParams,
      responses: {
        200: { description: 'Deleted and the new set applied by every online robot; `fieldRule` is the rule as it was.', schema: FieldRuleChangeResult },
        207: partial,
      },
      errors: ['forbidden_org', 'fleet_not_found', 'forbidden_fleet', 'field_rule_not_found', 'field_rule_delivery_incomplete'],
    }).handle(async ({ auth, params, nowMs }) => {
      const fleet = fleetFromPath(identity, auth, params);
      return changeAnswer(await fieldRules.remove(fleet, params.directive_id, nowMs), 200);
    }),
  ];
}
