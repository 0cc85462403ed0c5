/**
 * The one reader of fleet-scoped lists (and, with {@link defineOrgList}, of organization-wide ones). A list is declared once with {@link defineList}: its name,
 * page size, the filters its cursor is bound to, where its records come from (a domain module's
 * {@link Keyset}: routes never build storage keys) and the typed view of a record. `read` then does
 * the rest the same way for every list: the org and fleet access checks, the limit, the opaque keyset
 * cursor (decode, check it belongs to this query, encode the next one) and the view.
 *
 * Adding a listable entity is a schema (src/api/schemas/list.ts `Page`) plus one `defineList`
 * (docs/api-conventions.md, Lists and cursors).
 */
import { requireFleet, requireOrg } from '../auth/access.js';
import type { AuthContext } from '../auth/context.js';
import type { Keyset } from '../store/keyset.js';
import type { IdentityReads } from '../store/identity-reads.js';
import type { FleetRecord } from '../store/records.js';
import { decodeCursor, encodeCursor, type CursorBinding, type FilterValue } from './list-cursor.js';
import type { ListLimit } from './schemas/list.js';

/** What every list query carries. */
export interface ListQuery {
  fleet_id: string;
  /** Checked against the key's organization when present. */
  org_id?: string;
  limit?: number;
}

/** One page as every list answers it. */
export interface ListPage<V> {
  items: V[];
  next_cursor: string | null;
}

/** A list's declaration. */
export interface ListDefinition<Q extends ListQuery, R, V> {
  /** The list's name, bound into its cursors (a cursor of another list is refused). */
  kind: string;
  limit: ListLimit;
  /** The query parameter carrying the cursor (default `cursor`). */
  cursorParam?: string;
  /** The exact filters of the query that a cursor is bound to, by parameter name (not limit or cursor). */
  filters(q: Q): Readonly<Record<string, FilterValue>>;
  /** The records, in list order, from the module that owns them; called after the access checks. */
  source(fleet: Readonly<FleetRecord>, q: Q): Keyset<R>;
  /** The published view of one record. */
  view(r: R): V;
}

/** A declared list. */
export interface FleetList<Q extends ListQuery, V> {
  readonly kind: string;
  readonly limit: ListLimit;
  /**
   * One page for the caller: 404/403 for a fleet it may not use (403 for another organization),
   * 400 `cursor_invalid` for a cursor that is not one of this query's.
   * @param opts.limit a page size set by the route itself rather than the client (e.g. an unpaged
   *   form the interface fixes); used as given
   */
  read(identity: Pick<IdentityReads, 'fleet'>, auth: AuthContext, query: Q, opts?: { limit?: number }): ListPage<V>;
}

/** Declares a list (see the module comment). */
export function defineList<Q extends ListQuery, R, V>(def: ListDefinition<Q, R, V>): FleetList<Q, V> {
  const param = def.cursorParam ?? 'cursor';
  return {
    kind: def.kind,
    limit: def.limit,
    read(identity, auth, query, opts = {}) {
      if (query.org_id !== undefined) requireOrg(auth, query.org_id);
      const fleet = requireFleet(identity, auth, query.fleet_id);
      const binding: CursorBinding = { kind: def.kind, scope: fleet.fleetId, scopeParam: 'fleet_id', filters: def.filters(query) };
      return readPage(binding, def, query, def.source(fleet, query), param, opts.limit);
    },
  };
}

/** What every organization-wide list query carries. */
export interface OrgListQuery {
  org_id: string;
  limit?: number;
  cursor?: string;
}

/** An organization-wide list's declaration: as {@link ListDefinition}, its records read per organization. */
export interface OrgListDefinition<Q extends OrgListQuery, R, V> {
  kind: string;
  limit: ListLimit;
  filters(q: Q): Readonly<Record<string, FilterValue>>;
  /** The records, in list order, that `auth` may see in its organization; called after the org check. */
  source(orgId: string, auth: AuthContext, q: Q): Keyset<R>;
  view(r: R): V;
}

/** A declared organization-wide list. */
export interface OrgList<Q extends OrgListQuery, V> {
  readonly kind: string;
  readonly limit: ListLimit;
  /** One page for the caller: 403 for another organization, 400 `cursor_invalid` for a cursor not of this query. */
  read(auth: AuthContext, query: Q): ListPage<V>;
}

/**
 * Declares a list read per organization rather than per fleet (the fleets a key can use, the
 * organization's API keys): the same limit, opaque bound cursor and view as {@link defineList}.
 */
export function defineOrgList<Q extends OrgListQuery, R, V>(def: OrgListDefinition<Q, R, V>): OrgList<Q, V> {
  return {
    kind: def.kind,
    limit: def.limit,
    read(auth, query) {
      requireOrg(auth, query.org_id);
      const binding: CursorBinding = { kind: def.kind, scope: query.org_id, scopeParam: 'org_id', filters: def.filters(query) };
      return readPage(binding, def, query, def.source(query.org_id, auth, query), 'cursor');
    },
  };
}

/** The page after the query's cursor (if any), and the cursor of the page after it. */
function readPage<R, V>(
  binding: CursorBinding,
  def: { limit: ListLimit; view(r: R): V },
  query: { limit?: number },
  source: Keyset<R>,
  param: string,
  fixedLimit?: number,
): ListPage<V> {
  const raw = (query as Record<string, unknown>)[param];
  const after = typeof raw === 'string' ? decodeCursor(binding, raw, param) : null;
  const limit = Math.max(1, fixedLimit ?? Math.min(query.limit ?? def.limit.default, def.limit.max));
  const page = source.page(after, limit);
  return {
    items: page.items.map((r) => def.view(r)),
    next_cursor: page.more && page.last !== null ? encodeCursor(binding, page.last) : null,
  };
}
