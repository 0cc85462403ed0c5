/**
 * Reconnect delays: capped exponential backoff with "equal jitter" (half fixed, half random), so a
 * fleet that lost the gateway at the same instant does not reconnect in lockstep, and no delay is ~0.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly initialMs: number,
    private readonly maxMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** Delay before the next attempt; each call doubles the base up to the cap. */
  next(): number {
    const base = Math.min(this.maxMs, this.initialMs * 2 ** Math.min(this.attempt, 30));
    this.attempt++;
    return Math.round(base / 2 + (this.random() * base) / 2);
  }

  /** Called after a successful connection. */
  reset(): void {
    this.attempt = 0;
  }
}
