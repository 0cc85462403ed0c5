/**
 * The gateway's readiness: named checks, each O(1) (no I/O per call, since /readyz and the gRPC
 * health service are unauthenticated), evaluated on demand for /readyz and the metrics, and once a
 * second to keep the gRPC health status current and to log each change (which check failed, and
 * when all pass again).
 */
import type { Logger } from 'pino';

export type ReadinessChecks = Readonly<Record<string, () => boolean>>;

/** `/readyz`'s word: `degraded` is ready (200) with a part down that the gateway works around. */
export type ReadinessStatus = 'ready' | 'degraded' | 'not_ready';

export class Readiness {
  private timer: NodeJS.Timeout | null = null;
  private last: boolean | null = null;
  /** The last error each throwing check gave, so each new one is logged once (checks run per /readyz). */
  private readonly thrown = new Map<string, string>();

  constructor(
    private readonly checks: ReadinessChecks,
    private readonly log: Logger,
    /** Called with the overall answer at start and whenever it changes. */
    private readonly onChange: (ready: boolean) => void,
    /**
     * Conditions that leave the gateway ready but degraded when false (the telemetry store down while
     * the disk spool takes its rows): they change /readyz's word, not its status code or gRPC health.
     */
    private readonly degradedBy: ReadinessChecks = {},
  ) {}

  /** `not_ready` when a check fails, else `degraded` when a degrading condition is false, else `ready`. */
  status(): ReadinessStatus {
    if (!this.ready()) return 'not_ready';
    for (const [name, check] of Object.entries(this.degradedBy)) if (!this.safe(name, check)) return 'degraded';
    return 'ready';
  }

  /** Each check's answer now. */
  results(): Record<string, boolean> {
    const out: Record<string, boolean> = {};
    for (const [name, check] of Object.entries(this.checks)) out[name] = this.safe(name, check);
    return out;
  }

  /** True when every check passes. */
  ready(): boolean {
    for (const [name, check] of Object.entries(this.checks)) if (!this.safe(name, check)) return false;
    return true;
  }

  /** Publishes the current answer and re-checks every `intervalMs`. */
  start(intervalMs = 1_000): void {
    this.update();
    this.timer ??= setInterval(() => this.update(), intervalMs);
    this.timer.unref();
  }

  /** Stops re-checking and reports not ready (the gateway is going away). */
  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.last = false;
    this.onChange(false);
  }

  /** A check that throws fails; its error is logged when it differs from the check's previous one. */
  private safe(name: string, check: () => boolean): boolean {
    try {
      const ok = check();
      this.thrown.delete(name);
      return ok;
    } catch (err: unknown) {
      const text = err instanceof Error ? err.message : String(err);
      if (this.thrown.get(name) !== text) {
        this.thrown.set(name, text);
        this.log.error({ err, check: name }, `readiness: check ${name} threw (${text}); it counts as failing`);
      }
      return false;
    }
  }

  private update(): void {
    const results = this.results();
    const ready = Object.values(results).every(Boolean);
    if (ready === this.last) return;
    const first = this.last === null;
    this.last = ready;
    if (ready) {
      if (!first) this.log.info('readiness: ready again');
    } else {
      const failing = Object.entries(results).filter(([, ok]) => !ok).map(([name]) => name);
      this.log.warn({ failing }, `readiness: not ready (failing: ${failing.join(', ')})`);
    }
    this.onChange(ready);
  }
}
