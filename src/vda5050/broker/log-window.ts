/**
 * At most one log line per key (a robot, a username) per window, with how many were held back, so a
 * misconfigured or hostile client cannot flood the log. The key table is bounded: when full it is
 * cleared, which at worst lets one more line per key through.
 */
export class LogWindow {
  private readonly seen = new Map<string, { untilMs: number; held: number }>();

  constructor(
    private readonly windowMs: number,
    private readonly maxKeys = 10_000,
  ) {}

  /** The number of events held back since the last line when this one should be logged, else null. */
  take(key: string, nowMs = Date.now()): number | null {
    const cur = this.seen.get(key);
    if (cur !== undefined && nowMs < cur.untilMs) {
      cur.held++;
      return null;
    }
    if (cur === undefined && this.seen.size >= this.maxKeys) this.seen.clear();
    this.seen.set(key, { untilMs: nowMs + this.windowMs, held: 0 });
    return cur?.held ?? 0;
  }
}
