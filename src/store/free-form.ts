/**
 * Bounds on free-form values: objects whose content the gateway stores and forwards without a
 * schema (template `parameters`, step `config`, action `arguments`, config `values`, a robot's
 * command result payload). Bounded because deeply nested values overflow the stack of recursive code
 * further on (msgpack, canonical JSON, structuredClone). Clients' values are checked
 * at validation (src/api/schemas/free-form.ts), robots' where their reports are parsed.
 */

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
 * @returns null when within `limits`, else the reason (`must not nest deeper than 32 levels`)
 */
export function freeFormProblem(value: unknown, limits: FreeFormLimits): string | null {
  const stack: [unknown, number][] = [[value, 1]];
  let values = 0;
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth > limits.maxDepth) return `must not nest deeper than ${limits.maxDepth} levels`;
    const members = Array.isArray(v) ? (v as unknown[]) : Object.values(v);
    values += members.length;
    if (values > limits.maxValues) return `must hold at most ${limits.maxValues} values`;
    for (const m of members) if (m !== null && typeof m === 'object') stack.push([m, depth + 1]);
  }
  return null;
}
