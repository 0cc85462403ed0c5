/**
 * Bounds on free-form values (template `parameters`, step `config`, action `arguments`, config
 * `values`): objects whose content the gateway stores and forwards without a schema. A schema marks
 * one with the `x-free-form` keyword (FreeForm in src/api/schemas/common.ts); validation.ts gives ajv
 * the keyword, which calls {@link freeFormProblem}. Bounded because deeply nested values overflow the
 * stack of recursive code further on (msgpack, canonical JSON; issue 8 item 11).
 */

/** The schema keyword marking a free-form object and carrying its {@link FreeFormLimits}. */
export const FREE_FORM_KEYWORD = 'x-free-form';

/** The limits an `x-free-form` keyword carries. */
export interface FreeFormLimits {
  /** Deepest nesting; the free-form object itself is level 1. */
  maxDepth: number;
  /** Most values inside it, counted at every level (an object or array counts, and so does each member). */
  maxValues: number;
}

/** The limits every free-form field of the API uses. */
export const FREE_FORM_LIMITS: FreeFormLimits = Object.freeze({ maxDepth: 32, maxValues: 10_000 });

/**
 * Walks `value` without recursion.
 * @returns null when within `limits`, else the reason (`nesting deeper than 32`)
 */
export function freeFormProblem(value: unknown, limits: FreeFormLimits): string | null {
  const stack: [unknown, number][] = [[value, 1]];
  let values = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > limits.maxDepth) return `nesting deeper than ${limits.maxDepth}`;
    const members = Array.isArray(v) ? (v as unknown[]) : Object.values(v);
    values += members.length;
    if (values > limits.maxValues) return `more than ${limits.maxValues} values`;
    for (const m of members) if (m !== null && typeof m === 'object') stack.push([m, depth + 1]);
  }
  return null;
}
