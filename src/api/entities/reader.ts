/**
 * The Agent read tools over the kind registry: `query-entities` (one kind, paged through the list
 * reader with cursors bound to the kind and its exact filters; or several kinds at once, unpaged),
 * `get-entity` and `resolve`.
 */
import { requireFleet, requireOrg, requirePermission } from '../../auth/access.js';
import type { AuthContext } from '../../auth/context.js';
import { apiError, ApiError } from '../../errors/catalog.js';
import { defineList, type FleetList, type ListQuery } from '../list-reader.js';
import type { FilterValue } from '../list-cursor.js';
import type { AnyKind, FilterValues, KindDeps, KindName } from './kind.js';
import { FILTERS, kindOf, RESOLVABLE_KINDS } from './registry.js';
import type { EntityDetail, GetEntityBody, QueryEntitiesBody, QueryEntitiesResponse, ResolveBody, ResolveResponse } from './schemas.js';

type EntityQuery = ListQuery & FilterValues & { cursor?: string };

/** Reads entities for the Agent read tools (one per gateway). */
export class EntityReader {
  private readonly lists = new Map<KindName, FleetList<EntityQuery, unknown>>();

  constructor(private readonly deps: KindDeps) {}

  private listOf(k: AnyKind): FleetList<EntityQuery, unknown> {
    let list = this.lists.get(k.name);
    if (list === undefined) {
      const names = Object.keys(k.filters);
      list = defineList<EntityQuery, unknown, unknown>({
        // The cursor binds the kind: a cursor of another kind, or of a REST list, is refused.
        kind: `agent-entities:${k.name}`,
        limit: k.limit,
        filters: (q) => Object.fromEntries(names.map((n): [string, FilterValue] => [n, q[n]])),
        source: (fleet, q) => k.source(this.deps, fleet, q),
        view: (r) => k.view(this.deps, r),
      });
      this.lists.set(k.name, list);
    }
    return list;
  }

  /**
   * `query-entities`.
   * @throws ApiError 400 `invalid_body` (kind and kinds, neither, a filter no requested kind takes, a
   *   cursor with kinds), `cursor_invalid`; 403 for a kind the key may not read; 404/403 fleet;
   *   503 `kind_not_served` (one kind)
   */
  query(auth: AuthContext, body: QueryEntitiesBody): QueryEntitiesResponse {
    if (body.kind !== undefined && body.kinds !== undefined) throw apiError('invalid_body', { detail: 'give kind or kinds, not both' });
    if (body.kind === undefined && body.kinds === undefined) throw apiError('invalid_body', { detail: 'missing required field \'kind\' (or \'kinds\')' });
    const names = body.kind !== undefined ? [body.kind] : [...new Set(body.kinds)];
    const kinds = names.map(kindOf);
    for (const k of kinds) requirePermission(auth, k.permission);
    const filters: Record<string, string | number | boolean> = {};
    for (const [name, spec] of FILTERS) {
      const v = body[name];
      if (v === undefined) continue;
      if (!kinds.some((k) => spec.kinds.includes(k.name))) {
        throw apiError('invalid_body', { detail: `field '${name}' is not a filter of kind ${names.join(', ')} (it filters ${spec.kinds.join(', ')})` });
      }
      filters[name] = v as string | number | boolean;
    }
    requireOrg(auth, body.org_id);
    const q = (k: AnyKind): EntityQuery => {
      const own = Object.fromEntries(Object.entries(filters).filter(([n]) => n in k.filters));
      return { ...own, org_id: body.org_id, fleet_id: body.fleet_id, ...(body.limit !== undefined ? { limit: body.limit } : {}) };
    };
    if (body.kind !== undefined) {
      const k = kinds[0]!;
      const page = this.listOf(k).read(this.deps.identity, auth, { ...q(k), ...(body.cursor !== undefined ? { cursor: body.cursor } : {}) });
      return { items: page.items, next_cursor: page.next_cursor };
    }
    if (body.cursor !== undefined) throw apiError('invalid_body', { detail: 'cursor cannot be used with kinds: multi-kind calls are not paged (page one kind with kind)' });
    requireFleet(this.deps.identity, auth, body.fleet_id);
    const out: QueryEntitiesResponse = { items: [], next_cursor: null, kinds: [] };
    for (const k of kinds) {
      try {
        const page = this.listOf(k).read(this.deps.identity, auth, q(k));
        out.items.push(...(page.items));
        out.kinds!.push({ kind: k.name, count: page.items.length, truncated: page.next_cursor !== null });
      } catch (err) {
        if (!(err instanceof ApiError) || err.id !== 'kind_not_served') throw err;
        out.kinds!.push({ kind: k.name, count: 0, truncated: false, error: { error: err.message, code: err.code } });
      }
    }
    return out;
  }

