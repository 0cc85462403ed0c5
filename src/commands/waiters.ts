/**
 * HTTP requests waiting for a robot's acknowledgement (or, for request/response commands, its
 * result) of a command.
 *
 * Bound: at most `max` waiters across all commands (default 10 000; a single wait costs a timer and
 * a closure, about 0.5 kB; a bulk request's group wait shares one timer, one abort listener and one
 * promise, and counts one waiter per command). Policy when full: {@link AckWaiters.add} throws `ack_waiters_full` (503) and the
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
   * @param onEnd called synchronously when the wait ends, however it ends, before the promise settles
   *   (whatever must happen in the turn the ack arrived, not a microtask later)
   */
  add(commandId: string, ms: number, signal: AbortSignal | undefined, onExpire: () => T, onEnd: () => void = noop): Promise<T> {
    if (this.count >= this.max) throw apiError('ack_waiters_full');
    return new Promise<T>((resolve) => {
      let done = false;
      const finish = (d: T): void => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        this.remove(commandId, waiter);
        onEnd();
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

  /**
   * Waits for {@link Waiters.settle} on each of `commandIds` with ONE timer, one abort listener and one
   * promise for the whole group (a 100-robot request would otherwise allocate a hundred of each).
   * Counts as `commandIds.length` waiters against the bound; each command is answered on its own
   * (settled, or `onExpire(commandId)` when the shared time elapses or `signal` aborts).
   * @param onEnd as for {@link Waiters.add}: called synchronously when the whole group is answered
   * @throws ApiError `ack_waiters_full` when the group does not fit (nothing is registered)
   */
  addMany(commandIds: readonly string[], ms: number, signal: AbortSignal | undefined, onExpire: (commandId: string) => T, onEnd: () => void = noop): Promise<T[]> {
    if (this.count + commandIds.length > this.max) throw apiError('ack_waiters_full');
    const n = commandIds.length;
    if (n === 0) return Promise.resolve([]);
    return new Promise<T[]>((resolve) => {
      const results = new Array<T>(n);
      const members: (Waiter<T> | null)[] = new Array<Waiter<T> | null>(n);
      let open = n;
      const end = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        onEnd();
        resolve(results);
      };
      const expireRest = (): void => {
        for (let i = 0; i < n; i++) members[i]?.expire();
      };
      const onAbort = (): void => expireRest();
      for (let i = 0; i < n; i++) {
        const commandId = commandIds[i] as string;
        const member: Waiter<T> = {
          resolve: (d: T): void => {
            if (members[i] !== member) return;
            members[i] = null;
            this.remove(commandId, member);
            results[i] = d;
            if (--open === 0) end();
          },
          expire: (): void => member.resolve(onExpire(commandId)),
        };
        members[i] = member;
        let set = this.byCommand.get(commandId);
        if (!set) {
          set = new Set();
          this.byCommand.set(commandId, set);
        }
        set.add(member);
        this.count++;
      }
      const timer = setTimeout(expireRest, ms);
      if (signal?.aborted) expireRest();
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

function noop(): void {}

/** Waits for acknowledgements. */
export class AckWaiters extends Waiters<Delivery> {}
