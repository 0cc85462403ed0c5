/**
 * The shapes every list shares (docs/api-conventions.md, Lists and cursors): `{items, next_cursor}`
 * pages, the opaque `cursor` query parameter and `limit` with a documented default and maximum.
 * src/api/list-reader.ts reads the pages.
 */
import { Type, type TSchema } from '@sinclair/typebox';
import { Nullable } from './common.js';
import { named } from './named.js';

/** A list's page size: used when `limit` is absent, and the most one page returns. */
export interface ListLimit {
  readonly default: number;
  readonly max: number;
}

/** Longest cursor accepted (cursors the gateway issues are far shorter). */
export const CURSOR_MAX_LENGTH = 512;

/** The cursor query parameter (`cursor`; `before` on `GET /v1/mission-schedule`, whose name the interface fixes). */
export const CursorParam = (description = 'The previous page\'s `next_cursor`, unchanged. Bound to the query that returned it: with other filters, another fleet or another list it is refused (400), as are numeric offsets.') =>
  Type.String({ minLength: 1, maxLength: CURSOR_MAX_LENGTH, description });

/**
 * The `limit` query parameter. `overMax: 'cap'` accepts any positive value and serves at most `max`
 * (where the interface says "capped"); otherwise a value above `max` is a 400.
 */
export const LimitParam = (limit: ListLimit, overMax: 'reject' | 'cap' = 'reject') =>
  overMax === 'cap'
    ? Type.Integer({ minimum: 1, description: `Page size; default ${limit.default}; values above ${limit.max} are capped at ${limit.max}.` })
    : Type.Integer({ minimum: 1, maximum: limit.max, description: `Page size; default ${limit.default}, at most ${limit.max}.` });

/** A named page schema: `{items: T[], next_cursor: string | null}`. */
export const Page = <T extends TSchema>(name: string, item: T, order: string) =>
  named(name, Type.Object(
    {
      items: Type.Array(item, { description: order }),
      next_cursor: Nullable(Type.String({ description: 'Pass as `cursor` for the next page; null on the last page.' })),
    },
    { additionalProperties: false },
  ));