  /**
   * `get-entity`.
   * @throws ApiError 400 `missing_field` (no id where the kind needs one); 403; 404 (unknown or foreign
   *   id); 503 `kind_not_served`
   */
  get(auth: AuthContext, body: GetEntityBody): EntityDetail {
    const k = kindOf(body.kind);
    requirePermission(auth, k.permission);
    requireOrg(auth, body.org_id);
    const fleet = requireFleet(this.deps.identity, auth, body.fleet_id);
    const detail = k.detail!;
    if (body.id === undefined && detail.idOptional !== true) throw apiError('missing_field', { action: `get-entity of kind ${k.name}`, field: 'id' });
    // The kind's own detail schema is a member of the EntityDetail union (schemas.ts builds it from the registry).
    return detail.get(this.deps, fleet, body.id);
  }

  /**
   * `resolve`: names to ids, exact matches first, then case-insensitive ones.
   * @throws ApiError 403 for a requested kind the key may not read; 404/403 fleet
   */
  resolve(auth: AuthContext, body: ResolveBody): ResolveResponse {
    const explicit = body.kinds !== undefined;
    const names = explicit ? [...new Set(body.kinds)] : RESOLVABLE_KINDS.filter((n) => auth.permissions.includes(kindOf(n).permission));
    if (explicit) for (const n of names) requirePermission(auth, kindOf(n).permission);
    requireOrg(auth, body.org_id);
    const fleet = requireFleet(this.deps.identity, auth, body.fleet_id);
    // Every entity whose name equals an asked name ignoring case, once: a kind with a name index
    // looks the names up, a small kind is read once whatever the number of names.
    const asked = [...new Set(body.names.map((n) => n.toLowerCase()))];
    const wanted = new Set(asked);
    const exact = new Map<string, { kind: KindName; id: string; name: string }[]>();
    const folded = new Map<string, { kind: KindName; id: string; name: string }[]>();
    for (const n of names) {
      const k = kindOf(n);
      const seen = new Set<string>();
      const candidates = k.lookup ? k.lookup(this.deps, fleet, asked) : k.names!(this.deps, fleet);
      for (const e of candidates) {
        const lower = e.name.toLowerCase();
        if (!wanted.has(lower) || seen.has(e.id)) continue;
        seen.add(e.id);
        const hit = { kind: n, id: e.id, name: e.name };
        push(exact, e.name, hit);
        push(folded, lower, hit);
      }
    }
    const out: ResolveResponse = { items: [], unmatched: [] };
    for (const query of new Set(body.names)) {
      const same = exact.get(query);
      const hits = same ?? folded.get(query.toLowerCase());
      if (hits === undefined) {
        out.unmatched.push(query);
        continue;
      }
      for (const h of hits) out.items.push({ ...h, query, match: same !== undefined ? 'exact' : 'case_insensitive' });
    }
    return out;
  }
}

function push<V>(m: Map<string, V[]>, key: string, v: V): void {
  const list = m.get(key);
  if (list) list.push(v);
  else m.set(key, [v]);
}
