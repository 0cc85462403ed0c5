/**
 * Kind `mission_template`: the fleet's mission templates, by mission_id; filters enabled, capability
 * and feature_id. `get-entity` adds steps, parameters, prerequisites and the roster.
 */
import { Type, type Static } from '@sinclair/typebox';
import { listTemplates, requireTemplate, templatesOf } from '../../../missions/catalog/templates.js';
import type { TemplateRecord } from '../../../missions/catalog/records.js';
import { FreeForm, Nullable, Uuid } from '../../schemas/common.js';
import { named } from '../../schemas/named.js';
import { defineKind } from '../kind.js';
import { AGENT_LIST_LIMIT, CapabilityFilter, EnabledFilter, KindTag } from './common.js';

const common = {
  mission_id: Uuid,
  name: Type.String(),
  feature_id: Nullable(Uuid),
  enabled: Type.Boolean({ description: 'Whether dispatch is enabled.' }),
  capabilities: Type.Array(Type.String(), { description: 'Capabilities a robot must advertise to take the template.' }),
  roster: Type.Array(Uuid, { description: 'Robots allowed to take it; empty: every active robot of the fleet.' }),
  priority: Type.Integer(),
  version: Type.Integer(),
  updated_at_ms: Type.Integer(),
};

export const MissionTemplateItem = named('MissionTemplateEntityItem', Type.Object({ kind: KindTag('mission_template'), ...common }, { additionalProperties: false }));
type MissionTemplateItem = Static<typeof MissionTemplateItem>;

export const MissionTemplateDetail = named('MissionTemplateEntity', Type.Object(
  {
    kind: KindTag('mission_template'),
    ...common,
    steps: Type.Array(Type.Object({ step_id: Type.String(), kind: Type.String(), config: FreeForm() }, { additionalProperties: false })),
    parameters: FreeForm(),
    prerequisites: Type.Object(
      { min_battery_pct: Nullable(Type.Number()), requires_docked: Nullable(Type.Boolean()) },
      { additionalProperties: false, description: 'Checked before dispatch; null: not required.' },
    ),
    created_at_ms: Type.Integer(),
  },
  { additionalProperties: false },
));
type MissionTemplateDetail = Static<typeof MissionTemplateDetail>;

function item(t: TemplateRecord): MissionTemplateItem {
  return {
    kind: 'mission_template',
    mission_id: t.missionId,
    name: t.name,
    feature_id: t.featureId,
    enabled: t.enabled,
    capabilities: [...t.capabilities],
    roster: [...t.roster],
    priority: t.priority,
    version: t.version,
    updated_at_ms: t.updatedAtMs,
  };
}

export const missionTemplateKind = defineKind<TemplateRecord, MissionTemplateItem, MissionTemplateDetail>({
  name: 'mission_template',
  permission: 'missions:read',
  describe: 'the fleet\'s mission templates, by mission_id; filters enabled, capability, feature_id',
  filters: {
    enabled: EnabledFilter,
    capability: CapabilityFilter,
    feature_id: Uuid,
  },
  limit: AGENT_LIST_LIMIT,
  item: MissionTemplateItem,
  source(deps, fleet, f) {
    const { enabled, capability, feature_id: featureId } = f as { enabled?: boolean; capability?: string; feature_id?: string };
    return templatesOf(deps.store, fleet.fleetId, (t) =>
      (enabled === undefined || t.enabled === enabled)
      && (capability === undefined || t.capabilities.includes(capability))
      && (featureId === undefined || t.featureId === featureId));
  },
  view: (_deps, t) => item(t),
  detail: {
    schema: MissionTemplateDetail,
    get(deps, fleet, id) {
      const t = requireTemplate(deps.store, fleet.fleetId, id!);
      return {
        ...item(t),
        steps: t.steps.map((s) => ({ step_id: s.stepId, kind: s.kind, config: s.config })),
        parameters: t.parameters,
        prerequisites: { min_battery_pct: t.prerequisites.minBatteryPct ?? null, requires_docked: t.prerequisites.requiresDocked ?? null },
        created_at_ms: t.createdAtMs,
      };
    },
  },
  *names(deps, fleet) {
    for (const t of listTemplates(deps.store, fleet.fleetId)) yield { id: t.missionId, name: t.name };
  },
});
