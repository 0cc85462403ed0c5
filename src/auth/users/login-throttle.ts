/**
 * Throttle on failed logins, per account and per client address (docs/sessions.md).
 *
 * Each account and each address has a token bucket of failures; while either bucket is empty, a
 * login for that account or from that address gets 429 with Retry-After WITHOUT the password being
 * checked, so guessing runs at the refill rate whatever the number of addresses (account bucket) or
 * accounts (address bucket) used. Defaults: an account may fail 5 times at once then once a minute;
 * an address 20 times at once then once every 6 s.
 *
 * A check takes its token BEFORE the password is checked ({@link LoginThrottle.take}) and gives it
 * back only when the password was right or no check ran ({@link LoginThrottle.refund}): checks run
 * concurrently (scrypt on the thread pool), so counting a failure after its check would let every
 * login that arrives during the checks in flight pass the same last token. A successful login
 * returns its own token and refills nothing else.
 *
 * Bound: each map holds at most `maxEntries` buckets; when full, the least recently charged entry is
 * dropped (it starts again with a full bucket); a bucket refunded back to full is dropped at once. Hand-written (like src/http/auth-throttle.ts, which the
 * auth layer may not import): twenty lines of arithmetic, no library fits both keys.
 *
 * An address that logged in to an account successfully within {@link KNOWN_ADDRESS_MS} draws from a
 * bucket of its own for that account (same policy), not the account's shared one: someone who knows
 * an email can keep the shared bucket empty (one wrong password a minute from anywhere), which then
 * delays only logins from addresses the account has not used lately. The alternative, no per-account
 * bound, lets a botnet guess one account's password from many addresses. Known addresses are kept in
 * memory (bounded like the buckets, least recently successful dropped), so a restart forgets them.
 */

export interface BucketPolicy {
  burst: number;
  refillPerSecond: number;
}

export interface LoginThrottleOptions {
  account?: BucketPolicy;
  address?: BucketPolicy;
  /** Per map (default 10,000). */
  maxEntries?: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

class Buckets {
  private readonly map = new Map<string, Bucket>();

  constructor(
    private readonly policy: BucketPolicy,
    private readonly maxEntries: number,
  ) {}

  get size(): number {
    return this.map.size;
  }

  /** Seconds until `key` may fail again, or null when it may now. */
  blockedFor(key: string, nowMs: number): number | null {
    const b = this.map.get(key);
    if (b === undefined) return null;
    const tokens = this.refill(b, nowMs);
    if (tokens >= 1) return null;
    return Math.max(1, Math.ceil((1 - tokens) / this.policy.refillPerSecond));
  }

  /** Spends one token of `key` (the caller checked {@link blockedFor} first). */
  take(key: string, nowMs: number): void {
    let b = this.map.get(key);
    if (b === undefined) {
      if (this.map.size >= this.maxEntries) {
        const oldest = this.map.keys().next();
        if (oldest.done !== true) this.map.delete(oldest.value);
      }
      b = { tokens: this.policy.burst, updatedMs: nowMs };
    } else {
      this.map.delete(key); // re-inserted below: Map order is the eviction order
      b.tokens = this.refill(b, nowMs);
      b.updatedMs = nowMs;
    }
    b.tokens = Math.max(0, b.tokens - 1);
    this.map.set(key, b);
  }

  /** Gives back one token of `key`; a bucket that is full again is the same as none. */
  refund(key: string, nowMs: number): void {
    const b = this.map.get(key);
    if (b === undefined) return; // dropped meanwhile: it starts full anyway
    b.tokens = Math.min(this.policy.burst, this.refill(b, nowMs) + 1);
    b.updatedMs = nowMs;
    if (b.tokens >= this.policy.burst) this.map.delete(key);
  }

