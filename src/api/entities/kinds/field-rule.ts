/**
 * Kind `field_rule`: the fleet's field rules (src/fleet/safety/field-rules), by directive_id; filters
 * enabled and type. `get-entity` adds the zone's geometry.
 */
import { Type, type Static } from '@sinclair/typebox';
import { FIELD_RULE_TYPES, fieldRulesOf, requireFieldRule, type FieldRuleRecord, type FieldRuleType } from '../../../fleet/safety/field-rules/index.js';
import { Nullable, Uuid } from '../../schemas/common.js';
import { GeometrySchema } from '../../schemas/features.js';
import { named } from '../../schemas/named.js';
import { defineKind } from '../kind.js';
import { AGENT_LIST_LIMIT, EnabledFilter, KindTag } from './common.js';

const TypeSchema = Type.Unsafe<FieldRuleType>({ type: 'string', enum: [...FIELD_RULE_TYPES] });

const common = {
  directive_id: Uuid,
  name: Type.String(),
  type: TypeSchema,
  enabled: Type.Boolean(),
  max_speed_mps: Nullable(Type.Number({ description: 'speed_limit: the cap inside the zone.' })),
  wait_s: Nullable(Type.Number({ description: 'stop_and_wait: how long a robot stays stopped.' })),
  rule_set_version: Type.Integer({ description: 'The fleet\'s rule set version this rule\'s last change produced.' }),
  updated_at_ms: Type.Integer(),
};

export const FieldRuleItem = named('FieldRuleEntityItem', Type.Object({ kind: KindTag('field_rule'), ...common }, { additionalProperties: false }));
type FieldRuleItem = Static<typeof FieldRuleItem>;

export const FieldRuleDetail = named('FieldRuleEntity', Type.Object(
  { kind: KindTag('field_rule'), ...common, geometry: GeometrySchema, created_at_ms: Type.Integer() },
  { additionalProperties: false },
));
type FieldRuleDetail = Static<typeof FieldRuleDetail>;

function item(r: FieldRuleRecord): FieldRuleItem {
  return {
    kind: 'field_rule',
    directive_id: r.directiveId,
    name: r.name,
    type: r.type,
    enabled: r.enabled,
    max_speed_mps: r.parameters.maxSpeedMps ?? null,
    wait_s: r.parameters.waitS ?? null,
    rule_set_version: r.ruleSetVersion,
    updated_at_ms: r.updatedAtMs,
  };
}

export const fieldRuleKind = defineKind<FieldRuleRecord, FieldRuleItem, FieldRuleDetail>({
  name: 'field_rule',
  permission: 'features:read',
  describe: 'the fleet\'s field rules, by directive_id; filters enabled, type',
  filters: {
    enabled: EnabledFilter,
    type: Type.Unsafe<FieldRuleType>({ type: 'string', enum: [...FIELD_RULE_TYPES], description: 'Only field rules of this type.' }),
  },
  limit: AGENT_LIST_LIMIT,
  item: FieldRuleItem,
  source(deps, fleet, f) {
    const { enabled, type } = f as { enabled?: boolean; type?: FieldRuleType };
    return fieldRulesOf(deps.store, fleet.fleetId, { ...(enabled !== undefined ? { enabled } : {}), ...(type !== undefined ? { type } : {}) });
  },
  view: (_deps, r) => item(r),
  detail: {
    schema: FieldRuleDetail,
    get(deps, fleet, id) {
      const r = requireFieldRule(deps.store, fleet.fleetId, id!);
      return { ...item(r), geometry: r.geometry, created_at_ms: r.createdAtMs };
    },
  },
});
