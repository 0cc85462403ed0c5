/**
 * Per-robot compile-time allowance: a token bucket of milliseconds. A robot's new policy may spend
 * at most what its bucket holds; compiled policies are cached by content, so only a robot that keeps
 * advertising different policies ever runs it low.
 *
 * Bound: one entry per robot that compiled within the last window (robots are authenticated, so the
 * map is bounded by the registered robots); a bucket that has refilled is dropped on its next look-up.
 */
export class CompileAllowance {
  private readonly spent = new Map<string, { tokens: number; atMs: number }>();

  constructor(
    private readonly capacityMs: number,
    private readonly windowMs: number,
  ) {}

  private refill(robotId: string, nowMs: number): number {
    const b = this.spent.get(robotId);
    if (!b) return this.capacityMs;
    const tokens = Math.min(this.capacityMs, b.tokens + ((nowMs - b.atMs) * this.capacityMs) / this.windowMs);
    if (tokens >= this.capacityMs) {
      this.spent.delete(robotId);
      return this.capacityMs;
    }
    return tokens;
  }

  /** Milliseconds the robot may spend now (0 when it used up its allowance). */
  available(robotId: string, nowMs: number): number {
    return Math.max(0, this.refill(robotId, nowMs));
  }

  /** Records `ms` spent compiling for the robot. */
  charge(robotId: string, ms: number, nowMs: number): void {
    this.spent.set(robotId, { tokens: this.refill(robotId, nowMs) - ms, atMs: nowMs });
  }
}
