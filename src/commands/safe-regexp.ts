/**
 * The regular-expression engine for robot-supplied JSON Schema patterns (`pattern`,
 * `patternProperties`), handed to ajv as `code.regExp`.
 *
 * A robot's argument schema is input to the gateway. With JavaScript's backtracking RegExp, a pattern
 * such as `^([a-z]+)*$` takes exponential time on a 30-character argument ending in `!`, and that ran
 * on the main thread: it held every stop behind it. Patterns are therefore run by RE2JS, a JavaScript
 * port of RE2 whose matching is linear in program size × input length (no backtracking), and the
 * program size is bounded here so that this product stays small for the bounded argument strings
 * (policy-limits.ts).
 *
 * A pattern must be valid ECMA-262 (`u` flag, as JSON Schema requires) **and** expressible in RE2:
 * backreferences and lookaround are refused, as are patterns over {@link MAX_PATTERN_CHARS} characters
 * or compiling to more than {@link MAX_PATTERN_PROGRAM} RE2 instructions. A refused pattern makes ajv's
 * compile throw, which makes only that action unusable, with the reason (policy.ts).
 */
import { RE2JS } from 're2js';
import { MAX_PATTERN_CHARS, MAX_PATTERN_PROGRAM } from './policy-limits.js';

/** What ajv needs from a compiled pattern. */
export interface SafePattern {
  test(s: string): boolean;
  /** ajv keys its per-schema pattern cache by this string: it must differ per pattern. */
  toString(): string;
}

/** A robot-supplied pattern the gateway will not evaluate; the message says why. */
export class UnsafePatternError extends Error {}

function quoted(pattern: string): string {
  return JSON.stringify(pattern.length > 60 ? `${pattern.slice(0, 60)}…` : pattern);
}

/**
 * Compiles a JSON Schema pattern for linear-time matching (unanchored search, like `RegExp.test`).
 * RE2 always matches by code point, so the `u` flag ajv passes changes nothing.
 * @throws UnsafePatternError when the pattern is too long, not valid ECMA-262, uses syntax RE2 cannot
 *   run in linear time, or compiles to too large a program
 */
function compileSafePattern(pattern: string): SafePattern {
  if (pattern.length > MAX_PATTERN_CHARS) {
    throw new UnsafePatternError(`pattern of ${pattern.length} characters exceeds the gateway's limit of ${MAX_PATTERN_CHARS}`);
  }
  try {
    // Syntax check only: V8 parses here but compiles and runs nothing until a match, and a pattern
    // JavaScript rejects was refused before this engine existed too.
    new RegExp(pattern, 'u');
  } catch {
    throw new UnsafePatternError(`pattern ${quoted(pattern)} is not a valid ECMA-262 regular expression`);
  }
  let re: RE2JS;
  try {
    // translateRegExp maps JavaScript-only spellings (\uXXXX, \u{...}, \cX, (?<name>)) to RE2 syntax.
    re = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    throw new UnsafePatternError(`pattern ${quoted(pattern)} cannot run on the gateway's linear-time engine (RE2: no backreferences or lookaround): ${why}`);
  }
  const size = re.programSize();
  if (size > MAX_PATTERN_PROGRAM) {
    throw new UnsafePatternError(`pattern ${quoted(pattern)} compiles to ${size} RE2 instructions, over the gateway's limit of ${MAX_PATTERN_PROGRAM}`);
  }
  const key = `re2:${pattern}`;
  return { test: (s) => re.test(s), toString: () => key };
}

/** ajv's `code.regExp` engine: `(pattern, flags) => {test}`; `code` names it in standalone output (unused). */
export const safeRegExp = Object.assign((pattern: string, _flags: string): SafePattern => compileSafePattern(pattern), { code: 'safeRegExp' });
