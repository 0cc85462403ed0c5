/**
 * The claim protocol on the `idempotency` db. Every step is one asynchronous LMDB write transaction
 * (check and write atomically, committed before the promise resolves), so a claim is durable before
 * the handler runs and two requests can never both win the same key — even from two processes.
 */
import type { Store } from '../store/lmdb.js';
import { expiryKey } from './keys.js';
import { BOOT, CLAIM_LEASE_MS, REPLAY_WINDOW_MS, type IdempotencyRecord, type StoredReply } from './record.js';

export type ClaimOutcome =
  | { kind: 'claimed' }
  | { kind: 'replay'; reply: StoredReply }
  | { kind: 'not_replayable' }
  | { kind: 'in_progress' }
  | { kind: 'body_mismatch' };

/** True when `pid` names a live process (signal 0 probes without sending anything). */
function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Writes the completed record over `rec` (inside a write transaction). */
function putDone(store: Store, key: string, rec: IdempotencyRecord, reply: StoredReply | null, nowMs: number): void {
  store.index.removeSync(expiryKey(rec.expiresAtMs, key));
  const expiresAtMs = nowMs + REPLAY_WINDOW_MS;
  store.idempotency.putSync(key, { ...rec, state: 'done', owner: null, reply, expiresAtMs });
  store.index.putSync(expiryKey(expiresAtMs, key), true);
}

/** True when `rec` is a running claim of this process start. */
function ownClaim(rec: IdempotencyRecord): boolean {
  return rec.state === 'running' && rec.owner?.bootId === BOOT.bootId;
}

/**
 * The claims of one store, for this process: the claim protocol above plus the set of keys this
 * process is running right now (the only claims of this boot that are live). Built once per store by
 * the composition root (src/gateway) and handed to the routes; a store reopened in the same process
 * gets a new one, so claims left by the old one read as stale.
 */
export class IdempotencyClaims {
  /**
   * Keys this process is running right now, each with what settles when it finishes (completed or
   * released), so a duplicate arriving meanwhile can wait for it. Bounded by the requests in flight.
   */
  private readonly running = new Map<string, { settled: Promise<void>; settle: () => void }>();

  constructor(readonly store: Store) {}

  /**
   * Whether a `running` claim can no longer be completed by its owner.
   * - Own boot: live only while this process has it in flight (a claim of ours not in flight was left
   *   by a store that was closed mid-request, or a release that failed).
   * - Other boot: stale when its pid is ours (pid reuse after a restart, common in containers), when
   *   that pid is gone, or when its lease ran out (the pid may have been reused by another program).
   */
  isStale(key: string, rec: IdempotencyRecord, nowMs: number): boolean {
    const owner = rec.owner;
    if (owner === null) return true;
    if (owner.bootId === BOOT.bootId) return !this.running.has(key);
    if (owner.pid === BOOT.pid) return true;
    if (!pidAlive(owner.pid)) return true;
    return nowMs >= rec.leaseUntilMs;
  }

  /**
   * Resolves when this process's running claim of `key` settles; undefined when it runs none (a claim
   * of another process, or nothing running).
   */
  settled(key: string): Promise<void> | undefined {
    return this.running.get(key)?.settled;
  }

  /** What the record says about a new claim, or null when the key is free to claim. */
  private decide(key: string, rec: IdempotencyRecord | undefined, hash: string, nowMs: number): ClaimOutcome | null {
    if (rec !== undefined && rec.expiresAtMs > nowMs) {
      if (rec.bodyHash !== hash) return { kind: 'body_mismatch' };
      if (rec.state === 'done') return rec.reply === null ? { kind: 'not_replayable' } : { kind: 'replay', reply: rec.reply };
      if (!this.isStale(key, rec, nowMs)) return { kind: 'in_progress' };
    }
    return null;
  }

  private markRunning(key: string): void {
    let settle!: () => void;
    const settled = new Promise<void>((resolve) => (settle = resolve));
    this.running.set(key, { settled, settle });
  }

  private unmarkRunning(key: string): void {
    this.running.get(key)?.settle();
    this.running.delete(key);
  }

