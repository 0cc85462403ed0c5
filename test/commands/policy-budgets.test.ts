/**
 * Issue 8 item 1, the parts below the HTTP surface: the linear-time pattern engine's accept/refuse
 * rules, the argument bounds, and the time budgets that hold expensive robot schemas to a bounded
 * share of the main thread (test/e2e/policy-patterns.test.ts covers the stop through the real process).
 */
import { captureLog } from '../support/capture-log.js';
import { create } from '@bufbuild/protobuf';
import { describe, expect, it } from 'vitest';
import { compilePolicy, PENDING_POLICY, validateArguments } from '../../src/commands/policy.js';
import { PolicyRegistry, RECOMPILE_DELAYS_MS } from '../../src/commands/policy-registry.js';
import { checkCommand } from '../../src/commands/policy-check.js';
import { argumentsProblem, MAX_ARGUMENTS_DEPTH, ROBOT_COMPILE_ALLOWANCE_MS, VALIDATE_TRIPS_BEFORE_DISABLE } from '../../src/commands/policy-limits.js';
import { safeRegExp } from '../../src/commands/safe-regexp.js';
import { SchemaCompiler } from '../../src/commands/schema-compiler.js';
import { CommandPolicySchema } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { until } from '../support/until.js';

const robot = { robotId: 'r', active: true };
const nextTurn = (): Promise<void> => new Promise((r) => setImmediate(r));

function registryWith(actions: Record<string, unknown>, log: string[] = []): PolicyRegistry {
  const reg = new PolicyRegistry(captureLog(log));
  reg.set('r', create(CommandPolicySchema, { actions: Object.entries(actions).map(([name, s]) => ({ name, argumentsSchemaJson: JSON.stringify(s) })) }));
  return reg;
}

/** The policy_rejected reason, or null when the command is accepted; with the time it took. */
function invoke(reg: PolicyRegistry, name: string, args: Record<string, unknown>): { reason: string | null; ms: number } {
  const started = performance.now();
  try {
    checkCommand(robot, reg.get('r'), { action: 'invoke_action', args: { name, arguments: args as never } });
    return { reason: null, ms: performance.now() - started };
  } catch (err) {
    return { reason: (err as Error).message, ms: performance.now() - started };
  }
}

/** `allOf` of two `$ref`s to the next level, `levels` deep: 2^levels evaluations of one value. */
function fanOut(levels: number): object {
  const defs: Record<string, object> = {};
  for (let i = 0; i < levels; i++) defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
  defs[`d${levels}`] = { type: 'object' };
  return { $defs: defs, $ref: '#/$defs/d0' };
}

