/**
 * Kind `operation`: the fleet's one long-lived operation (none until its first mission template);
 * `get-entity` adds its steps (the templates, in priority order). Its id may be left out of
 * `get-entity`: a fleet has exactly one.
 */
import { Type, type Static } from '@sinclair/typebox';
import { apiError } from '../../../errors/catalog.js';
import { getOperation, requireOperation } from '../../../missions/catalog/operation.js';
import type { OperationRecord } from '../../../missions/catalog/records.js';
import { listTemplates } from '../../../missions/catalog/templates.js';
import type { Keyset } from '../../../store/keyset.js';
import { Uuid } from '../../schemas/common.js';
import { named } from '../../schemas/named.js';
import { defineKind } from '../kind.js';
import { AGENT_LIST_LIMIT, KindTag } from './common.js';

const OperationState = Type.Unsafe<'running' | 'paused' | 'stopped'>({ type: 'string', enum: ['running', 'paused', 'stopped'] });

const common = {
  operation_id: Uuid,
  name: Type.String(),
  state: OperationState,
  epoch: Type.Integer({ description: 'Bumped by reset and restart: work of an older epoch is not resumed.' }),
  updated_at_ms: Type.Integer(),
};

export const OperationItem = named('OperationEntityItem', Type.Object({ kind: KindTag('operation'), ...common }, { additionalProperties: false }));
type OperationItem = Static<typeof OperationItem>;

export const OperationDetail = named('OperationEntity', Type.Object(
  {
    kind: KindTag('operation'),
    ...common,
    created_at_ms: Type.Integer(),
    steps: Type.Array(
      Type.Object({ mission_id: Uuid, name: Type.String(), enabled: Type.Boolean(), priority: Type.Integer() }, { additionalProperties: false }),
      { description: 'The fleet\'s mission templates (one per operation step), highest priority first, then by mission_id.' },
    ),
  },
  { additionalProperties: false },
));
type OperationDetail = Static<typeof OperationDetail>;

function item(op: OperationRecord): OperationItem {
  return { kind: 'operation', operation_id: op.operationId, name: op.name, state: op.state, epoch: op.epoch, updated_at_ms: op.updatedAtMs };
}

/** The fleet's operation as a keyset of at most one record (position: its id). */
function operationOf(op: OperationRecord | undefined): Keyset<OperationRecord> {
  return { page: (after) => (op === undefined || after !== null ? { items: [], last: null, more: false } : { items: [op], last: op.operationId, more: false }) };
}

export const operationKind = defineKind<OperationRecord, OperationItem, OperationDetail>({
  name: 'operation',
  permission: 'operations:read',
  describe: 'the fleet\'s one operation (no item before its first mission template)',
  filters: {},
  limit: AGENT_LIST_LIMIT,
  item: OperationItem,
  source: (deps, fleet) => operationOf(getOperation(deps.store, fleet.fleetId)),
  view: (_deps, op) => item(op),
  detail: {
    schema: OperationDetail,
    idOptional: true,
    get(deps, fleet, id) {
      const op = requireOperation(deps.store, fleet.fleetId);
      if (id !== undefined && id !== op.operationId) throw apiError('entity_not_found', { kind: 'operation', id });
      const steps = listTemplates(deps.store, fleet.fleetId)
        .sort((a, b) => b.priority - a.priority || (a.missionId < b.missionId ? -1 : 1))
        .map((t) => ({ mission_id: t.missionId, name: t.name, enabled: t.enabled, priority: t.priority }));
      return { ...item(op), created_at_ms: op.createdAtMs, steps };
    },
  },
  *names(deps, fleet) {
    const op = getOperation(deps.store, fleet.fleetId);
    if (op) yield { id: op.operationId, name: op.name };
  },
});
