/**
 * Bounded retention of idempotency records. Every record has an expiry (24 h after completion, or
 * 24 h + the lease after a claim) mirrored in the `index` db as `idemExpiry/<16 hex ms>/<key>`, so the
 * purge reads only what is due, oldest first, in batches: never a scan of the whole table.
 */
import type { Logger } from 'pino';
import type { Store } from '../store/lmdb.js';
import { EXPIRY_PREFIX, expiryKey } from './keys.js';

/** Entries removed per purge transaction: keeps each write transaction short. */
const PURGE_BATCH = 500;

/**
 * Deletes records whose expiry is at or before `nowMs`, at most `max` of them.
 * @returns how many records were deleted
 */
export async function purgeExpired(store: Store, nowMs: number, max = PURGE_BATCH): Promise<number> {
  const end = expiryKey(nowMs + 1, '');
  const due: string[] = [];
  for (const k of store.index.getKeys({ start: `${EXPIRY_PREFIX}/`, end, limit: max })) due.push(k);
  if (due.length === 0) return 0;
  return store.root.transaction(() => {
    let n = 0;
    for (const ik of due) {
      const key = ik.slice(ik.lastIndexOf('/') + 1);
      store.index.removeSync(ik);
      const rec = store.idempotency.get(key);
      // The record may have been re-claimed (new expiry) since the index was read.
      if (rec !== undefined && rec.expiresAtMs <= nowMs) {
        store.idempotency.removeSync(key);
        n += 1;
      }
    }
    return n;
  });
}

/**
 * Purges expired records now and then every `intervalMs` (default 10 min), in batches until none is
 * due. The timer is unref'd; call the returned function to stop it.
 */
export function startIdempotencyPurger(
  store: Store,
  opts: { intervalMs?: number; now?: () => number; log?: Logger } = {},
): () => void {
  const now = opts.now ?? Date.now;
  let stopped = false;
  let running = false;
  const tick = async (): Promise<void> => {
    if (running || stopped) return;
    running = true;
    try {
      while (!stopped && (await purgeExpired(store, now())) === PURGE_BATCH);
    } catch (err) {
      opts.log?.error({ err }, 'idempotency purge failed; the next pass tries again');
    } finally {
      running = false;
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), opts.intervalMs ?? 10 * 60 * 1000);
  timer.unref();
  return () => {
    stopped = true;
    clearInterval(timer);
  };
}
