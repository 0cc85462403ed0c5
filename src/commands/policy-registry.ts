/**
 * Robot id -> its current compiled policy, with compiled policies shared by content (policy.ts
 * compiles them).
 *
 * Compilation cost is paid once per distinct policy, never per request: a policy is keyed by the
 * SHA-256 of its protobuf bytes, so a fleet of robots advertising the same policy shares one
 * compiled copy, and a reconnect with an unchanged policy compiles nothing. Bounds: at most
 * {@link MAX_COMPILED_POLICIES} distinct compiled policies (least recently advertised evicted; a robot
 * keeps its reference, so only memory of unused ones is reclaimed); each compile within
 * POLICY_COMPILE_BUDGET_MS, and each robot within its compile allowance (policy-limits.ts).
 *
 * A policy cut short by a budget (a load spike, a spent allowance, or a schema that is simply too
 * expensive) is not cached and is compiled again in the background, at most
 * {@link RECOMPILE_DELAYS_MS}.length times per Hello, so a transient overload does not leave an action
 * unusable until the robot happens to reconnect; the robot's allowance bounds what that costs.
 */
import { createHash } from 'node:crypto';
import { toBinary } from '@bufbuild/protobuf';
import { CommandPolicySchema, type CommandPolicy } from '../gen/fleetgw/v1/robot_link_pb.js';
import { CompileAllowance } from './compile-allowance.js';
import { compilePolicy, type CompiledPolicy } from './policy.js';
import { COMPILE_ALLOWANCE_WINDOW_MS, POLICY_COMPILE_BUDGET_MS, ROBOT_COMPILE_ALLOWANCE_MS } from './policy-limits.js';
import { RESET_COST_MS, SchemaCompiler } from './schema-compiler.js';

export const MAX_COMPILED_POLICIES = 256;
/** Delays of the background recompiles of a policy cut short by a budget. */
export const RECOMPILE_DELAYS_MS = [1000, 5000, 30_000] as const;
/** At most this many unusable actions are named in the log line for one compiled policy. */
const MAX_LOGGED_UNUSABLE = 5;

export class PolicyRegistry {
  private readonly compiler = new SchemaCompiler();
  private readonly allowance = new CompileAllowance(ROBOT_COMPILE_ALLOWANCE_MS, COMPILE_ALLOWANCE_WINDOW_MS);
  /** digest -> compiled policy, in least-recently-advertised order. */
  private readonly byDigest = new Map<string, CompiledPolicy>();
  /** null: the robot connected without a policy. */
  private readonly byRobot = new Map<string, { digest: string; compiled: CompiledPolicy } | null>();
  /** Pending background recompile per robot (at most one each). */
  private readonly recompiles = new Map<string, NodeJS.Timeout>();
  /** Policies compiled since start (a test and a stat: reconnects must not recompile). */
  compiled = 0;

  constructor(
    private readonly log: (line: string) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {}

  /** Records the policy of a robot's latest Hello (undefined: it sent none). */
  set(robotId: string, policy: CommandPolicy | undefined): void {
    const pending = this.recompiles.get(robotId);
    if (pending) clearTimeout(pending);
    this.recompiles.delete(robotId);
    if (!policy) {
      this.byRobot.set(robotId, null);
      return;
    }
    const digest = createHash('sha256').update(toBinary(CommandPolicySchema, policy)).digest('hex');
    this.apply(robotId, policy, digest, 0);
  }

  /** The robot's policy; null when it advertised none, undefined when it has not connected since start. */
  get(robotId: string): CompiledPolicy | null | undefined {
    const entry = this.byRobot.get(robotId);
    return entry === undefined ? undefined : (entry?.compiled ?? null);
  }

  /** Stops background recompiles (the command service is closing). */
  close(): void {
    for (const t of this.recompiles.values()) clearTimeout(t);
    this.recompiles.clear();
  }

  private apply(robotId: string, policy: CommandPolicy, digest: string, attempt: number): void {
    let compiled = this.byDigest.get(digest);
    if (compiled) {
      this.byDigest.delete(digest);
      this.byDigest.set(digest, compiled);
    } else {
      const budget = Math.min(POLICY_COMPILE_BUDGET_MS, this.allowance.available(robotId, this.now()));
      const started = performance.now();
      const resets = this.compiler.resets;
      const out = compilePolicy(this.compiler, policy, budget);
      // The robot pays for the compiler rebuilds its cut-offs cause too (they run in a later turn).
      this.allowance.charge(robotId, performance.now() - started + (this.compiler.resets - resets) * RESET_COST_MS, this.now());
      compiled = out.policy;
      this.compiled++;
      if (out.starved) {
        this.scheduleRecompile(robotId, policy, digest, attempt);
      } else {
        this.byDigest.set(digest, compiled);
      }
      this.logUnusable(robotId, compiled, out.starved && attempt < RECOMPILE_DELAYS_MS.length);
    }
    while (this.byDigest.size > MAX_COMPILED_POLICIES) {
      const oldest = this.byDigest.keys().next().value;
      if (oldest === undefined) break;
      this.byDigest.delete(oldest);
    }
    this.byRobot.set(robotId, { digest, compiled });
  }

  private scheduleRecompile(robotId: string, policy: CommandPolicy, digest: string, attempt: number): void {
    const delay = RECOMPILE_DELAYS_MS[attempt];
    if (delay === undefined) return;
    const timer = setTimeout(() => {
      this.recompiles.delete(robotId);
      // Only while the robot still advertises that policy (a newer Hello cancels this timer too).
      if (this.byRobot.get(robotId)?.digest === digest) this.apply(robotId, policy, digest, attempt + 1);
    }, delay);
    timer.unref();
    this.recompiles.set(robotId, timer);
  }

  private logUnusable(robotId: string, p: CompiledPolicy, retrying: boolean): void {
    const bad = [...p.actions].filter(([, r]) => r.invalid !== '');
    if (bad.length === 0) return;
    const named = bad.slice(0, MAX_LOGGED_UNUSABLE).map(([name, r]) => `${JSON.stringify(name.slice(0, 128))}: ${r.invalid}`);
    const more = bad.length > MAX_LOGGED_UNUSABLE ? `; and ${bad.length - MAX_LOGGED_UNUSABLE} more` : '';
    const again = retrying ? ' (compiling again in the background)' : '';
    this.log(`robot ${robotId}: ${bad.length} of ${p.actions.size} advertised actions unusable${again}: ${named.join('; ')}${more}`);
  }
}
