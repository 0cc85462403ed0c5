/**
 * Whether the telemetry store answers, for /readyz, the gRPC health service and the
 * `fleetgw_ready{check="store"}` metric. Readiness probes are unauthenticated, so they never touch
 * the store themselves (a flood of probes must not become a flood of queries): they read the state
 * kept here, which a background probe (every `intervalMs`, one at a time: `SELECT 1`, or the store's
 * own `probe`, which asks every shard of a cluster) and the outcome of every insert keep current.
 *
 * The store counts as unreachable after a failed probe or insert, and as reachable again after a
 * successful one. Transitions are logged: the failure, and the recovery with how long it lasted.
 */
import type { Logger } from 'pino';
import type { SampleStore } from './sample-store.js';

export interface StoreHealthOptions {
  /** Probe period. Default 2,000 ms. */
  intervalMs?: number;
  /** A probe that takes longer counts as failed. Default 2,000 ms. */
  timeoutMs?: number;
}

export class StoreHealth {
  private up = true;
  private downSinceMs = 0;
  private probing = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly intervalMs: number;
  private readonly timeoutMs: number;

  constructor(
    private readonly store: Pick<SampleStore, 'queryText' | 'kind' | 'probe'>,
    private readonly log: Logger,
    opts: StoreHealthOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 2_000;
    this.timeoutMs = opts.timeoutMs ?? 2_000;
  }

  /** True unless the latest probe or insert failed. */
  get reachable(): boolean {
    return this.up;
  }

  /** Starts the periodic probe (the store answered at start: the gateway opened it). */
  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.probe(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** An insert's outcome: the freshest evidence there is. */
  note(ok: boolean, error?: string): void {
    if (ok === this.up) return;
    this.up = ok;
    if (!ok) {
      this.downSinceMs = Date.now();
      this.log.warn({ store: this.store.kind, ...(error !== undefined ? { error } : {}) }, 'telemetry store unreachable');
    } else {
      this.log.info({ store: this.store.kind, downMs: Date.now() - this.downSinceMs }, 'telemetry store reachable again');
    }
  }

  /**
   * Runs one probe unless the previous one's query is still out (a hung store gets one query at a
   * time, however long it hangs). Resolves when it is decided: answered, failed or timed out.
   */
  async probe(): Promise<void> {
    if (this.probing) return;
    this.probing = true;
    const query = this.store.probe !== undefined ? this.store.probe() : this.store.queryText('SELECT 1');
    void query.then(
      () => (this.probing = false),
      () => (this.probing = false),
    );
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_r, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${this.timeoutMs} ms`)), this.timeoutMs);
      });
      await Promise.race([query, timeout]);
      this.note(true);
    } catch (e) {
      this.note(false, e instanceof Error ? e.message : String(e));
    } finally {
      clearTimeout(timer);
    }
  }
}
