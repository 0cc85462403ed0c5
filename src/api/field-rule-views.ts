/**
 * The published views of field rules and the answer to a change (shared by `upsert-field-rule`,
 * `control-feature` and `DELETE …/field-rules/{directive_id}`): the success status when every
 * online robot applied the new set, else 207 `partial_failure` with each online robot's outcome.
 */
import { apiError, ERROR_CATALOG } from '../errors/catalog.js';
import { unacknowledged, type FieldRuleChange, type FieldRuleRecord } from '../fleet/safety/field-rules/index.js';
import type { FieldRuleChangeResult, FieldRulePartialResult, FieldRuleView } from './schemas/field-rules.js';

/** The public view of a rule. */
export function fieldRuleView(r: FieldRuleRecord): FieldRuleView {
  return {
    directiveId: r.directiveId,
    name: r.name,
    type: r.type,
    geometry: r.geometry,
    parameters: {
      ...(r.parameters.maxSpeedMps !== undefined ? { maxSpeedMps: r.parameters.maxSpeedMps } : {}),
      ...(r.parameters.waitS !== undefined ? { waitS: r.parameters.waitS } : {}),
    },
    enabled: r.enabled,
    ruleSetVersion: r.ruleSetVersion,
    createdAtMs: r.createdAtMs,
    updatedAtMs: r.updatedAtMs,
  };
}

/** The answer to a change: `ok` when every online robot applied it, else 207. */
export function changeAnswer<S extends 200 | 201>(
  change: FieldRuleChange,
  ok: S,
): { status: S; body: FieldRuleChangeResult } | { status: 207; body: FieldRulePartialResult } {
  const delivery = {
    ruleSetVersion: change.delivery.ruleSetVersion,
    robots: change.delivery.robots.map((r) => ({ robotId: r.robotId, outcome: r.outcome, error: r.error })),
  };
  const missing = unacknowledged(change.delivery);
  if (missing.length === 0) return { status: ok, body: { success: true, fieldRule: fieldRuleView(change.rule), delivery } };
  const err = apiError('field_rule_delivery_incomplete', {
    directiveId: change.rule.directiveId,
    missing: missing.length,
    online: change.delivery.robots.length,
    version: change.delivery.ruleSetVersion,
  });
  return {
    status: 207,
    body: { error: err.message, code: ERROR_CATALOG.field_rule_delivery_incomplete.code, details: delivery, fieldRule: fieldRuleView(change.rule) },
  };
}
