/**
 * The entity kinds of the Agent read tools, in one list, and what is derived from it: the filters
 * `query-entities` accepts (each with the kinds that take it), the kinds `get-entity` and `resolve`
 * serve, and the permission table published in the tools' OpenAPI descriptions.
 *
 * A new kind: one file in `kinds/` (kind.ts `defineKind`) and one line in {@link KINDS}.
 */
import type { TSchema } from '@sinclair/typebox';
import { KIND_NAMES, type AnyKind, type KindName } from './kind.js';
import { featureKind } from './kinds/feature.js';
import { missionHistoryKind } from './kinds/mission-history.js';
import { missionTemplateKind } from './kinds/mission-template.js';
import { operationKind } from './kinds/operation.js';
import { faultKind } from './kinds/fault.js';
import { fieldRuleKind } from './kinds/field-rule.js';
import { objectKind } from './kinds/object.js';
import { robotKind } from './kinds/robot.js';
import { scheduledCommandKind } from './kinds/scheduled-command.js';
import { scheduledMissionKind } from './kinds/scheduled-mission.js';

/** Every kind, in the interface's order. */
export const KINDS: readonly AnyKind[] = [
  robotKind,
  featureKind,
  operationKind,
  missionTemplateKind,
  scheduledMissionKind,
  scheduledCommandKind,
  faultKind,
  missionHistoryKind,
  fieldRuleKind,
  objectKind,
];

const BY_NAME = new Map<KindName, AnyKind>(KINDS.map((k) => [k.name, k]));
if (BY_NAME.size !== KIND_NAMES.length || KIND_NAMES.some((n) => !BY_NAME.has(n))) throw new Error('entity registry: every kind of KIND_NAMES needs exactly one kind file');

/** The kind named `name` (validated against KIND_NAMES before it gets here). */
export function kindOf(name: KindName): AnyKind {
  return BY_NAME.get(name)!;
}

/** Kinds `get-entity` serves, in order. */
export const DETAIL_KINDS: readonly KindName[] = KINDS.filter((k) => k.detail !== undefined).map((k) => k.name);

/** Kinds `resolve` matches names of, in order. */
export const RESOLVABLE_KINDS: readonly KindName[] = KINDS.filter((k) => k.names !== undefined || k.lookup !== undefined).map((k) => k.name);

/** One filter of `query-entities`: its schema and the kinds that take it. */
export interface FilterSpec {
  schema: TSchema;
  kinds: KindName[];
}

function collectFilters(): ReadonlyMap<string, FilterSpec> {
  const out = new Map<string, FilterSpec>();
  for (const k of KINDS) {
    for (const [name, schema] of Object.entries(k.filters)) {
      const seen = out.get(name);
      // One name, one meaning: a client reads a filter's schema once, whatever the kind.
      if (seen && seen.schema !== schema) throw new Error(`entity registry: filter ${name} has two schemas (kinds ${seen.kinds.join(', ')} and ${k.name})`);
      if (seen) seen.kinds.push(k.name);
      else out.set(name, { schema, kinds: [k.name] });
    }
  }
  return out;
}

/** Every filter, by body field name. */
export const FILTERS: ReadonlyMap<string, FilterSpec> = collectFilters();

/** The filters as published body properties: each schema's description says which kinds take it. */
export function filterProperties(): Record<string, TSchema> {
  const out: Record<string, TSchema> = {};
  for (const [name, f] of FILTERS) {
    const what = typeof f.schema.description === 'string' ? `${f.schema.description} ` : '';
    out[name] = { ...f.schema, description: `${what}Filter of kind${f.kinds.length > 1 ? 's' : ''} ${f.kinds.join(', ')}.` };
  }
  return out;
}

/** The kind -> permission table, for the tools' descriptions. */
export function permissionTable(names: readonly KindName[] = KIND_NAMES): string {
  return names.map((n) => {
    const k = kindOf(n);
    return `\`${k.name}\` (\`${k.permission}\`): ${k.describe}`;
  }).join('; ');
}
