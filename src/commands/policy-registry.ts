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
 *
 * Across robots, compiles share one gateway-wide budget (SHARED_COMPILE_BUDGET_MS per
 * SHARED_COMPILE_WINDOW_MS, a token bucket on the real clock): a compile starts only while the bucket
 * is above zero (it may overdraw it by one compile, at most POLICY_COMPILE_BUDGET_MS), otherwise the
 * robot waits in a FIFO queue drained by a timer, one compile per turn, as the bucket refills. So
 * ordinary policies (a few ms each) compile at once even when many robots connect together, while
 * expensive ones hold the loop for at most one compile budget at a time and about
 * SHARED_COMPILE_BUDGET_MS per window overall. Meanwhile its policy is {@link PENDING_POLICY} (policy-bound commands refused with a retry
 * hint; stops unaffected). A newer Hello of a queued robot replaces its entry. The queue holds at most
 * {@link MAX_QUEUED_COMPILES} robots; when it is full, the robot's policy stays pending and is tried
 * again like a policy cut short (RECOMPILE_DELAYS_MS), and, past those, on the robot's next Hello.
 */
import { pino, type Logger } from 'pino';
import { createHash } from 'node:crypto';
import { toBinary } from '@bufbuild/protobuf';
import { CommandPolicySchema, type CommandPolicy } from '../gen/fleetgw/v1/robot_link_pb.js';
import { CompileAllowance } from './compile-allowance.js';
import { compilePolicy, PENDING_POLICY, type CompiledPolicy } from './policy.js';
import {
  COMPILE_ALLOWANCE_WINDOW_MS, POLICY_COMPILE_BUDGET_MS, ROBOT_COMPILE_ALLOWANCE_MS, SHARED_COMPILE_BUDGET_MS, SHARED_COMPILE_WINDOW_MS,
} from './policy-limits.js';
import { RESET_COST_MS, SchemaCompiler } from './schema-compiler.js';

export const MAX_COMPILED_POLICIES = 256;
/** Delays of the background recompiles of a policy cut short by a budget. */
export const RECOMPILE_DELAYS_MS = [1000, 5000, 30_000] as const;
/** Robots whose policy waits for the shared compile budget, at most. */
export const MAX_QUEUED_COMPILES = 1024;
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
  /** The gateway-wide compile budget (one bucket, key ''), on the real clock. */
  private readonly shared: CompileAllowance;
  /** Robots waiting for the shared budget, oldest first. */
  private readonly queue = new Map<string, { policy: CommandPolicy; digest: string; attempt: number }>();
  private drainTimer: NodeJS.Timeout | null = null;
  private draining = false;
  /** Policies compiled since start (a test and a stat: reconnects must not recompile). */
  compiled = 0;

  /**
   * @param now clock of the per-robot allowance (minutes)
   * @param sharedBudgetMs the gateway-wide budget per SHARED_COMPILE_WINDOW_MS (tests of the per-robot bounds raise it)
   */
  constructor(
    private readonly log: Logger = pino({ enabled: false }),
    private readonly now: () => number = Date.now,
    private readonly sharedBudgetMs: number = SHARED_COMPILE_BUDGET_MS,
  ) {
    this.shared = new CompileAllowance(sharedBudgetMs, SHARED_COMPILE_WINDOW_MS);
  }

  /** Records the policy of a robot's latest Hello (undefined: it sent none). */
  set(robotId: string, policy: CommandPolicy | undefined): void {
    const pending = this.recompiles.get(robotId);
    if (pending) clearTimeout(pending);
    this.recompiles.delete(robotId);
    this.queue.delete(robotId);
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
    if (this.drainTimer) clearTimeout(this.drainTimer);
    this.drainTimer = null;
    this.queue.clear();
  }

  /** Robots whose policy waits for the shared compile budget (a stat and a test). */
  get queuedCompiles(): number {
    return this.queue.size;
  }

  private apply(robotId: string, policy: CommandPolicy, digest: string, attempt: number): void {
    let compiled = this.byDigest.get(digest);
    if (compiled) {
      this.byDigest.delete(digest);
      this.byDigest.set(digest, compiled);
    } else {
      const budget = Math.min(POLICY_COMPILE_BUDGET_MS, this.allowance.available(robotId, this.now()));
      // FIFO: a Hello does not overtake robots already waiting (the drain itself does not wait on them).
      if ((this.queue.size > 0 && !this.draining) || this.shared.available('', performance.now()) <= 0) {
        this.enqueue(robotId, policy, digest, attempt);
        return;
      }
      const started = performance.now();
      const resets = this.compiler.resets;
      const out = compilePolicy(this.compiler, policy, budget);
      // The robot pays for the compiler rebuilds its cut-offs cause too (they run in a later turn).
      const cost = performance.now() - started + (this.compiler.resets - resets) * RESET_COST_MS;
      this.allowance.charge(robotId, cost, this.now());
      this.shared.charge('', cost, performance.now());
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

  private enqueue(robotId: string, policy: CommandPolicy, digest: string, attempt: number): void {
    this.byRobot.set(robotId, { digest, compiled: PENDING_POLICY });
    if (this.queue.size >= MAX_QUEUED_COMPILES) {
      this.log.warn({ robotId }, `robot ${robotId}: command policy not compiled yet: ${MAX_QUEUED_COMPILES} robots already wait for the gateway's compile budget`);
      this.scheduleRecompile(robotId, policy, digest, attempt);
      return;
    }
    this.queue.set(robotId, { policy, digest, attempt });
    this.armDrain();
  }

  // One timer, due when the shared bucket is back above zero (what the last compile overdrew).
  private armDrain(): void {
    if (this.drainTimer || this.queue.size === 0) return;
    const missing = 1 - this.shared.available('', performance.now());
    const delay = Math.max(1, Math.ceil((missing * SHARED_COMPILE_WINDOW_MS) / this.sharedBudgetMs));
    this.drainTimer = setTimeout(() => this.drain(), delay);
    this.drainTimer.unref();
  }

  private drain(): void {
    this.drainTimer = null;
    this.draining = true;
    try {
      // One compile per turn: a stop waiting behind the queue waits for at most one compile budget.
      for (const [robotId, q] of this.queue) {
        if (this.shared.available('', performance.now()) <= 0) break;
        this.queue.delete(robotId);
        // Only while the robot still advertises that policy (a newer Hello replaces the entry).
        if (this.byRobot.get(robotId)?.digest !== q.digest) continue;
        this.apply(robotId, q.policy, q.digest, q.attempt);
        break;
      }
    } finally {
      this.draining = false;
    }
    this.armDrain();
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
    this.log.warn({ robotId }, `robot ${robotId}: ${bad.length} of ${p.actions.size} advertised actions unusable${again}: ${named.join('; ')}${more}`);
  }
}
