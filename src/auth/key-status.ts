/**
 * Whether an API key may still be used, by its id: for holders of something the key obtained earlier
 * (a stream ticket, an open telemetry stream) that must end when the key is revoked or expires.
 *
 * Every call reads the record's current bytes from LMDB, so a `fleetgw admin revoke-key` made by
 * another process is seen on the next call; the decode is skipped while the bytes are unchanged
 * ({@link RawBytesCache}), which keeps a periodic sweep over many keys cheap.
 */
import type { Store } from '../store/lmdb.js';
import { RawBytesCache } from '../store/raw-bytes-cache.js';
import type { ApiKeyRecord } from '../store/records.js';

interface KeyValidity {
  revoked: boolean;
  expiresAtMs: number | null;
}

const caches = new WeakMap<Store, RawBytesCache<KeyValidity, ApiKeyRecord>>();

function validityCache(store: Store): RawBytesCache<KeyValidity, ApiKeyRecord> {
  let c = caches.get(store);
  if (c === undefined) {
    c = new RawBytesCache(store.apikeys, (rec) => ({ revoked: rec.revokedAtMs !== null, expiresAtMs: rec.expiresAtMs }));
    caches.set(store, c);
  }
  return c;
}

/**
 * True when the key `apiKeyId` exists, is not revoked and has not expired at `nowMs` (the same rules
 * as request authentication). One LMDB read.
 */
export function apiKeyUsable(store: Store, apiKeyId: string, nowMs: number): boolean {
  const key = validityCache(store).get(apiKeyId);
  if (key === undefined || key.revoked) return false;
  return key.expiresAtMs === null || nowMs < key.expiresAtMs;
}
