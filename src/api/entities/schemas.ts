/**
 * Request and response schemas of `query-entities`, `get-entity` and `resolve`, assembled from the
 * kind registry (filters, item and detail schemas, permissions): a new kind changes them by itself.
 */
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { ErrorBody, Nullable, Uuid } from '../schemas/common.js';
import { CursorParam, LimitParam } from '../schemas/list.js';
import { named } from '../schemas/named.js';
import { KIND_NAMES, type KindName } from './kind.js';
import { AGENT_LIST_LIMIT } from './kinds/common.js';
import { DETAIL_KINDS, filterProperties, KINDS, permissionTable, RESOLVABLE_KINDS } from './registry.js';

const kindEnum = <K extends string>(names: readonly K[], description: string) =>
  Type.Unsafe<K>({ type: 'string', enum: [...names], description });

export const KindSchema = named('EntityKind', kindEnum(KIND_NAMES, 'An entity kind of the Agent read tools.'));

/** Most kinds in one `kinds` call (every kind once). */
export const MAX_KINDS = KIND_NAMES.length;

export const QueryEntitiesBody = named('QueryEntitiesRequest', Type.Object(
  {
    org_id: Uuid,
    fleet_id: Uuid,
    kind: Type.Optional(KindSchema),
    kinds: Type.Optional(Type.Array(KindSchema, { minItems: 1, maxItems: MAX_KINDS, description: 'Several kinds at once (each at most `limit` items, not pageable); instead of `kind`.' })),
    cursor: Type.Optional(CursorParam('The previous page\'s `next_cursor`, unchanged: bound to the kind and the exact filters (another query, or a numeric offset: 400). Not with `kinds`.')),
    limit: Type.Optional(LimitParam(AGENT_LIST_LIMIT)),
    ...Object.fromEntries(Object.entries(filterProperties()).map(([k, s]) => [k, Type.Optional(s)])),
  },
  {
    additionalProperties: false,
    description:
      'Exactly one of `kind` (paged with keyset cursors) or `kinds` (several kinds in one answer, not pageable). Filters are body fields; each belongs to ' +
      'the kinds its description names, and a filter no requested kind takes is 400. Each kind needs the read permission of its family: ' +
      `${permissionTable()}.`,
  },
)) as TSchema;
/** The validated body (filters are read by name from the registry). */
export interface QueryEntitiesBody {
  org_id: string;
  fleet_id: string;
  kind?: KindName;
  kinds?: KindName[];
  cursor?: string;
  limit?: number;
  [filter: string]: string | number | boolean | KindName[] | undefined;
}

const items = KINDS.flatMap((k) => (k.item === null ? [] : [k.item]));

export const EntityItem = named('EntityItem', Type.Union(items, { description: 'One entity; `kind` says which.' }));

export const KindReport = named('EntityKindReport', Type.Object(
  {
    kind: KindSchema,
    count: Type.Integer({ description: 'Items of this kind in the answer.' }),
    truncated: Type.Boolean({ description: 'true: the kind has more items than its bound (`limit`); query it alone with `kind` to page through all.' }),
    error: Type.Optional(ErrorBody),
  },
  { additionalProperties: false, description: 'With `kinds`: what each kind contributed. `error`: the kind could not be read (e.g. 503 `kind_not_served`); the others were.' },
));

export const QueryEntitiesResponse = named('EntityPage', Type.Object(
  {
    items: Type.Array(EntityItem, { description: 'In each kind\'s list order; with `kinds`, kind after kind in the order asked.' }),
    next_cursor: Nullable(Type.String({ description: 'Pass as `cursor` with the same kind and filters for the next page; null on the last page and always with `kinds`.' })),
    kinds: Type.Optional(Type.Array(KindReport, { description: 'Only with `kinds`.' })),
  },
  { additionalProperties: false },
));
export type QueryEntitiesResponse = Static<typeof QueryEntitiesResponse>;

export const GetEntityBody = named('GetEntityRequest', Type.Object(
  {
    org_id: Uuid,
    fleet_id: Uuid,
    kind: kindEnum(DETAIL_KINDS, 'The kind of the entity.'),
    id: Type.Optional(Uuid),
  },
  {
    additionalProperties: false,
    description:
      '`id` is the entity\'s id: robot_id, feature_id, operation_id (may be left out: a fleet has one operation), mission_id (mission_template), ' +
      'directive_id (field_rule), object_id (object). Unknown ids and ids of another fleet: 404. Permissions: ' +
      `${permissionTable(DETAIL_KINDS)}.`,
  },
));
export type GetEntityBody = Static<typeof GetEntityBody>;

const details = KINDS.flatMap((k) => (k.detail?.schema ? [k.detail.schema] : []));
export const EntityDetail = named('EntityDetail', Type.Union(details, { description: 'The detailed record; `kind` says which.' }));
export type EntityDetail = Static<typeof EntityDetail>;

export const ResolveBody = named('ResolveRequest', Type.Object(
  {
    org_id: Uuid,
    fleet_id: Uuid,
    names: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100 }),
    kinds: Type.Optional(Type.Array(kindEnum(RESOLVABLE_KINDS, 'A kind resolve can match.'), {
      minItems: 1,
      maxItems: RESOLVABLE_KINDS.length,
      description: 'Kinds to match; default: every one of them the key may read.',
    })),
  },
  {
    additionalProperties: false,
    description:
      'Each name is matched exactly first; only a name with no exact match is matched case-insensitively. A name matching several entities returns ' +
      `every match; names matching nothing are listed in \`unmatched\`. Permissions: ${permissionTable(RESOLVABLE_KINDS)}.`,
  },
));
export type ResolveBody = Static<typeof ResolveBody>;

export const ResolveResponse = named('ResolveResult', Type.Object(
  {
    items: Type.Array(Type.Object(
      {
        kind: KindSchema,
        id: Uuid,
        name: Type.String(),
        query: Type.String({ description: 'The name asked for.' }),
        match: Type.Unsafe<'exact' | 'case_insensitive'>({ type: 'string', enum: ['exact', 'case_insensitive'] }),
      },
      { additionalProperties: false },
    ), { description: 'In the order of `names`, then kind, then id.' }),
    unmatched: Type.Array(Type.String(), { description: 'Names that matched nothing.' }),
  },
  { additionalProperties: false },
));
export type ResolveResponse = Static<typeof ResolveResponse>;
