/**
 * Bounds on evaluating robot-advertised argument schemas (docs/commands.md, "Command policy").
 *
 * A robot's schema and a client's arguments meet on the gateway's main thread, where every stop is
 * also handled. The regular-expression engine is linear (safe-regexp.ts); these bounds keep its
 * constant and everything else about a schema small, and the time budgets catch what a static bound
 * cannot (a schema whose `$ref`s fan out 2^n ways is a few hundred bytes).
 */

/** Longest pattern (`pattern`, `patternProperties` key) the gateway evaluates, in UTF-16 units. */
export const MAX_PATTERN_CHARS = 512;
/** Largest compiled pattern, in RE2 instructions (`^.{1,255}$` is 513; matching cost is linear in it). */
export const MAX_PATTERN_PROGRAM = 2000;

/** Longest string anywhere in an action's arguments (keys included), in UTF-16 units. */
export const MAX_ARGUMENT_STRING_CHARS = 4096;
/** Largest arguments object, as the length of its JSON text. */
export const MAX_ARGUMENTS_BYTES = 64 * 1024;
/** Deepest nesting of objects and arrays in an action's arguments (the arguments object is depth 1). */
export const MAX_ARGUMENTS_DEPTH = 32;

/**
 * Main-thread (wall-clock) time one argument validation may take; past it the command is refused.
 * A sane schema validates in microseconds; the margin is for a loaded host.
 */
export const VALIDATE_BUDGET_MS = 100;
/**
 * Main-thread time all validations in one event-loop turn may take together: one request naming
 * 100 robots, each with a different expensive schema, must not hold a stop for 100 budgets.
 */
export const TURN_VALIDATE_BUDGET_MS = 200;
/** Validations of one action that may exceed {@link VALIDATE_BUDGET_MS} before the action is disabled. */
export const VALIDATE_TRIPS_BEFORE_DISABLE = 3;
/** Main-thread time compiling one policy's argument schemas may take, all actions together. */
export const POLICY_COMPILE_BUDGET_MS = 250;
/**
 * Compile time one robot may spend per {@link COMPILE_ALLOWANCE_WINDOW_MS} (a token bucket): a
 * robot that reconnects with a new policy each time cannot keep the main thread compiling. An
 * unchanged policy is never compiled again, so a well-behaved robot does not come near it.
 */
export const ROBOT_COMPILE_ALLOWANCE_MS = 1000;
export const COMPILE_ALLOWANCE_WINDOW_MS = 60_000;
/**
 * Compile time all robots together may spend per {@link SHARED_COMPILE_WINDOW_MS} (a token bucket,
 * gateway-wide): many robots sending Hellos with expensive policies at once must not hold the main
 * thread for one budget each in a row. A compile starts while the bucket is above zero (it may
 * overdraw it by one compile) and queued compiles run one per turn, so the main thread compiles at
 * most one {@link POLICY_COMPILE_BUDGET_MS} at a time and about a quarter of the time; compiles
 * beyond it wait in a bounded queue (policy-registry.ts).
 */
export const SHARED_COMPILE_BUDGET_MS = POLICY_COMPILE_BUDGET_MS;
export const SHARED_COMPILE_WINDOW_MS = 1000;

/**
 * Why an action's arguments are too big to evaluate against a robot's schema, or null. Walks the
 * value without recursion (a deep value must not overflow the stack here) and stops at the first
 * bound exceeded, so its own cost is bounded by {@link MAX_ARGUMENTS_BYTES}.
 */
export function argumentsProblem(args: unknown): string | null {
  // Size counts the JSON text: quotes, separators and brackets included, so that it equals
  // JSON.stringify(args).length for plain strings (escapes in strings are counted once).
  let bytes = 0;
  const stack: { value: unknown; depth: number }[] = [{ value: args, depth: 1 }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const { value, depth } = item;
    if (typeof value === 'string') {
      if (value.length > MAX_ARGUMENT_STRING_CHARS) return `a string of ${value.length} characters exceeds the limit of ${MAX_ARGUMENT_STRING_CHARS}`;
      bytes += value.length + 2;
    } else if (value !== null && typeof value === 'object') {
      if (depth > MAX_ARGUMENTS_DEPTH) return `arguments nest deeper than ${MAX_ARGUMENTS_DEPTH} levels`;
      bytes += 2;
      if (Array.isArray(value)) {
        bytes += value.length;
        if (bytes > MAX_ARGUMENTS_BYTES) break;
        for (const v of value as unknown[]) stack.push({ value: v, depth: depth + 1 });
      } else {
        for (const [k, v] of Object.entries(value)) {
          if (k.length > MAX_ARGUMENT_STRING_CHARS) return `a key of ${k.length} characters exceeds the limit of ${MAX_ARGUMENT_STRING_CHARS}`;
          bytes += k.length + 4;
          if (bytes > MAX_ARGUMENTS_BYTES) break;
          stack.push({ value: v, depth: depth + 1 });
        }
      }
    } else {
      bytes += String(value).length;
    }
    if (bytes > MAX_ARGUMENTS_BYTES) break;
  }
  return bytes > MAX_ARGUMENTS_BYTES ? `arguments exceed ${MAX_ARGUMENTS_BYTES} bytes as JSON` : null;
}