  private refill(b: Bucket, nowMs: number): number {
    return Math.min(this.policy.burst, b.tokens + (Math.max(0, nowMs - b.updatedMs) / 1000) * this.policy.refillPerSecond);
  }
}

/** How long after a successful login its address keeps its own bucket for the account (30 days). */
export const KNOWN_ADDRESS_MS = 30 * 24 * 3600 * 1000;

export const DEFAULT_ACCOUNT_POLICY: BucketPolicy = { burst: 5, refillPerSecond: 1 / 60 };
export const DEFAULT_ADDRESS_POLICY: BucketPolicy = { burst: 20, refillPerSecond: 1 / 6 };

export class LoginThrottle {
  private readonly accounts: Buckets;
  private readonly addresses: Buckets;
  /** Buckets of known addresses, keyed like {@link known}; apart so no email can name one. */
  private readonly knownAccounts: Buckets;
  /** `account \n address` -> last successful login (ms), least recently successful first. */
  private readonly known = new Map<string, number>();
  private readonly maxEntries: number;

  constructor(opts: LoginThrottleOptions = {}) {
    const max = opts.maxEntries ?? 10_000;
    this.maxEntries = max;
    this.accounts = new Buckets(opts.account ?? DEFAULT_ACCOUNT_POLICY, max);
    this.knownAccounts = new Buckets(opts.account ?? DEFAULT_ACCOUNT_POLICY, max);
    this.addresses = new Buckets(opts.address ?? DEFAULT_ADDRESS_POLICY, max);
  }

  /** Tracked entries (accounts, addresses). */
  get sizes(): { accounts: number; addresses: number } {
    return { accounts: this.accounts.size, addresses: this.addresses.size };
  }

  /**
   * Whether a login for `account` (the lower-cased email) from `address` may be checked now.
   * @returns null when it may, else the whole seconds (>= 1) to wait and which bound is reached
   */
  blockedFor(account: string, address: string, nowMs: number): { retryAfterS: number; bound: 'account' | 'address' } | null {
    const [buckets, key] = this.accountBucket(account, address, nowMs);
    const byAccount = buckets.blockedFor(key, nowMs);
    const byAddress = this.addresses.blockedFor(address, nowMs);
    if (byAccount === null && byAddress === null) return null;
    if (byAddress === null || (byAccount !== null && byAccount >= byAddress)) return { retryAfterS: byAccount ?? 1, bound: 'account' };
    return { retryAfterS: byAddress, bound: 'address' };
  }

  /**
   * Takes one token from the account's and the address's bucket before a password check, or none
   * when either is empty. Checking and taking are one synchronous step, so however many logins run
   * at once, no more checks start than the buckets hold.
   * @returns null when the check may run (a token is taken), else what {@link blockedFor} returns
   */
  take(account: string, address: string, nowMs: number): { retryAfterS: number; bound: 'account' | 'address' } | null {
    const blocked = this.blockedFor(account, address, nowMs);
    if (blocked !== null) return blocked;
    const [buckets, key] = this.accountBucket(account, address, nowMs);
    buckets.take(key, nowMs);
    this.addresses.take(address, nowMs);
    return null;
  }

  /** Gives back the tokens {@link take} took: the password was right, or it was not checked. */
  refund(account: string, address: string, nowMs: number): void {
    const [buckets, key] = this.accountBucket(account, address, nowMs);
    buckets.refund(key, nowMs);
    this.addresses.refund(address, nowMs);
  }

  /**
   * Records a right password for `account` from `address` (after {@link refund}): for
   * {@link KNOWN_ADDRESS_MS} its logins for the account draw from their own bucket.
   */
  succeeded(account: string, address: string, nowMs: number): void {
    const key = knownKey(account, address);
    this.known.delete(key); // re-inserted: Map order is the eviction order
    if (this.known.size >= this.maxEntries) {
      const oldest = this.known.keys().next();
      if (oldest.done !== true) this.known.delete(oldest.value);
    }
    this.known.set(key, nowMs);
  }

  /** The account bucket a login of `account` from `address` draws from, and its key. */
  private accountBucket(account: string, address: string, nowMs: number): [Buckets, string] {
    if (this.known.size === 0) return [this.accounts, account];
    const key = knownKey(account, address);
    const at = this.known.get(key);
    return at !== undefined && nowMs - at < KNOWN_ADDRESS_MS ? [this.knownAccounts, key] : [this.accounts, account];
  }
}

function knownKey(account: string, address: string): string {
  return `${account}\n${address}`;
}
