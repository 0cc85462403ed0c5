/**
 * Ends what a revoked or expired API key obtained for the live stream: its open sockets (closed with
 * 4403) and its unredeemed tickets (voided).
 *
 * `fleetgw admin revoke-key` writes LMDB from another process, so the server learns of a revocation
 * only by reading the key record. Reading it per sample or per message would put LMDB on the hot
 * path; instead a timer checks, every `intervalMs` (250 ms), each distinct key that has an open
 * socket or an outstanding ticket: one read per key per tick. The work per tick is bounded by the
 * socket bound plus the ticket bound (at most 11,000 keys at the defaults, each read skipping the
 * decode while the record is unchanged). A revoked key's streams therefore close within one interval
 * plus the read time, well under a second.
 */
import type { Logger } from 'pino';
import type { StreamHub } from './stream-hub.js';
import type { TicketIssuer } from './ticket-issuer.js';

export interface KeyRevocationSweepOptions {
  hub: StreamHub;
  tickets: TicketIssuer;
  /** Whether the key may still be used (one LMDB read; ApiKeyVerifier.keyUsable in src/auth/authenticate.ts). */
  keyUsable: (apiKeyId: string, nowMs: number) => boolean;
  /** Default 250 ms. */
  intervalMs?: number;
  log?: Logger;
  now?: () => number;
}

/** Runs one sweep now; returns the keys found unusable. */
export function sweepRevokedKeys(opts: KeyRevocationSweepOptions): string[] {
  const now = (opts.now ?? Date.now)();
  const seen = new Set<string>();
  const revoked: string[] = [];
  const check = (apiKeyId: string): void => {
    if (seen.has(apiKeyId)) return;
    seen.add(apiKeyId);
    if (!opts.keyUsable(apiKeyId, now)) revoked.push(apiKeyId);
  };
  for (const k of opts.hub.apiKeyIds()) check(k);
  for (const k of opts.tickets.apiKeyIds()) check(k);
  // Acted on after the walk: closing sockets and voiding tickets changes the maps walked above.
  for (const k of revoked) {
    const closed = opts.hub.closeKey(k);
    const voided = opts.tickets.revokeKey(k);
    opts.log?.info({ keyId: k, closedSockets: closed, voidedTickets: voided }, `telemetry stream: api key ${k} is revoked or expired; closed ${closed} sockets, voided ${voided} tickets`);
  }
  return revoked;
}

/** Starts the periodic sweep; returns its stop function. */
export function startKeyRevocationSweep(opts: KeyRevocationSweepOptions): () => void {
  const timer = setInterval(() => {
    try {
      sweepRevokedKeys(opts);
    } catch (err: unknown) {
      // A failed read (e.g. the store closing under a shutdown) must not kill the gateway: the next
      // tick tries again.
      opts.log?.error({ err }, 'telemetry stream key sweep failed; the next tick tries again');
    }
  }, opts.intervalMs ?? 250);
  timer.unref();
  return () => clearInterval(timer);
}
