/**
 * Where large request bodies wait to be parsed and validated: one per event-loop turn, in arrival
 * order. Parsing costs main-thread time in proportion to the body (JSON.parse and the duplicate-key
 * scan of json-scan.ts take 10-60 ms for 1 MiB here); run back to back, a burst of large bodies would
 * hold every request read meanwhile, stops included. One per turn lets uWS read the sockets between
 * two large bodies, and a small body (a stop) is served in the turn it is read, ahead of them.
 *
 * Bound: at most {@link MAX_QUEUED_BODY_BYTES} of bodies wait at once; a body that would pass it is
 * refused with 503 `bodies_queued_full` and `Retry-After`, unparsed.
 */
import { apiError } from '../errors/catalog.js';
import { BODY_BYTES_PER_TOKEN } from './rate-limit.js';

/**
 * Bodies larger than this are parsed in their own turn; smaller ones at once. The size of a body that
 * spends no extra rate-limit token: below it, parsing is cheap enough not to be queued or charged.
 */
export const LARGE_BODY_BYTES = BODY_BYTES_PER_TOKEN;

/** Most body bytes waiting in the lane at once (64 large bodies of the 1 MiB default limit). */
export const MAX_QUEUED_BODY_BYTES = 64 * 1024 * 1024;

interface Waiting {
  bytes: number;
  run(): void;
}

/** Where a task learns that its client went away (the router's AbortSource; read only when its turn comes). */
type AbortSource = AbortSignal | { readonly signal: AbortSignal };

/** A FIFO of body tasks, one run per event-loop turn. */
export class BodyLane {
  // At most MAX_QUEUED_BODY_BYTES / LARGE_BODY_BYTES (4096) entries: shift() stays cheap.
  private readonly waiting: Waiting[] = [];
  private queuedBytes = 0;
  private scheduled = false;

  constructor(private readonly maxQueuedBytes = MAX_QUEUED_BODY_BYTES) {}

  /** Body bytes waiting now (for tests). */
  get bytesWaiting(): number {
    return this.queuedBytes;
  }

  /**
   * Runs `task` in a later event-loop turn, after the tasks queued before it.
   * @param bytes the size of the body the task parses (counted against the bound)
   * @param abort when its client has gone by the task's turn, the task is dropped unparsed (its promise
   *   rejects with {@link ClientGone}; no answer is sent to a client that left)
   * @throws ApiError 503 `bodies_queued_full` when the lane holds too many bytes already
   */
  run<T>(bytes: number, task: () => T | Promise<T>, abort?: AbortSource): Promise<T> {
    if (this.queuedBytes + bytes > this.maxQueuedBytes) {
      throw apiError('bodies_queued_full', { retryAfterS: 1 }, { headers: { 'retry-after': '1' } });
    }
    this.queuedBytes += bytes;
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({
        bytes,
        run: () => {
          if (abort !== undefined && (abort instanceof AbortSignal ? abort : abort.signal).aborted) {
            reject(new ClientGone());
            return;
          }
          try {
            resolve(task());
          } catch (err: unknown) {
            // What a task throws is passed on as is (an ApiError, or the error the router logs as internal).
            reject(err instanceof Error ? err : new Error(String(err)));
          }
        },
      });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.waiting.length === 0) return;
    this.scheduled = true;
    // An immediate queued from inside an immediate runs in the next turn, after uWS's next poll.
    setImmediate(this.next);
  }

  private readonly next = (): void => {
    this.scheduled = false;
    const item = this.waiting.shift()!;
    this.queuedBytes -= item.bytes;
    item.run();
    this.schedule();
  };
}

/** Why a dropped task's promise rejects: its client went away while it waited. */
export class ClientGone extends Error {
  constructor() {
    super('the client went away before its body was parsed');
  }
}
