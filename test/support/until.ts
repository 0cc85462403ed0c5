/** Polls `cond` until it holds; resolves with the time it took, rejects naming `what` after `timeoutMs`. */
export async function until(cond: () => Promise<boolean> | boolean, timeoutMs: number, what: string, pollMs = 25): Promise<number> {
  const start = Date.now();
  for (;;) {
    if (await cond()) return Date.now() - start;
    if (Date.now() - start >= timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, pollMs));
  }
}

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
