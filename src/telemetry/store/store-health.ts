/**
 * Whether the telemetry store answers, for /readyz, the gRPC health service and the
 * `fleetgw_ready{check="store"}` metric. Readiness probes are unauthenticated, so they never touch
 * the store themselves (a flood of probes must not become a flood of queries): they read the state
 * kept here, which a background probe (every `intervalMs`, one at a time: `SELECT 1`, or the store's
 * own `probe`, which asks every shard of a cluster) and the outcome of every insert keep current.
 *
 * The store counts as unreachable after a failed probe, and as reachable again after a successful
 * probe or insert. A failed insert does not decide it (the insert queue retries it; one bad block is
 * not an outage), but it makes the next periodic probe run. Transitions are logged: the failure, and
 * the recovery with how long it lasted.
 *
 * On one server (or chdb) a periodic probe is skipped while an insert succeeded, within the probe's
 * own timeout, less than `intervalMs` ago: that insert already answered the question, and under
 * telemetry load (an insert a second) the probe's HTTP round trip showed as a few percent of the main
 * thread at 100 robots (bench/notes/telemetry-ingest.md, "Fixed costs at light load"). Without such inserts (no
 * telemetry, slow inserts, or failing ones) the probe runs every interval. A cluster's probe always
 * runs: it asks every shard, and an insert into one shard says nothing about the others.
 */
import type { Logger } from 'pino';
import type { SampleStore } from './sample-store.js';

export interface StoreHealthOptions {
  /** Probe period. Default 2,000 ms. */
  intervalMs?: number;
  /** A probe that takes longer counts as failed. Default 2,000 ms. */
  timeoutMs?: number;
  /** Clock in ms (tests). Default performance.now. */
  now?: () => number;
}

export class StoreHealth {
  private up = true;
  private downSinceMs = 0;
  private probing = false;
  private timer: NodeJS.Timeout | null = null;
  private readonly intervalMs: number;
  private readonly timeoutMs: number;
  private readonly now: () => number;
  /** When an insert last succeeded (a periodic probe is skipped while this is fresh). */
  private lastInsertOkAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly store: Pick<SampleStore, 'queryText' | 'kind' | 'probe'>,
    private readonly log: Logger,
    opts: StoreHealthOptions = {},
  ) {
    this.intervalMs = opts.intervalMs ?? 2_000;
    this.timeoutMs = opts.timeoutMs ?? 2_000;
    this.now = opts.now ?? (() => performance.now());
  }

  /** False after a failed probe, until a probe or an insert succeeds. */
  get reachable(): boolean {
    return this.up;
  }

  /** Starts the periodic probe (the store answered at start: the gateway opened it). */
  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** The periodic probe: on one server, skipped while a successful insert is fresher than the interval. */
  async tick(): Promise<void> {
    if (this.store.probe === null && this.up && this.now() - this.lastInsertOkAt < this.intervalMs) return;
    await this.probe();
  }

  /**
   * An insert's outcome. A success means the store answers (as it always has); only one within the
   * probe's timeout stands in for the next periodic probe. A failure makes that probe run.
   */
  noteInsert(ok: boolean, durationMs: number): void {
    this.lastInsertOkAt = ok && durationMs <= this.timeoutMs ? this.now() : Number.NEGATIVE_INFINITY;
    if (ok) this.note(true);
  }

  /** A probe's (or an insert's) outcome: logs the transitions. */
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
    const query = this.store.probe !== null ? this.store.probe() : this.store.queryText('SELECT 1');
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
