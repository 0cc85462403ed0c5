/**
 * Kinds the interface names whose modules are being built on other branches: `field_rule`
 * (src/fleet/field-rules), `fault` (src/fleet/faults) and `object` (src/fleet/objects). Until each
 * module's list and get functions are merged, reading the kind answers 503 `kind_not_served`
 * (never an empty list that would pretend the fleet has none). Each is replaced by its own kind file
 * (like feature.ts) once its module exists: filters, keyset source, item and detail views.
 */
import { apiError } from '../../../errors/catalog.js';
import type { Permission } from '../../../auth/permissions.js';
import { defineKind, type AnyKind, type KindName } from '../kind.js';
import { AGENT_LIST_LIMIT } from './common.js';

function notServed(name: KindName, permission: Permission, module: string, gets: boolean): AnyKind {
  const refuse = (): never => {
    throw apiError('kind_not_served', { kind: name, detail: `its module (${module}) is not part of this gateway build yet` });
  };
  return defineKind<never, never, never>({
    name,
    permission,
    describe: `not served by this build yet: 503 \`kind_not_served\` (module ${module})`,
    filters: {},
    limit: AGENT_LIST_LIMIT,
    item: null,
    source: refuse,
    view: refuse,
    ...(gets ? { detail: { schema: null, get: refuse } } : {}),
  });
}

export const faultKind = notServed('fault', 'robots:read', 'src/fleet/faults', false);
export const fieldRuleKind = notServed('field_rule', 'features:read', 'src/fleet/field-rules', true);
export const objectKind = notServed('object', 'robots:read', 'src/fleet/objects', true);
