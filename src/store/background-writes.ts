/**
 * Writes a module issues without awaiting them (a counter persisted on the way, an index entry
 * written behind the answer) still have an owner that must hear when they fail: `watch` attaches the
 * one failure handler, which reports to every sink the gateway added (its log and the
 * `fleetgw_store_write_failures_total` counter). With no sink at all (a tool that opened the store
 * without a gateway) the failure becomes a process warning, never nothing.
 */

/** One failed write: the module that owns the database, the database, the error. */
export interface WriteFailure {
  owner: string;
  db: string;
  err: unknown;
}

/** The failure handler of a store's un-awaited writes. */
export class BackgroundWrites {
  private readonly sinks = new Set<(failure: WriteFailure) => void>();
  private failedTotal = 0;

  /** Reports `write`'s failure, if it fails, as the owner's. Costs one promise reaction, no allocation on success. */
  watch(write: Promise<unknown>, owner: string, db: string): void {
    write.then(undefined, (err: unknown) => this.failed({ owner, db, err }));
  }

  /** Reports a failure seen elsewhere (a write callback that threw) as the owner's. */
  failed(failure: WriteFailure): void {
    this.failedTotal++;
    if (this.sinks.size === 0) {
      process.emitWarning(`LMDB write to '${failure.db}' by ${failure.owner} failed: ${failure.err instanceof Error ? failure.err.message : String(failure.err)}`);
      return;
    }
    for (const sink of this.sinks) sink(failure);
  }

  /** Adds a sink; returns the function that removes it. */
  onFailure(sink: (failure: WriteFailure) => void): () => void {
    this.sinks.add(sink);
    return () => this.sinks.delete(sink);
  }

  /** Failed writes since the store opened. */
  get failures(): number {
    return this.failedTotal;
  }
}
