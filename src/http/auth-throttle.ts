/**
 * Throttle on failed authentication, per client address: without it, one address could have
 * thousands of wrong keys checked a second.
 *
 * Each address has a token bucket of failures: {@link AuthThrottleOptions.burst} wrong credentials
 * at once, then {@link AuthThrottleOptions.refillPerSecond} a second. While an address's bucket is
 * empty, credentials from it that this process has not verified before get 429 `rate_limited` with
 * `Retry-After`, without being checked, so guessing from one address runs at the refill rate. The router
 * still verifies a credential it has verified before (the in-memory verified-key map of
 * src/auth/authenticate.ts): automation already running behind the same address (a NAT, a proxy) keeps
 * working while someone there sends wrong keys. The rule and its trade-off: docs/http-hardening.md.
 *
 * Addresses: IPv4 as is (also when mapped into IPv6), IPv6 by its /64 prefix, which one client
 * usually owns whole. Bound: at most {@link AuthThrottleOptions.maxAddresses} buckets; when full, the
 * least recently failed address is dropped (it starts again with a full bucket).
 */

export interface AuthThrottleOptions {
  /** Failures an address may have at once (default 20). */
  burst?: number;
  /** Failures per second an address regains (default 1). */
  refillPerSecond?: number;
  /** Most addresses tracked (default 10,000); least recently failed dropped past it. */
  maxAddresses?: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class AuthThrottle {
  readonly burst: number;
  readonly refillPerSecond: number;
  readonly maxAddresses: number;
  private readonly buckets = new Map<string, Bucket>();

  constructor(opts: AuthThrottleOptions = {}) {
    this.burst = positive(opts.burst ?? 20, 'burst');
    this.refillPerSecond = positive(opts.refillPerSecond ?? 1, 'refillPerSecond');
    this.maxAddresses = positive(opts.maxAddresses ?? 10_000, 'maxAddresses');
  }

  /** Addresses currently tracked. */
  get size(): number {
    return this.buckets.size;
  }

  /**
   * Whether `address` may have a credential checked now.
   * @returns null when it may, else the whole seconds (>= 1) until its next failure is allowed
   */
  blockedFor(address: string, nowMs: number): number | null {
    if (this.buckets.size === 0) return null;
    const bucket = this.buckets.get(clientKey(address));
    if (bucket === undefined) return null;
    const tokens = this.refill(bucket, nowMs);
    if (tokens >= 1) return null;
    return Math.max(1, Math.ceil((1 - tokens) / this.refillPerSecond));
  }

  /** Counts a failed authentication from `address`. */
  failed(address: string, nowMs: number): void {
    const key = clientKey(address);
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      if (this.buckets.size >= this.maxAddresses) {
        const oldest = this.buckets.keys().next();
        if (oldest.done !== true) this.buckets.delete(oldest.value);
      }
      bucket = { tokens: this.burst, updatedMs: nowMs };
    } else {
      // Re-insert: Map order is the eviction order, least recently failed first.
      this.buckets.delete(key);
      bucket.tokens = this.refill(bucket, nowMs);
      bucket.updatedMs = nowMs;
    }
    bucket.tokens = Math.max(0, bucket.tokens - 1);
    this.buckets.set(key, bucket);
  }

  private refill(bucket: Bucket, nowMs: number): number {
    const elapsedS = Math.max(0, nowMs - bucket.updatedMs) / 1000;
    return Math.min(this.burst, bucket.tokens + elapsedS * this.refillPerSecond);
  }
}

/**
 * The throttled unit of an address: IPv4 itself (`::ffff:10.0.0.1` -> `10.0.0.1`), IPv6 its first four
 * groups (the /64). Text as uWS gives it: IPv6 in full or `::` form.
 */
export function clientKey(address: string): string {
  if (!address.includes(':')) return address;
  const dot = address.lastIndexOf('.');
  if (dot !== -1) return address.slice(address.lastIndexOf(':') + 1);
  const [head = '', tail] = address.split('::');
  const groups = head === '' ? [] : head.split(':');
  if (tail !== undefined) {
    const after = tail === '' ? [] : tail.split(':');
    while (groups.length + after.length < 8) groups.push('0');
    groups.push(...after);
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, '').toLowerCase())
    .join(':')}::/64`;
}

function positive(n: number, name: string): number {
  if (!Number.isFinite(n) || n <= 0) throw new Error(`auth throttle ${name} must be a positive number, got ${n}`);
  return n;
}
