/**
 * Decoded LMDB values cached against their stored bytes.
 *
 * Every lookup still reads the value's raw bytes from LMDB (`getBinaryFast`: no decode, no copy), so
 * a change made by any process (e.g. `fleetgw admin revoke-key`) is seen on the very next read, exactly
 * as without the cache. Only the msgpack decode is skipped when the bytes are unchanged, which is what
 * costs on the request path (bench/README.md#http-read). Values handed out are shared between callers and must
 * be treated as read-only.
 *
 * Bound: at most `maxEntries` keys; past it the oldest inserted entry is dropped (a miss costs one
 * decode, nothing else).
 */
import type { Database } from 'lmdb';

/**
 * A value's stored bytes, or undefined when the key is absent. The view is over lmdb's reusable read
 * buffer: valid only until the next read of this environment, so compare or copy it right away.
 */
export function readRaw(db: Database<unknown, string>, key: string): Buffer | undefined {
  const fast = db.getBinaryFast(key);
  // lmdb-js overrides `length` on its reusable buffer (the memory behind it is larger): take a view
  // of exactly the value's bytes, which native helpers (equals, copy) then see correctly.
  return fast === undefined ? undefined : fast.subarray(0, fast.length);
}

interface Entry<V> {
  bytes: Buffer;
  value: V;
}

export class RawBytesCache<V, D = V> {
  private readonly entries = new Map<string, Entry<V>>();

  /**
   * @param derive turns a freshly decoded value into what is cached (e.g. a frozen view of it)
   */
  constructor(
    private readonly db: Database<D, string>,
    private readonly derive: (decoded: D, key: string) => V,
    private readonly maxEntries = 10_000,
  ) {}

  /** The cached form of `key`'s current value, or undefined when the key is absent. */
  get(key: string): V | undefined {
    const raw = readRaw(this.db, key);
    if (raw === undefined) {
      this.entries.delete(key);
      return undefined;
    }
    const hit = this.entries.get(key);
    if (hit !== undefined && hit.bytes.equals(raw)) return hit.value;
    // `raw` views lmdb's reusable read buffer: copy it before the next read overwrites it. The decode
    // below reads through the same read transaction, so it sees the same version as these bytes.
    const bytes = Buffer.from(raw);
    const decoded = this.db.get(key);
    if (decoded === undefined) return undefined;
    const value = this.derive(decoded, key);
    if (hit === undefined && this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { bytes, value });
    return value;
  }
}
