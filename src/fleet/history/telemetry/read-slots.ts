/**
 * How many export store reads run at once, gateway-wide. A store read occupies one of libuv's four
 * pool threads for its whole query (chdb runs there), and so do LMDB's writes: five exports reading at
 * once would hold every thread and keep a stop's write waiting behind them. Exports take turns here
 * instead. The waiters are bounded twice: by the exports allowed at once (each waits with one read),
 * and by {@link MAX_WAITING}, past which a read is refused at once; a waiter whose export was abandoned
 * (its client went away) leaves the queue without reading.
 */
const MAX_READS = 1;
/** Reads waiting for their turn at most; more are refused (the caller answers 503 or ends its export). */
export const MAX_WAITING = 64;
let running = 0;
const waiting: (() => void)[] = [];

/** A read refused because {@link MAX_WAITING} reads already wait. */
export class ReadSlotsFull extends Error {
  constructor() {
    super(`telemetry history: ${MAX_WAITING} store reads already wait for their turn`);
  }
}

/**
 * Runs `read` when a slot is free.
 * @throws ReadSlotsFull when the queue is full; `signal.reason` when `signal` aborts before its turn
 */
export async function inReadSlot<T>(read: () => Promise<T>, signal?: AbortSignal): Promise<T> {
  signal?.throwIfAborted();
  if (running >= MAX_READS) {
    if (waiting.length >= MAX_WAITING) throw new ReadSlotsFull();
    await new Promise<void>((resolve, reject) => {
      const turn = (): void => {
        signal?.removeEventListener('abort', leave);
        resolve();
      };
      const leave = (): void => {
        const i = waiting.indexOf(turn);
        if (i >= 0) waiting.splice(i, 1);
        const why: unknown = signal!.reason;
        reject(why instanceof Error ? why : new Error(String(why)));
      };
      waiting.push(turn);
      signal?.addEventListener('abort', leave, { once: true });
    });
  } else running++;
  try {
    return await read();
  } finally {
    const next = waiting.shift();
    if (next !== undefined) next();
    else running--;
  }
}

/** Reads running and waiting (tests, metrics). */
export function readSlotStats(): { running: number; waiting: number } {
  return { running, waiting: waiting.length };
}
