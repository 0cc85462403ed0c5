/**
 * Single-use stream tickets: how a browser dashboard opens the telemetry WebSocket without ever
 * holding an API key. A server holding the key asks for a ticket (POST /v1/telemetry/stream-tickets)
 * and hands only the ticket to the browser.
 *
 * - 256 random bits, base64url; only the SHA-256 of a ticket is kept, so a heap dump or a log of the
 *   map reveals nothing usable. Lookup by digest needs no secret comparison at all.
 * - Scoped to one org + fleet, valid for at most 60 s, consumed by the first redeem (valid or not
 *   for the caller's purpose, it is gone).
 * - Refused at redemption when the API key that asked for it is no longer usable (revoked, expired):
 *   `keyUsable` is asked once per redeem, i.e. once per socket, never per message.
 * - Bounded three ways: at most `maxPerKey` outstanding (unredeemed, unexpired) tickets per API key,
 *   `maxPerOrg` per organization and `maxOutstanding` gateway-wide. The per-key and per-org bounds
 *   are far below the gateway-wide one, so one organization cannot starve the others. When a bound is
 *   reached, issuing fails (the route answers 429 naming the bound) instead of evicting someone
 *   else's ticket. Tickets all share one TTL, so insertion order is expiry order: expired ones are
 *   purged from the front, and the first ticket of a group is the one that frees a slot first.
 */
import { createHash, randomBytes } from 'node:crypto';

export const MAX_TICKET_TTL_MS = 60_000;
/** Default bounds on outstanding tickets (docs/telemetry-stream.md). */
export const DEFAULT_MAX_TICKETS = { perKey: 100, perOrg: 500, gateway: 10_000 } as const;

export interface TicketScope {
  orgId: string;
  fleetId: string;
  /** The API key that asked: its revocation or expiry voids the ticket and the stream it opened. */
  apiKeyId: string;
  /** The asker may read alerts (`fleet:read`): the stream then also carries `alert` messages. */
  alerts?: boolean;
}

export interface IssuedTicket {
  ticket: string;
  expiresAtMs: number;
}

export interface TicketIssuerOptions {
  /** Ticket lifetime, capped at 60 s. Default 30 s. */
  ttlMs?: number;
  /** Gateway-wide bound. Default 10,000. */
  maxOutstanding?: number;
  /** Bound per organization. Default 500. */
  maxPerOrg?: number;
  /** Bound per API key. Default 100. */
  maxPerKey?: number;
  /** Whether the key that issued a ticket may still use it (not revoked, not expired). Default: always. */
  keyUsable?: (apiKeyId: string, nowMs: number) => boolean;
  now?: () => number;
}

interface Entry extends TicketScope {
  expiresAtMs: number;
}

/** Which bound refused a ticket. */
export type TicketBound = 'api_key' | 'organization' | 'gateway';

export class TicketCapacityError extends Error {
  constructor(
    readonly bound: TicketBound,
    readonly max: number,
    readonly retryAfterS: number,
  ) {
    super(`too many outstanding stream tickets (${bound} bound: ${max})`);
  }
}

function digest(ticket: string): string {
  return createHash('sha256').update(ticket).digest('base64url');
}

/** Outstanding ticket digests per group id (org or key), oldest first. */
class GroupIndex {
  private readonly groups = new Map<string, Set<string>>();

  count(id: string): number {
    return this.groups.get(id)?.size ?? 0;
  }

  oldest(id: string): string | undefined {
    return this.groups.get(id)?.values().next().value;
  }

  ids(): IterableIterator<string> {
    return this.groups.keys();
  }

  digests(id: string): string[] {
    return [...(this.groups.get(id) ?? [])];
  }

  add(id: string, key: string): void {
    let set = this.groups.get(id);
    if (set === undefined) this.groups.set(id, (set = new Set()));
    set.add(key);
  }

  remove(id: string, key: string): void {
    const set = this.groups.get(id);
    if (set === undefined) return;
    set.delete(key);
    if (set.size === 0) this.groups.delete(id);
  }
}

export class TicketIssuer {
  readonly ttlMs: number;
  readonly maxOutstanding: number;
  readonly maxPerOrg: number;
  readonly maxPerKey: number;
  private readonly keyUsable: (apiKeyId: string, nowMs: number) => boolean;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();
  private readonly byOrg = new GroupIndex();
  private readonly byKey = new GroupIndex();

