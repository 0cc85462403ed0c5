/**
 * Robot command policies: what each robot advertised in its Hello (modes, actions with argument
 * schemas, setting ranges, go-to area, request/response opt-ins), compiled for fast checks, and the
 * check of an action's arguments. policy-registry.ts keeps them per robot, shared by content.
 *
 * Argument schemas above {@link MAX_SCHEMA_BYTES} are not compiled and the action is refused;
 * compiling and validating run under the time budgets and pattern limits of policy-limits.ts
 * (docs/commands.md). The robot link has no message to tell a robot that part of its policy was
 * refused (Welcome carries no such field), so an unusable action is logged when its policy is
 * compiled, and its reason is the `policy_rejected` reason a client gets for it (docs/robot-link.md).
 */
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { SettingSpec_Kind, type CommandPolicy } from '../gen/fleetgw/v1/robot_link_pb.js';
import { argumentsProblem, TURN_VALIDATE_BUDGET_MS, VALIDATE_BUDGET_MS, VALIDATE_TRIPS_BEFORE_DISABLE } from './policy-limits.js';
import { UnsafePatternError } from './safe-regexp.js';
import { validateWithin, type SchemaCompiler } from './schema-compiler.js';
import { BudgetExceededError } from './time-budget.js';

export const MAX_SCHEMA_BYTES = 64 * 1024;

export interface SettingRule {
  kind: 'number' | 'boolean' | 'string' | 'invalid';
  min: number | null;
  max: number | null;
  /** Allowed string values (compared exactly, never as patterns); empty: any string. */
  allowed: readonly string[];
}

/**
 * An advertised action: its compiled argument validator, or why it cannot be used. Mutable: an
 * action whose validations keep exceeding their time budget is disabled in place, for every robot
 * sharing the compiled policy, until a robot advertises a changed policy.
 */
export interface ActionRule {
  validate: ValidateFunction | null;
  /** Why the action is unusable; empty while `validate` is set. */
  invalid: string;
  /** Validations that exceeded {@link VALIDATE_BUDGET_MS}. */
  overBudget: number;
}

export interface CompiledPolicy {
  readonly modes: ReadonlySet<string>;
  readonly actions: ReadonlyMap<string, ActionRule>;
  readonly settings: ReadonlyMap<string, SettingRule>;
  /** Go-to area ring (lat/lon), or null: the robot does not accept go-to. */
  readonly goToArea: readonly { lat: number; lon: number }[] | null;
  readonly remoteConfig: boolean;
  readonly onboardSettings: boolean;
}

/**
 * The policy of a robot whose advertised policy waits for the gateway-wide compile budget
 * (policy-registry.ts): policy-bound commands are refused with a retry hint meanwhile; commands that
 * are not policy-bound (stop above all) are unaffected. Compared by identity.
 */
export const PENDING_POLICY: CompiledPolicy = Object.freeze({
  modes: new Set<string>(),
  actions: new Map<string, ActionRule>(),
  settings: new Map<string, SettingRule>(),
  goToArea: null,
  remoteConfig: false,
  onboardSettings: false,
});

function settingRule(s: CommandPolicy['settings'][number]): SettingRule {
  const range = s.hasRange && Number.isFinite(s.min) && Number.isFinite(s.max) && s.min <= s.max;
  switch (s.kind) {
    case SettingSpec_Kind.NUMBER:
      return { kind: 'number', min: range ? s.min : null, max: range ? s.max : null, allowed: [] };
    case SettingSpec_Kind.BOOLEAN:
      return { kind: 'boolean', min: null, max: null, allowed: [] };
    case SettingSpec_Kind.STRING:
      return { kind: 'string', min: null, max: null, allowed: [...s.allowedValues] };
    default:
      return { kind: 'invalid', min: null, max: null, allowed: [] };
  }
}

/** Below this much budget left, a schema is not tried. */
const MIN_COMPILE_MS = 10;

const unusable = (invalid: string): ActionRule => ({ validate: null, invalid, overBudget: 0 });

/**
 * Compiles a policy within `budgetMs` of main-thread time for all its argument schemas together. A
 * schema that does not compile, is too large, uses a pattern the gateway refuses, or does not fit in
 * what is left of the budget makes only its own action unusable, with the reason.
 * @returns the policy, and `starved`: some action was refused for lack of budget
 */
