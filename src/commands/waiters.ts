/**
 * HTTP requests waiting for a robot's acknowledgement (or, for request/response commands, its
 * result) of a command.
 *
 * Bound: at most `max` waiters across all commands (default 10 000; each costs a timer and a closure,
 * about 0.5 kB). Policy when full: {@link AckWaiters.add} throws `ack_waiters_full` (503) and the
 * route checks {@link AckWaiters.room} before it dispatches anything, so a request is refused whole
 * instead of sending commands it then cannot report on.
 */
import { apiError } from '../errors/catalog.js';
import type { Delivery } from './types.js';

interface Waiter<T> {
  resolve(d: T): void;
  /** Called when the wait ends without an ack (elapsed, aborted or service closing). */
  expire(): void;
}

export const DEFAULT_MAX_WAITERS = 10_000;

/** Waits keyed by commandId, resolved with a `T` (bounded; see the header). */
export class Waiters<T> {
  private readonly byCommand = new Map<string, Set<Waiter<T>>>();
  private count = 0;

  constructor(private readonly max = DEFAULT_MAX_WAITERS) {}

  /** How many more waiters fit. */
  room(): number {
    return this.max - this.count;
  }

  get size(): number {
    return this.count;
  }

  /**
   * Waits for {@link AckWaiters.settle} on `commandId`, at most `ms`, or until `signal` aborts.
   * @param onExpire builds the answer when the wait ends without an ack (`timed_out`).
   */
  add(commandId: string, ms: number, signal: AbortSignal | undefined, onExpire: () => T): Promise<T> {
    if (this.count >= this.max) throw apiError('ack_waiters_full');
    return new Promise<T>((resolve) => {
      let done = false;
      const finish = (d: T): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.remove(commandId, waiter);
        resolve(d);
      };
      const waiter: Waiter<T> = { resolve: finish, expire: () => finish(onExpire()) };
      const onAbort = (): void => waiter.expire();
      const timer = setTimeout(() => waiter.expire(), ms);
      let set = this.byCommand.get(commandId);
      if (!set) {
        set = new Set();
        this.byCommand.set(commandId, set);
      }
      set.add(waiter);
      this.count++;
      if (signal?.aborted) waiter.expire();
      else signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Resolves every waiter of a command with its outcome. */
  settle(commandId: string, delivery: T): void {
    const set = this.byCommand.get(commandId);
    if (!set) return;
    for (const w of [...set]) w.resolve(delivery);
  }

  /** Ends every wait now, as if elapsed (service shutdown). */
  expireAll(): void {
    for (const set of [...this.byCommand.values()]) for (const w of [...set]) w.expire();
  }

  private remove(commandId: string, waiter: Waiter<T>): void {
    const set = this.byCommand.get(commandId);
    if (!set?.delete(waiter)) return;
    this.count--;
    if (set.size === 0) this.byCommand.delete(commandId);
  }
}

/** Waits for acknowledgements. */
export class AckWaiters extends Waiters<Delivery> {}