  constructor(opts: TicketIssuerOptions = {}) {
    this.ttlMs = Math.min(MAX_TICKET_TTL_MS, Math.max(1, opts.ttlMs ?? 30_000));
    this.maxOutstanding = opts.maxOutstanding ?? DEFAULT_MAX_TICKETS.gateway;
    this.maxPerOrg = opts.maxPerOrg ?? DEFAULT_MAX_TICKETS.perOrg;
    this.maxPerKey = opts.maxPerKey ?? DEFAULT_MAX_TICKETS.perKey;
    this.keyUsable = opts.keyUsable ?? (() => true);
    this.now = opts.now ?? Date.now;
  }

  /** Live (unexpired, unused) tickets. */
  get outstanding(): number {
    this.purge();
    return this.entries.size;
  }

  /** API keys that hold at least one outstanding ticket (for the revocation sweep). */
  apiKeyIds(): IterableIterator<string> {
    this.purge();
    return this.byKey.ids();
  }

  /**
   * Mints a ticket for `scope`.
   * @throws TicketCapacityError naming the bound (key, organization, gateway) that is full
   */
  issue(scope: TicketScope): IssuedTicket {
    this.purge();
    if (this.byKey.count(scope.apiKeyId) >= this.maxPerKey) this.full('api_key', this.maxPerKey, this.byKey.oldest(scope.apiKeyId));
    if (this.byOrg.count(scope.orgId) >= this.maxPerOrg) this.full('organization', this.maxPerOrg, this.byOrg.oldest(scope.orgId));
    if (this.entries.size >= this.maxOutstanding) this.full('gateway', this.maxOutstanding, this.entries.keys().next().value);
    const ticket = randomBytes(32).toString('base64url');
    const expiresAtMs = this.now() + this.ttlMs;
    const key = digest(ticket);
    this.entries.set(key, { orgId: scope.orgId, fleetId: scope.fleetId, apiKeyId: scope.apiKeyId, alerts: scope.alerts === true, expiresAtMs });
    this.byOrg.add(scope.orgId, key);
    this.byKey.add(scope.apiKeyId, key);
    return { ticket, expiresAtMs };
  }

  /**
   * Consumes a ticket: its scope when valid, unexpired and its API key still usable, else null. A
   * second redeem returns null.
   */
  redeem(ticket: string): TicketScope | null {
    if (typeof ticket !== 'string' || ticket.length === 0 || ticket.length > 128) return null;
    const key = digest(ticket);
    const entry = this.entries.get(key);
    if (!entry) return null;
    this.delete(key, entry);
    const now = this.now();
    if (entry.expiresAtMs <= now) return null;
    if (!this.keyUsable(entry.apiKeyId, now)) return null;
    return { orgId: entry.orgId, fleetId: entry.fleetId, apiKeyId: entry.apiKeyId, ...(entry.alerts === true ? { alerts: true } : {}) };
  }

  /** Voids every outstanding ticket of `apiKeyId` (its key was revoked or expired). Returns how many. */
  revokeKey(apiKeyId: string): number {
    const keys = this.byKey.digests(apiKeyId);
    for (const key of keys) {
      const entry = this.entries.get(key);
      if (entry !== undefined) this.delete(key, entry);
    }
    return keys.length;
  }

  private full(bound: TicketBound, max: number, oldestKey: string | undefined): never {
    // The oldest ticket of the full group expires first: that is when a slot frees at the latest.
    const oldest = oldestKey === undefined ? undefined : this.entries.get(oldestKey);
    const waitMs = oldest === undefined ? this.ttlMs : oldest.expiresAtMs - this.now();
    throw new TicketCapacityError(bound, max, Math.max(1, Math.ceil(waitMs / 1000)));
  }

  private delete(key: string, entry: Entry): void {
    this.entries.delete(key);
    this.byOrg.remove(entry.orgId, key);
    this.byKey.remove(entry.apiKeyId, key);
  }

  private purge(): void {
    const t = this.now();
    for (const [key, entry] of this.entries) {
      if (entry.expiresAtMs > t) break;
      this.delete(key, entry);
    }
  }
}