export function compilePolicy(compiler: SchemaCompiler, p: CommandPolicy, budgetMs: number): { policy: CompiledPolicy; starved: boolean } {
  const actions = new Map<string, ActionRule>();
  const deadline = performance.now() + budgetMs;
  let starved = false;
  for (const a of p.actions) {
    if (a.name === '') continue;
    const text = a.argumentsSchemaJson.trim();
    if (text.length > MAX_SCHEMA_BYTES) {
      actions.set(a.name, unusable('arguments schema too large'));
      continue;
    }
    if (text === '') {
      // No schema text: the action takes no arguments (checked without ajv, see validateArguments).
      actions.set(a.name, { validate: null, invalid: '', overBudget: 0 });
      continue;
    }
    const left = deadline - performance.now();
    // Too little left to compile anything: a cut-off would also cost a compiler rebuild.
    if (left < MIN_COMPILE_MS) {
      starved = true;
      actions.set(a.name, unusable(`arguments schema not compiled: the policy used up the gateway's compile budget (${Math.round(budgetMs)} ms) on earlier actions`));
      continue;
    }
    try {
      actions.set(a.name, { validate: compiler.compile(text, left), invalid: '', overBudget: 0 });
    } catch (err) {
      if (err instanceof BudgetExceededError) {
        starved = true;
        actions.set(a.name, unusable(`arguments schema too expensive to compile (over ${Math.round(left)} ms of the gateway's ${Math.round(budgetMs)} ms budget)`));
      } else if (err instanceof UnsafePatternError) {
        actions.set(a.name, unusable(`arguments schema refused: ${err.message}`));
      } else {
        actions.set(a.name, unusable(`arguments schema does not compile (${err instanceof Error ? err.message : String(err)})`));
      }
    }
  }
  const ring = p.goToArea?.ring ?? [];
  const valid = ring.length >= 3 && ring.every((g) => Number.isFinite(g.latitude) && Number.isFinite(g.longitude));
  const policy: CompiledPolicy = {
    modes: new Set(p.allowedModes),
    actions,
    settings: new Map(p.settings.filter((s) => s.key !== '').map((s) => [s.key, settingRule(s)])),
    goToArea: valid ? ring.map((g) => ({ lat: g.latitude, lon: g.longitude })) : null,
    remoteConfig: p.remoteConfig,
    onboardSettings: p.onboardSettings,
  };
  return { policy, starved };
}

/** Below this much of the turn's budget left, no validation is started. */
const MIN_VALIDATE_MS = 5;

/** Validation time spent in the current event-loop turn; reset by a setImmediate after the turn. */
const turn = {
  spentMs: 0,
  resetQueued: false,
  left(): number {
    return TURN_VALIDATE_BUDGET_MS - this.spentMs;
  },
  charge(ms: number): void {
    this.spentMs += ms;
    if (this.resetQueued) return;
    this.resetQueued = true;
    setImmediate(() => {
      this.spentMs = 0;
      this.resetQueued = false;
    });
  },
};

const isEmptyObject = (v: unknown): boolean => typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;

/**
 * Why an advertised action refuses these arguments, or null when they are accepted. Arguments over
 * the size bounds are refused before any schema runs; a validation past its time budget refuses the
 * command, and the {@link VALIDATE_TRIPS_BEFORE_DISABLE}th disables the action.
 */
export function validateArguments(name: string, rule: ActionRule, args: unknown): string | null {
  if (rule.invalid !== '') return `action ${name}: ${rule.invalid}`;
  const validate = rule.validate;
  if (validate === null) return isEmptyObject(args) ? null : `arguments of ${name} are not accepted: the action takes no arguments`;
  const tooBig = argumentsProblem(args);
  if (tooBig !== null) return `arguments of ${name} are too large to check: ${tooBig}`;
  let budget = Math.min(VALIDATE_BUDGET_MS, turn.left());
  if (budget < MIN_VALIDATE_MS) return `the gateway spent its ${TURN_VALIDATE_BUDGET_MS} ms budget for checking action arguments on earlier targets; retry`;
  let ok: boolean;
  const started = performance.now();
  try {
    try {
      ok = validateWithin(validate, args, budget);
    } catch (err) {
      // The budget is wall-clock time: on a loaded host a sane schema can overrun it once (the
      // process descheduled, a GC pause). A second overrun in a row is the schema's cost. The
      // retry stays within the turn's budget.
      if (!(err instanceof BudgetExceededError) || budget < VALIDATE_BUDGET_MS) throw err;
      budget = Math.min(VALIDATE_BUDGET_MS, turn.left() - (performance.now() - started));
      if (budget < MIN_VALIDATE_MS) throw err;
      ok = validateWithin(validate, args, budget);
    }
  } catch (err) {
    if (!(err instanceof BudgetExceededError)) {
      // A schema that recurses without end (`{"$ref": "#"}` at its root) overflows the stack.
      rule.validate = null;
      rule.invalid = `arguments schema cannot be evaluated (${err instanceof Error ? err.message : String(err)})`;
      return `action ${name}: ${rule.invalid}`;
    }
    // Counts against the action only when it had a full budget's time: a budget cut short by
    // earlier targets in the same turn does not.
    if (performance.now() - started >= VALIDATE_BUDGET_MS) rule.overBudget++;
    if (rule.overBudget >= VALIDATE_TRIPS_BEFORE_DISABLE) {
      rule.validate = null;
      rule.invalid = `arguments schema too expensive to evaluate (validation exceeded ${VALIDATE_BUDGET_MS} ms ${rule.overBudget} times); disabled until the robot advertises a changed policy`;
      return `action ${name}: ${rule.invalid}`;
    }
    return `checking the arguments of ${name} against its schema exceeded the gateway's ${Math.round(budget)} ms budget`;
  } finally {
    turn.charge(performance.now() - started);
  }
  if (ok) return null;
  const e = validate.errors?.[0];
  return `arguments of ${name} do not match its schema: ${e ? `${e.instancePath || '/'} ${e.message ?? 'invalid'}` : 'invalid'}`;
}
