/**
 * How many export store reads run at once, gateway-wide. A store read occupies one of libuv's four
 * pool threads for its whole query (chdb runs there), and so do LMDB's writes: five exports reading at
 * once would hold every thread and keep a stop's write waiting behind them. Exports take turns here
 * instead; the waiters are bounded by the HTTP requests in flight (each export waits with one read).
 */
const MAX_READS = 1;
let running = 0;
const waiting: (() => void)[] = [];

/** Runs `read` when a slot is free. */
export async function inReadSlot<T>(read: () => Promise<T>): Promise<T> {
  if (running >= MAX_READS) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await read();
  } finally {
    const next = waiting.shift();
    if (next !== undefined) next();
    else running--;
  }
}