  /**
   * Claims `key` without waiting for a write: one synchronous read (microseconds), then the request
   * may run at once while the claim record is written behind it. For urgent requests (a stop), which
   * must not wait for a commit before they reach the robot. A duplicate in this process sees the key
   * running from the moment this returns; a duplicate in another process sharing the store may slip
   * through until the record commits, which a stop tolerates (stopping a stopped robot changes nothing).
   */
  claimNow(key: string, hash: string, nowMs: number): ClaimOutcome {
    if (this.running.has(key)) {
      const rec = this.store.idempotency.get(key);
      // Our own claim whose record is not written yet: running, whatever the body.
      return rec !== undefined && rec.bodyHash !== hash ? { kind: 'body_mismatch' } : { kind: 'in_progress' };
    }
    const decided = this.decide(key, this.store.idempotency.get(key), hash, nowMs);
    if (decided !== null) return decided;
    this.markRunning(key);
    const store = this.store;
    // Queued after the caller's synchronous part (the stop is sent first); complete()/release() run in
    // transactions queued after this one, so they see the claim.
    queueMicrotask(() => void store.root
      .transaction(() => {
        const rec = store.idempotency.get(key);
        if (rec !== undefined) store.index.removeSync(expiryKey(rec.expiresAtMs, key));
        const expiresAtMs = nowMs + CLAIM_LEASE_MS + REPLAY_WINDOW_MS;
        store.idempotency.putSync(key, { bodyHash: hash, state: 'running', owner: { ...BOOT }, leaseUntilMs: nowMs + CLAIM_LEASE_MS, reply: null, createdAtMs: nowMs, expiresAtMs });
        store.index.putSync(expiryKey(expiresAtMs, key), true);
      })
      // Unwritten: complete() finds no claim and records nothing; a retry runs again. Reported all the same.
      .catch((err: unknown) => store.writes.failed({ owner: 'idempotency', db: 'idempotency', err })));
    return { kind: 'claimed' };
  }

  /** Tries to claim `key` for a request with body hash `hash`; tells the caller what to do instead if not. */
  async claim(key: string, hash: string, nowMs: number): Promise<ClaimOutcome> {
    const store = this.store;
    let added = false;
    const attempt = (): ClaimOutcome => {
      const rec = store.idempotency.get(key);
      const decided = this.decide(key, rec, hash, nowMs);
      if (decided !== null) return decided;
      if (rec !== undefined) store.index.removeSync(expiryKey(rec.expiresAtMs, key));
      const expiresAtMs = nowMs + CLAIM_LEASE_MS + REPLAY_WINDOW_MS;
      const next: IdempotencyRecord = {
        bodyHash: hash,
        state: 'running',
        owner: { ...BOOT },
        leaseUntilMs: nowMs + CLAIM_LEASE_MS,
        reply: null,
        createdAtMs: nowMs,
        expiresAtMs,
      };
      store.idempotency.putSync(key, next);
      store.index.putSync(expiryKey(expiresAtMs, key), true);
      // In flight from inside the transaction: a second claim queued in the same batch must see it live.
      this.markRunning(key);
      added = true;
      return { kind: 'claimed' };
    };
    try {
      return await store.root.transaction(attempt);
    } catch (err) {
      if (added) this.unmarkRunning(key);
      throw err;
    }
  }

  /**
   * INSIDE the caller's write transaction: completes this process's claim with `reply`, so the answer
   * commits together with the work it describes (or neither does). Nothing is written when the claim
   * is not ours any more. Call it after the transaction's checks, and let no write after it throw:
   * lmdb-js commits whatever a callback wrote even when it throws.
   */
  completeInTxn(key: string, reply: StoredReply, nowMs: number): void {
    const store = this.store;
    const rec = store.idempotency.get(key);
    if (rec !== undefined && ownClaim(rec)) putDone(store, key, rec, reply, nowMs);
  }

  /**
   * Records the finished request: `reply` is replayed for 24 h from `nowMs`; null keeps the key used
   * (a retry gets 409) without storing the response. With `replace`, a reply already committed by
   * {@link completeInTxn} is replaced by the final one (e.g. once the live runtime adopted the change).
   */
  async complete(key: string, reply: StoredReply | null, nowMs: number, replace = false): Promise<void> {
    const store = this.store;
    try {
      await store.root.transaction(() => {
        const rec = store.idempotency.get(key);
        if (rec === undefined) return;
        if (ownClaim(rec) || (replace && rec.state === 'done')) putDone(store, key, rec, reply, nowMs);
      });
    } finally {
      this.unmarkRunning(key);
    }
  }

  /**
   * Drops the claim so the same key can be retried (the handler failed) - unless the handler's write
   * already committed the answer ({@link completeInTxn}): then the key stays used and that committed
   * answer is returned, so a failure after the commit can never free the key for a second run. The
   * check runs in a transaction queued after the handler's own, so it sees what the handler committed.
   */
  async release(key: string): Promise<StoredReply | null> {
    const store = this.store;
    try {
      return await store.root.transaction((): StoredReply | null => {
        const rec = store.idempotency.get(key);
        if (rec === undefined) return null;
        if (rec.state === 'done') return rec.reply;
        if (!ownClaim(rec)) return null;
        store.index.removeSync(expiryKey(rec.expiresAtMs, key));
        store.idempotency.removeSync(key);
        return null;
      });
    } finally {
      this.unmarkRunning(key);
    }
  }
}
