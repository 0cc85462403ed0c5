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

  /**
   * While the set-up has not run: the last attempt's error, or, during the first attempt, that it is
   * still trying (so a store whose server neither answers nor refuses reports itself down). Null once
   * it ran, and before any attempt.
   */
  get error(): string | null {
    if (this.result !== null) return null;
    return this.lastError ?? (this.running !== null ? 'still trying: the server has not answered yet' : null);
  }

  /**
   * Starts an attempt (unless the set-up ran) and waits for it at most `ms`: a server that drops
   * packets holds an attempt for the client's request timeout, and a start must not wait that long.
   * The attempt goes on in the background; its outcome is {@link value} / {@link error}.
   */
  async tryWithin(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    });
    try {
      await Promise.race([this.ensure().then(() => undefined, () => undefined), deadline]);
    } finally {
      clearTimeout(timer);
    }
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
