/**
 * Per-API-key rate limiting: one token bucket per key id, refilled continuously. A request spends one
 * token, and one more per {@link BODY_BYTES_PER_TOKEN} of its body.
 *
 * Bound: at most `maxKeys` buckets are tracked. When full, the least recently used bucket is evicted
 * (a Map keeps insertion order and every use re-inserts the key at the end). An evicted key starts over
 * with a full bucket on its next request; only authenticated keys get a bucket, so the number of live
 * buckets is bounded by the number of real keys that are busy at the same time.
 */
import { apiError } from '../errors/catalog.js';

export interface RateLimitOptions {
  /** Sustained requests per second per key (default 100). */
  ratePerSecond?: number;
  /** Bucket size: requests a quiet key may send at once (default 200). */
  burst?: number;
  /** Most buckets kept at once (default 10 000); least recently used is evicted past it. */
  maxKeys?: number;
}

export const DEFAULT_RATE_PER_SECOND = 100;
export const DEFAULT_BURST = 200;
export const DEFAULT_MAX_TRACKED_KEYS = 10_000;
/**
 * Body bytes that cost one more request: parsing and validating a body costs main-thread time in
 * proportion to its size, so a key sending large bodies spends its limit faster.
 */
export const BODY_BYTES_PER_TOKEN = 16 * 1024;

/** Tokens a request with a body of `bodyBytes` spends: 1, plus 1 per full {@link BODY_BYTES_PER_TOKEN}. */
export function requestCost(bodyBytes: number): number {
  return 1 + Math.floor(bodyBytes / BODY_BYTES_PER_TOKEN);
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/** Outcome of {@link RateLimiter.take}. */
export type TakeResult = { ok: true } | { ok: false; retryAfterS: number };

const TAKEN: TakeResult = Object.freeze({ ok: true });

/** Token buckets keyed by API key id. */
export class RateLimiter {
  readonly ratePerSecond: number;
  readonly burst: number;
  readonly maxKeys: number;
  private readonly buckets = new Map<string, Bucket>();
  /** The most recently used key: already last in `buckets`, so its use needs no re-insert. */
  private newest: string | null = null;

  constructor(opts: RateLimitOptions = {}) {
    this.ratePerSecond = positive(opts.ratePerSecond ?? DEFAULT_RATE_PER_SECOND, 'ratePerSecond');
    this.burst = positive(opts.burst ?? DEFAULT_BURST, 'burst');
    this.maxKeys = positive(opts.maxKeys ?? DEFAULT_MAX_TRACKED_KEYS, 'maxKeys');
  }

  /** Number of buckets currently tracked (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }

  /**
   * Spends `cost` tokens of `key`'s bucket (one per request, more for a large body: {@link requestCost}).
   * A cost above the bucket size is taken as the bucket size, so any request can pass a full bucket.
   * @returns ok, or the whole seconds (>= 1) after which `cost` tokens will be available
   */
  take(key: string, nowMs: number, cost = 1): TakeResult {
    const need = Math.min(cost, this.burst);
    let bucket = this.buckets.get(key);
    if (bucket === undefined) {
      if (this.buckets.size >= this.maxKeys) {
        const oldest = this.buckets.keys().next();
        if (oldest.done !== true) this.buckets.delete(oldest.value);
      }
      bucket = { tokens: this.burst, updatedMs: nowMs };
      this.buckets.set(key, bucket);
    } else {
      if (key !== this.newest) {
        // Re-insert: a Map iterates in insertion order, so the least recently used key comes first.
        this.buckets.delete(key);
        this.buckets.set(key, bucket);
      }
      const elapsedS = Math.max(0, nowMs - bucket.updatedMs) / 1000;
      bucket.tokens = Math.min(this.burst, bucket.tokens + elapsedS * this.ratePerSecond);
      bucket.updatedMs = nowMs;
    }
    this.newest = key;
    if (bucket.tokens >= need) {
      bucket.tokens -= need;
      return TAKEN;
    }
    const waitS = (need - bucket.tokens) / this.ratePerSecond;
    return { ok: false, retryAfterS: Math.max(1, Math.ceil(waitS)) };
  }

  /**
   * The `RateLimit-Policy` header (draft-ietf-httpapi-ratelimit-headers, structured-field form): a
   * bucket of `q` requests that refills over `w` seconds is exactly this token bucket (burst `q`,
   * `q / w` per second); `w` is rounded up when the ratio is not whole, so it never promises more.
   */
  get policyHeader(): string {
    return `"per-key";q=${Math.floor(this.burst)};w=${Math.max(1, Math.ceil(this.burst / this.ratePerSecond))}`;
  }

  /**
   * The `RateLimit` header for `key` as of its last {@link take}: `r` requests remain now, and after
   * `t` seconds without requests the bucket is full again.
   */
  header(key: string): string {
    const bucket = this.buckets.get(key);
    const tokens = bucket === undefined ? this.burst : bucket.tokens;
    const fullInS = Math.ceil((this.burst - tokens) / this.ratePerSecond);
    return `"per-key";r=${Math.max(0, Math.floor(tokens))};t=${Math.max(0, fullInS)}`;
  }

  /**
   * {@link take}, throwing the catalog's 429 `rate_limited` with a `Retry-After` header when empty.
   */
  consume(key: string, nowMs: number, cost = 1): void {
    const r = this.take(key, nowMs, cost);
    if (!r.ok) {
      throw apiError('rate_limited', { retryAfterS: r.retryAfterS }, { headers: { 'retry-after': String(r.retryAfterS) } });
    }
  }
}

function positive(n: number, name: string): number {
  if (!Number.isFinite(n) || n <= 0) throw new Error(`rate limit ${name} must be a positive number, got ${n}`);
  return n;
}
