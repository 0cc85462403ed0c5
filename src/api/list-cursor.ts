/**
 * Opaque keyset cursors. A cursor carries the position after which the next page starts and a digest
 * of the query it belongs to (the list, the fleet or organization and the exact filters), so it cannot be replayed
 * against another query: the position is only ever read inside the range of the query that issued
 * it. The digest is not a secret; what a forged position could address is bounded by that range.
 */
import { createHash } from 'node:crypto';
import { apiError } from '../errors/catalog.js';

/** A filter value bound into a cursor (absent filters are left out). */
export type FilterValue = string | number | boolean | null | undefined;

/** What a cursor is bound to. */
export interface CursorBinding {
  /** The list (e.g. `mission-runs`): a cursor of another list is refused. */
  kind: string;
  /** The fleet (fleet-scoped lists) or organization (org-scoped lists) the list is read in. */
  scope: string;
  /** The query or path parameter naming the scope, for messages: `fleet_id` or `org_id`. */
  scopeParam: 'fleet_id' | 'org_id';
  /** The exact filters of the query, by query parameter name. */
  filters: Readonly<Record<string, FilterValue>>;
}

const VERSION = 1;

function digest(b: CursorBinding): string {
  const filters = Object.keys(b.filters)
    .filter((k) => b.filters[k] !== undefined)
    .sort()
    .map((k) => [k, b.filters[k]]);
  return createHash('sha256').update(JSON.stringify([b.kind, b.scope, filters])).digest('base64url').slice(0, 16);
}

/** The cursor of the page after `position` for the query `b`. */
export function encodeCursor(b: CursorBinding, position: string): string {
  return Buffer.from(JSON.stringify({ v: VERSION, q: digest(b), p: position })).toString('base64url');
}

/**
 * The position a cursor names, checked against the query it is used with.
 * @param param the query parameter that carried it (named in the error)
 * @throws ApiError 400 `cursor_invalid`: a numeric offset, a malformed cursor, or one issued for
 *   another list, fleet or filters
 */
export function decodeCursor(b: CursorBinding, raw: string, param = 'cursor'): string {
  if (/^\d+$/.test(raw)) {
    throw apiError('cursor_invalid', { param, detail: 'numeric offset cursors are not accepted; pass the next_cursor of the previous page unchanged' });
  }
  const v = parseCursor(raw);
  if (v === null) {
    throw apiError('cursor_invalid', { param, detail: 'not a cursor this gateway issued; pass the next_cursor of the previous page unchanged' });
  }
  if (v.q !== digest(b)) {
    throw apiError('cursor_invalid', {
      param,
      detail: `it was issued for a different query; a cursor is bound to its list, ${b.scopeParam === 'org_id' ? 'organization' : 'fleet'} and exact filters (${filterNames(b)}): repeat that query, or start again without ${param}`,
    });
  }
  return v.p;
}

function filterNames(b: CursorBinding): string {
  return [b.scopeParam, ...Object.keys(b.filters)].join(', ');
}

/** The cursor's fields, or null when it is not one this gateway issued. */
function parseCursor(raw: string): { q: string; p: string } | null {
  if (!/^[A-Za-z0-9_-]+$/.test(raw)) return null;
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    return null; // not JSON: not ours
  }
  if (typeof v !== 'object' || v === null) return null;
  const o = v as { v?: unknown; q?: unknown; p?: unknown };
  return o.v === VERSION && typeof o.q === 'string' && typeof o.p === 'string' ? { q: o.q, p: o.p } : null;
}