describe('the pattern engine', () => {
  it('matches in linear time what JavaScript backtracks on for minutes', () => {
    const re = safeRegExp('^([a-z]+)*$', 'u');
    const started = performance.now();
    expect(re.test(`${'a'.repeat(4000)}!`)).toBe(false);
    expect(re.test('abc')).toBe(true);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('keeps ECMA-262 spellings and unicode semantics', () => {
    expect(safeRegExp('^\\u00e9\\u{1F600}$', 'u').test('é😀')).toBe(true);
    expect(safeRegExp('^(?<year>\\d{4})-\\p{Lu}$', 'u').test('2024-É')).toBe(true);
    expect(safeRegExp('^.$', 'u').test('😀')).toBe(true);
    expect(safeRegExp('b', 'u').test('abc')).toBe(true); // unanchored, like RegExp.test
    expect(String(safeRegExp('a', 'u'))).not.toBe(String(safeRegExp('b', 'u'))); // ajv's cache key
  });

  it('refuses backreferences, lookaround, invalid, overlong and oversized patterns with the reason', () => {
    expect(() => safeRegExp('(a)\\1', 'u')).toThrow(/linear-time engine/);
    expect(() => safeRegExp('a(?=b)', 'u')).toThrow(/linear-time engine/);
    expect(() => safeRegExp('(?<=a)b', 'u')).toThrow(/linear-time engine/);
    expect(() => safeRegExp('[', 'u')).toThrow(/not a valid ECMA-262/);
    expect(() => safeRegExp('a'.repeat(513), 'u')).toThrow(/513 characters exceeds the gateway's limit of 512/);
    expect(() => safeRegExp('^(a|b|c|d){0,600}$', 'u')).toThrow(/RE2 instructions, over the gateway's limit of 2000/);
  });
});

describe('argument bounds', () => {
  it('names the bound exceeded, without recursion', () => {
    expect(argumentsProblem({ a: 'x'.repeat(4096), b: [1, true, null] })).toBeNull();
    expect(argumentsProblem({ a: 'x'.repeat(4097) })).toMatch(/4097 characters/);
    expect(argumentsProblem({ ['k'.repeat(4097)]: 1 })).toMatch(/key of 4097/);
    expect(argumentsProblem({ a: Array.from({ length: 20 }, () => 'x'.repeat(4000)) })).toMatch(/exceed 65536 bytes/);
    let deep: unknown = 1;
    for (let i = 0; i < MAX_ARGUMENTS_DEPTH; i++) deep = [deep];
    expect(argumentsProblem(deep)).toBeNull();
    let deeper: unknown = 1;
    for (let i = 0; i < 100_000; i++) deeper = [deeper];
    expect(argumentsProblem(deeper)).toMatch(/deeper than 32/);
  });
});

describe('time budgets', () => {
  // Compiled with a generous budget: these tests are about validation, on a host that may be loaded.
  const compiled = (actions: Record<string, unknown>) =>
    compilePolicy(new SchemaCompiler(), create(CommandPolicySchema, { actions: Object.entries(actions).map(([name, s]) => ({ name, argumentsSchemaJson: JSON.stringify(s) })) }), 10_000).policy;
  const check = (p: ReturnType<typeof compiled>, name: string) => {
    const started = performance.now();
    const reason = validateArguments(name, p.actions.get(name)!, {});
    return { reason, ms: performance.now() - started };
  };

  it('refuses a validation that fans out, then disables the action; the main thread is held one budget at a time', async () => {
    const p = compiled({ fan: fanOut(40), ok: { type: 'object' } });
    for (let i = 1; i <= VALIDATE_TRIPS_BEFORE_DISABLE; i++) {
      await nextTurn();
      const r = check(p, 'fan');
      expect(r.ms).toBeLessThan(600);
      expect(r.reason).toMatch(i < VALIDATE_TRIPS_BEFORE_DISABLE ? /exceeded the gateway's \d+ ms budget/ : /too expensive to evaluate/);
    }
    await nextTurn();
    const disabled = check(p, 'fan');
    expect(disabled.reason).toMatch(/action fan: arguments schema too expensive to evaluate/);
    expect(disabled.ms).toBeLessThan(50);
    expect(check(p, 'ok').reason).toBeNull();
  });

  it('shares one budget between the validations of one turn', async () => {
    const p = compiled({ fan: fanOut(40) });
    await nextTurn();
    const started = performance.now();
    const reasons = Array.from({ length: 5 }, () => check(p, 'fan').reason);
    expect(performance.now() - started).toBeLessThan(800);
    expect(reasons.at(-1)).toMatch(/spent its 200 ms budget for checking action arguments on earlier targets/);
  });

  it('makes a schema that recurses without end unusable, and a schema too expensive to compile unusable', async () => {
    const props = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`p${i}`, { type: 'string', maxLength: 20 }]));
    const log: string[] = [];
    const started = performance.now();
    const reg = registryWith({ rec: { $ref: '#' }, big: { type: 'object', properties: props }, after: { type: 'object' } }, log);
    expect(performance.now() - started).toBeLessThan(1000);
    await nextTurn();
    expect(invoke(reg, 'rec', {}).reason).toMatch(/action rec: arguments schema cannot be evaluated/);
    expect(invoke(reg, 'big', {}).reason).toMatch(/action big: arguments schema too expensive to compile/);
    expect(invoke(reg, 'after', {}).reason).toMatch(/used up the gateway's compile budget/);
    expect(log.join('\n')).toMatch(/2 of 3 advertised actions unusable \(compiling again in the background\): "big": arguments schema too expensive to compile.*"after"/);
  });

  it('bounds the compile time one robot can spend; a policy cut short is compiled again in the background', async () => {
    let now = 0;
    // The per-robot bound on its own: the gateway-wide budget across robots (tested below) out of the way.
    const reg = new PolicyRegistry(captureLog(), () => now, 1e9);
    const props = Object.fromEntries(Array.from({ length: 1500 }, (_, i) => [`p${i}`, { type: 'string', maxLength: 20 }]));
    const heavy = (i: number) => create(CommandPolicySchema, { actions: [{ name: `a${i}`, argumentsSchemaJson: JSON.stringify({ type: 'object', properties: props }) }] });
    let spent = 0;
    let hellos = 0;
    while (spent < ROBOT_COMPILE_ALLOWANCE_MS + 400) {
      const started = performance.now();
      reg.set('r', heavy(hellos++));
      spent += performance.now() - started;
      await nextTurn();
      if (hellos > 20) break;
    }
    // The allowance is spent: a new policy is not compiled at all, and is not cached.
    const before = reg.compiled;
    const started = performance.now();
    reg.set('r', create(CommandPolicySchema, { actions: [{ name: 'small', argumentsSchemaJson: '{"type":"object"}' }] }));
    expect(performance.now() - started).toBeLessThan(50);
    expect(reg.compiled).toBe(before + 1);
    expect(invoke(reg, 'small', {}).reason).toMatch(/used up the gateway's compile budget/);
    // Once the allowance has refilled, the background recompile (1 s after the Hello) compiles it,
    // without a new Hello.
    now += 60_000;
    await until(() => invoke(reg, 'small', {}).reason === null, RECOMPILE_DELAYS_MS[0] + 10_000, 'the background recompile');
    reg.close();
  }, 30_000);

  it('shares one compile budget across robots: Hellos beyond it wait in a queue, stops are not held', async () => {
    const reg = new PolicyRegistry(captureLog());
    const heavy = (i: number) => {
      const props = Object.fromEntries(Array.from({ length: 1500 }, (_, p) => [`r${i}p${p}`, { type: 'string', maxLength: 20 }]));
      return create(CommandPolicySchema, { actions: [{ name: 'a', argumentsSchemaJson: JSON.stringify({ type: 'object', properties: props }) }] });
    };
    const policies = [0, 1, 2, 3].map(heavy);
    const started = performance.now();
    policies.forEach((p, i) => reg.set(`h${i}`, p));
    // One compile's budget in this turn (plus building the compiler), not four.
    expect(performance.now() - started).toBeLessThan(500);
    expect(reg.queuedCompiles).toBe(3);
    expect(reg.get('h3')).toBe(PENDING_POLICY);
    const hostile = { robotId: 'h3', active: true };
    expect(() => checkCommand(hostile, reg.get('h3'), { action: 'invoke_action', args: { name: 'a', arguments: {} } })).toThrow(/waiting to be compiled/);
    expect(() => checkCommand(hostile, reg.get('h3'), { action: 'stop', args: {} } as never)).not.toThrow();
    // Drained as the budget refills (250 ms per second; each cut-off costs about 350 ms of it), in order.
    const compiledAt: number[] = [];
    while (compiledAt.length < 3 && performance.now() - started < 20_000) {
      await new Promise((r) => setTimeout(r, 50));
      for (let i = compiledAt.length + 1; i <= 3 && reg.get(`h${i}`) !== PENDING_POLICY; i++) compiledAt.push(performance.now() - started);
    }
    expect(compiledAt).toHaveLength(3);
    // Never two compiles in one go: at least about a second of refill between them.
    expect((compiledAt[1] ?? 0) - (compiledAt[0] ?? 0)).toBeGreaterThan(800);
    expect(reg.get('h3')?.actions.get('a')?.invalid).toMatch(/too expensive to compile/);
    reg.close();
  }, 30_000);
});
