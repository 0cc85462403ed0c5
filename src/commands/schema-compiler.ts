/**
 * Compiles robot-advertised argument schemas with ajv, within a time budget, and runs validators
 * within one.
 *
 * ajv settings: draft 2020-12, strict mode off (unknown keywords are ignored rather than failing a
 * whole policy), no schema loader (remote `$ref`s cannot load), `format` not evaluated, and patterns
 * run by the linear-time engine (safe-regexp.ts). Compiling is superlinear in schema size (a 48 kB
 * schema of 1,200 properties takes over half a second), and a schema of a few hundred bytes can make
 * validation exponential (`allOf` of two `$ref`s to the next level, 40 levels deep), so both run
 * under time-budget.ts.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { safeRegExp } from './safe-regexp.js';
import { BudgetExceededError, runWithin } from './time-budget.js';

const META_SCHEMA = 'https://json-schema.org/draft/2020-12/schema';

function newAjv(): Ajv2020 {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false, code: { regExp: safeRegExp } });
  // Compiles the draft 2020-12 meta-schema (every compile validates against it) now, rather than
  // inside a compile's budget: it is the slowest compile of all.
  ajv.getSchema(META_SCHEMA);
  // Runs the pattern engine once so that a robot's first validation does not pay for its JIT warm-up
  // (a few ms, many more on a loaded host) inside the validation budget.
  ajv.compile({ type: 'string', pattern: '^[a-z]+$' })('warm');
  ajv.removeSchema();
  return ajv;
}

export class SchemaCompiler {
  /**
   * Built at the first compile, not at start (tens of milliseconds that a command service's
   * construction need not pay); null again after a cut-off, until the rebuild (queued with setImmediate, or the
   * next compile). A build is outside the compile's budget but charged to the robot's allowance.
   */
  private ajv: Ajv2020 | null = null;
  /** Cut-offs since start; each costs a rebuild (see {@link RESET_COST_MS}). */
  resets = 0;

  /**
   * Parses and compiles one schema's JSON text.
   * @throws BudgetExceededError past `budgetMs`; otherwise whatever JSON.parse or ajv throws
   *   (an invalid schema, an unsafe pattern: UnsafePatternError)
   */
  compile(text: string, budgetMs: number): ValidateFunction {
    const ajv = (this.ajv ??= newAjv());
    try {
      return runWithin(budgetMs, () => {
        const schema: unknown = JSON.parse(text);
        if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error('not an object');
        return ajv.compile(schema);
      });
    } catch (err) {
      if (err instanceof BudgetExceededError) {
        // A terminated compile may have left ajv's caches half-updated: drop the instance. The new
        // one is built in a later turn, so that a Hello's compile and the rebuild do not add up.
        this.ajv = null;
        this.resets++;
        setImmediate(() => {
          this.ajv ??= newAjv();
        });
      }
      throw err;
    } finally {
      // Validators stay referenced by the policies using them; ajv's own cache entry is not needed.
      ajv.removeSchema();
    }
  }
}

/** What rebuilding the compiler after a cut-off is charged: above what a rebuild takes on an idle host, since a loaded one takes longer. */
export const RESET_COST_MS = 100;

/**
 * Runs a compiled validator within `budgetMs`.
 * @throws BudgetExceededError past the budget; RangeError when the schema recurses without end
 */
export function validateWithin(validate: ValidateFunction, value: unknown, budgetMs: number): boolean {
  return runWithin(budgetMs, () => validate(value) === true);
}
