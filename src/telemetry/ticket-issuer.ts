/**
 * Single-use stream tickets: how a browser dashboard opens the telemetry WebSocket without ever
 * holding an API key. A server holding the key asks for a ticket (POST /v1/telemetry/stream-tickets)
 * and hands only the ticket to the browser.
 *
 * - 256 random bits, base64url; only the SHA-256 of a ticket is kept, so a heap dump or a log of the
 *   map reveals nothing usable. Lookup by digest needs no secret comparison at all.
 * - Scoped to one org + fleet, valid for at most 60 s, consumed by the first redeem (valid or not
 *   for the caller's purpose, it is gone).
 * - Bounded: at most `maxOutstanding` live tickets. Tickets all share one TTL, so insertion order is
 *   expiry order and expired ones are purged from the front. When full of live tickets, issuing
 *   fails (the route answers 429) instead of evicting someone else's ticket.
 */
import { createHash, randomBytes } from 'node:crypto';

export const MAX_TICKET_TTL_MS = 60_000;

export interface TicketScope {
  orgId: string;
  fleetId: string;
  /** The API key that asked (audit only). */
  apiKeyId: string;
}

export interface IssuedTicket {
  ticket: string;
  expiresAtMs: number;
}

export interface TicketIssuerOptions {
  /** Ticket lifetime, capped at 60 s. Default 30 s. */
  ttlMs?: number;
  /** Default 10,000. */
  maxOutstanding?: number;
  now?: () => number;
}

interface Entry extends TicketScope {
  expiresAtMs: number;
}

export class TicketCapacityError extends Error {
  constructor(readonly retryAfterS: number) {
    super('too many outstanding stream tickets');
  }
}

function digest(ticket: string): string {
  return createHash('sha256').update(ticket).digest('base64url');
}

export class TicketIssuer {
  readonly ttlMs: number;
  private readonly maxOutstanding: number;
  private readonly now: () => number;
  private readonly entries = new Map<string, Entry>();

  constructor(opts: TicketIssuerOptions = {}) {
    this.ttlMs = Math.min(MAX_TICKET_TTL_MS, Math.max(1, opts.ttlMs ?? 30_000));
    this.maxOutstanding = opts.maxOutstanding ?? 10_000;
    this.now = opts.now ?? Date.now;
  }

  /** Live (unexpired, unused) tickets. */
  get outstanding(): number {
    this.purge();
    return this.entries.size;
  }

  /** Mints a ticket for `scope`. Throws {@link TicketCapacityError} when the map is full. */
  issue(scope: TicketScope): IssuedTicket {
    this.purge();
    if (this.entries.size >= this.maxOutstanding) {
      throw new TicketCapacityError(Math.ceil(this.ttlMs / 1000));
    }
    const ticket = randomBytes(32).toString('base64url');
    const expiresAtMs = this.now() + this.ttlMs;
    this.entries.set(digest(ticket), { ...scope, expiresAtMs });
    return { ticket, expiresAtMs };
  }

  /** Consumes a ticket: its scope when valid and unexpired, else null. A second redeem returns null. */
  redeem(ticket: string): TicketScope | null {
    if (typeof ticket !== 'string' || ticket.length === 0 || ticket.length > 128) return null;
    const key = digest(ticket);
    const entry = this.entries.get(key);
    if (!entry) return null;
    this.entries.delete(key);
    if (entry.expiresAtMs <= this.now()) return null;
    return { orgId: entry.orgId, fleetId: entry.fleetId, apiKeyId: entry.apiKeyId };
  }

  private purge(): void {
    const t = this.now();
    for (const [key, entry] of this.entries) {
      if (entry.expiresAtMs > t) break;
      this.entries.delete(key);
    }
  }
}
