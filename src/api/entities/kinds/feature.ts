/** Kind `feature`: the fleet's work areas, by feature_id; `get-entity` adds the geometry and the templates using it. */
import { Type, type Static } from '@sinclair/typebox';
import { featuresOf, listFeatures, requireFeature } from '../../../missions/catalog/features.js';
import { listTemplates } from '../../../missions/catalog/templates.js';
import type { FeatureRecord } from '../../../missions/catalog/records.js';
import { Nullable, Uuid } from '../../schemas/common.js';
import { GeometrySchema } from '../../schemas/features.js';
import { named } from '../../schemas/named.js';
import { defineKind } from '../kind.js';
import { AGENT_LIST_LIMIT, KindTag } from './common.js';

const common = {
  feature_id: Uuid,
  name: Type.String(),
  locked: Type.Boolean({ description: 'No run is dispatched on a locked feature.' }),
  lock_reason: Nullable(Type.String()),
  holders: Type.Array(Uuid, { description: 'Robots currently working in the area.' }),
  decomposition_epoch: Type.Integer(),
  updated_at_ms: Type.Integer(),
};

export const FeatureItem = named('FeatureEntityItem', Type.Object({ kind: KindTag('feature'), ...common }, { additionalProperties: false }));
type FeatureItem = Static<typeof FeatureItem>;

export const FeatureDetail = named('FeatureEntity', Type.Object(
  {
    kind: KindTag('feature'),
    ...common,
    geometry: GeometrySchema,
    created_at_ms: Type.Integer(),
    mission_ids: Type.Array(Uuid, { description: 'Mission templates working on this feature.' }),
  },
  { additionalProperties: false },
));
type FeatureDetail = Static<typeof FeatureDetail>;

function item(f: FeatureRecord): FeatureItem {
  return {
    kind: 'feature',
    feature_id: f.featureId,
    name: f.name,
    locked: f.locked,
    lock_reason: f.lockReason,
    holders: [...f.holders],
    decomposition_epoch: f.decompositionEpoch,
    updated_at_ms: f.updatedAtMs,
  };
}

export const featureKind = defineKind<FeatureRecord, FeatureItem, FeatureDetail>({
  name: 'feature',
  permission: 'features:read',
  describe: 'the fleet\'s features (work areas), by feature_id; filter locked',
  filters: {
    locked: Type.Boolean({ description: 'Only locked (true) or unlocked (false) features.' }),
  },
  limit: AGENT_LIST_LIMIT,
  item: FeatureItem,
  source(deps, fleet, f) {
    const locked = f.locked as boolean | undefined;
    return featuresOf(deps.store, fleet.fleetId, locked === undefined ? undefined : (x) => x.locked === locked);
  },
  view: (_deps, f) => item(f),
  detail: {
    schema: FeatureDetail,
    get(deps, fleet, id) {
      const f = requireFeature(deps.store, fleet.fleetId, id!);
      return {
        ...item(f),
        geometry: f.geometry,
        created_at_ms: f.createdAtMs,
        mission_ids: listTemplates(deps.store, fleet.fleetId).filter((t) => t.featureId === f.featureId).map((t) => t.missionId),
      };
    },
  },
  *names(deps, fleet) {
    for (const f of listFeatures(deps.store, fleet.fleetId)) yield { id: f.featureId, name: f.name };
  },
});
