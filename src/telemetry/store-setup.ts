/**
 * A ClickHouse server's set-up (version, database, schema migrations) that may wait for the server:
 * tried at start, and when the server did not answer then (down, unreachable, or refusing the
 * login), tried again by the next use of the store, until it succeeds once. The gateway starts, and
 * serves its robots, without the store; rows wait in the disk spool until the set-up has run
 * (docs/operations.md, "Starting without the telemetry store"). Used per shard by the cluster store
 * (cluster-shard.ts) and once by the single-server store (clickhouse-store.ts).
 */
export class DeferredSetUp<T> {
  private result: T | null = null;
  private running: Promise<T> | null = null;
  private lastError: string | null = null;
  private resolveDone: (v: T) => void = () => undefined;
  /** Resolves when the set-up first succeeds (never, while it has not). */
  readonly done = new Promise<T>((resolve) => {
    this.resolveDone = resolve;
  });

  constructor(private readonly run: () => Promise<T>) {}

  /** What the set-up found, once it ran; null before. */
  get value(): T | null {
    return this.result;
  }

  /** The last attempt's error while the set-up has not run (null once it ran, or before any attempt). */
  get error(): string | null {
    return this.result === null ? this.lastError : null;
  }

  /**
   * Runs the set-up unless it ran: one attempt at a time (callers during an attempt share it); a
   * failed attempt is forgotten, so the next call tries again.
   * @throws the attempt's error
   */
  ensure(): Promise<T> {
    if (this.result !== null) return Promise.resolve(this.result);
    this.running ??= this.run().then(
      (v) => {
        this.result = v;
        this.running = null;
        this.resolveDone(v);
        return v;
      },
      (e: unknown) => {
        this.running = null;
        this.lastError = e instanceof Error ? e.message : String(e);
        throw e;
      },
    );
    return this.running;
  }
}
