/**
 * Live telemetry fan-out: the subscriptions of every dashboard socket and the delivery of decoded
 * samples to them. Transport-agnostic (stream-ws.ts adapts uWS sockets to {@link StreamPeer}).
 *
 * Slow consumers: a socket whose send buffer holds `maxBufferedBytes` or more gets no new samples;
 * they are counted, and once its buffer has drained below half of the bound it receives
 * `{"op":"dropped","count":N}` before the next sample. A slow dashboard never slows the ingest or
 * other dashboards, and its memory is bounded.
 *
 * Revocation: every socket whose ticket has been redeemed is indexed by the API key that issued the
 * ticket, so {@link StreamHub.closeKey} can end the streams of a revoked or expired key (4403). The
 * hub never reads key records itself; the revocation sweep (key-revocation-sweep.ts) tells it.
 *
 * Fairness: open sockets are bounded per API key (`maxSocketsPerKey`) and per organization
 * (`maxSocketsPerOrg`), far below the gateway-wide `maxSockets`, so one organization redeeming ticket
 * after ticket cannot take every socket. The bound is checked when the ticket is redeemed: a socket
 * over it is closed with 4429 (the ticket is used up), and its slot is never taken.
 */
import type { LiveSink } from './live-sink.js';
import { CLOSE, closeReason, notice, parseClientMessage } from './stream-protocol.js';
import type { TicketIssuer, TicketScope } from './ticket-issuer.js';
import type { LiveBatch } from './worker-protocol.js';

/** One connected socket as the hub sees it. */
export interface StreamPeer {
  /** Sends one message; the bytes are copied before it returns (uWS does), so the caller may reuse them. */
  send(msg: Uint8Array | string): void;
  bufferedAmount(): number;
  /** Runs `fn` with sends batched into one write (uWS cork). */
  cork(fn: () => void): void;
  /** Sends a close frame with `code` (the transport then calls {@link StreamSession.onClose}). */
  end(code: number, reason: string): void;
}

export interface StreamHubOptions {
  tickets: TicketIssuer;
  /** Per-socket send buffer bound. Default 1 MiB. */
  maxBufferedBytes?: number;
  /** Sockets that have not subscribed by then are closed (4408). Default 5 s. */
  subscribeTimeoutMs?: number;
  /** Concurrent sockets; more are closed with 1013 (try again later). Default 1,000. */
  maxSockets?: number;
  /** Open sockets per API key (redeemed tickets); more are closed with 4429. Default 50. */
  maxSocketsPerKey?: number;
  /** Open sockets per organization; more are closed with 4429. Default 200. */
  maxSocketsPerOrg?: number;
}

/** Default per-key and per-organization bounds on open sockets (docs/telemetry-stream.md). */
export const DEFAULT_MAX_STREAMS = { perKey: 50, perOrg: 200, gateway: 1_000 } as const;

interface Sub {
  peer: StreamPeer;
  fleetId: string;
  robots: Set<string> | null;
  dropped: number;
  /** The ticket's key could read alerts (`fleet:read`) when it asked: `alert` messages go to it. */
  alerts: boolean;
}

/** A socket whose ticket scope is known, as the per-key index holds it. */
export interface Keyed {
  fail(code: number, errCode: string, message: string): void;
}

// Error notice texts, also sent as the close frame's reason (all under its 123-byte limit).
const KEY_REVOKED_MESSAGE = 'the API key that issued this stream\'s ticket was revoked or has expired';
const TOO_MANY_MESSAGE = 'too many stream connections, retry later';
const REJECTED_TICKET_MESSAGE = 'ticket is missing, invalid, already used or expired, or its API key was revoked or has expired';
const SUBSCRIBE_TIMEOUT_MESSAGE = 'no subscribe message received in time';
const perKeyMessage = (max: number): string => `this API key already has ${max} open streams (its bound); close one, then retry with a new ticket`;
const perOrgMessage = (max: number): string => `this organization already has ${max} open streams (its bound); close one, then retry with a new ticket`;

/** Per-socket state machine: connected -> subscribed -> closed. */
export interface StreamSession {
  onMessage(data: ArrayBuffer): void;
  onDrain(): void;
  onClose(): void;
}

export class StreamHub implements LiveSink {
  readonly tickets: TicketIssuer;
  readonly maxBufferedBytes: number;
  private readonly subscribeTimeoutMs: number;
  private readonly maxSockets: number;
  private readonly maxSocketsPerKey: number;
  private readonly maxSocketsPerOrg: number;
  /** Open sockets with a redeemed ticket, per organization. */
  private readonly orgSockets = new Map<string, number>();
  private readonly byFleet = new Map<string, Set<Sub>>();
  private readonly peers = new Set<StreamPeer>();
  /** Sockets with a redeemed ticket, by the API key that issued it. */
  private readonly byKey = new Map<string, Set<Keyed>>();
  private closing = false;
  /** Samples not sent to some socket because it was slow (all sockets, since start). */
  droppedTotal = 0;

  constructor(opts: StreamHubOptions) {
    this.tickets = opts.tickets;
    this.maxBufferedBytes = opts.maxBufferedBytes ?? 1024 * 1024;
    this.subscribeTimeoutMs = opts.subscribeTimeoutMs ?? 5_000;
    this.maxSockets = opts.maxSockets ?? DEFAULT_MAX_STREAMS.gateway;
    this.maxSocketsPerKey = opts.maxSocketsPerKey ?? DEFAULT_MAX_STREAMS.perKey;
    this.maxSocketsPerOrg = opts.maxSocketsPerOrg ?? DEFAULT_MAX_STREAMS.perOrg;
  }

  get socketCount(): number {
    return this.peers.size;
  }

  hasSubscribers(fleetId: string): boolean {
    return this.byFleet.has(fleetId);
  }

  anySubscribers(): boolean {
    return this.byFleet.size > 0;
  }

  /** API keys with at least one open socket (for the revocation sweep). */
  apiKeyIds(): IterableIterator<string> {
    return this.byKey.keys();
  }

  /**
   * Closes every socket opened with a ticket of `apiKeyId` with 4403 (`key_revoked`): its key was
   * revoked or has expired. Returns how many were closed.
   */
  closeKey(apiKeyId: string): number {
    const set = this.byKey.get(apiKeyId);
    if (set === undefined) return 0;
    const holders = [...set];
    for (const h of holders) h.fail(CLOSE.keyRevoked, 'key_revoked', KEY_REVOKED_MESSAGE);
    return holders.length;
  }

  /**
   * A socket opened. `scope` is set when the ticket came as a subprotocol at the upgrade (already
   * redeemed); `ticketRejected` when that ticket was not valid.
   */
  connect(peer: StreamPeer, scope: TicketScope | null, ticketRejected: boolean): StreamSession {
    if (this.closing || this.peers.size >= this.maxSockets) {
      peer.send(notice.error('unavailable', TOO_MANY_MESSAGE));
      peer.end(1013, TOO_MANY_MESSAGE);
      return { onMessage() {}, onDrain() {}, onClose() {} };
    }
    if (ticketRejected) {
      peer.send(notice.error('invalid_ticket', REJECTED_TICKET_MESSAGE));
      peer.end(CLOSE.invalidTicket, REJECTED_TICKET_MESSAGE);
      return { onMessage() {}, onDrain() {}, onClose() {} };
    }
    this.peers.add(peer);
    let sub: Sub | null = null;
    let open = true;
    const timer = setTimeout(() => {
      if (open && sub === null) {
        peer.send(notice.error('subscribe_timeout', SUBSCRIBE_TIMEOUT_MESSAGE));
        peer.end(CLOSE.subscribeTimeout, SUBSCRIBE_TIMEOUT_MESSAGE);
      }
    }, this.subscribeTimeoutMs);
    const fail = (code: number, errCode: string, message: string): void => {
      if (!open) return;
      peer.send(notice.error(errCode, message));
      // The reason says why in words (clients show it); the error notice just sent carries errCode.
      peer.end(code, closeReason(message));
      // Nothing more from this socket is acted on (a ticket in a later message is not redeemed).
      open = false;
    };
    const keyed: Keyed = { fail };
    /** Counts the socket against its key's and organization's bounds; false (and closed) when over one. */
    const track = (s: TicketScope): boolean => this.count(s, keyed);
    if (scope !== null && !track(scope)) scope = null;
    return {
      onMessage: (data) => {
        if (!open) return;
        const parsed = parseClientMessage(data);
        if (!parsed.ok) return fail(CLOSE.badRequest, parsed.code, parsed.message);
        const { msg } = parsed;
        let fleetId: string;
        if (sub !== null) {
          fleetId = sub.fleetId; // re-subscribe: only the robot filter changes
        } else if (scope !== null) {
          fleetId = scope.fleetId;
        } else {
          const redeemed = msg.ticket === null ? null : this.tickets.redeem(msg.ticket);
          if (redeemed === null) return fail(CLOSE.invalidTicket, 'invalid_ticket', REJECTED_TICKET_MESSAGE);
          if (!track(redeemed)) return;
          scope = redeemed;
          fleetId = redeemed.fleetId;
        }
        clearTimeout(timer);
        if (sub === null) {
          sub = { peer, fleetId, robots: null, dropped: 0, alerts: scope?.alerts === true };
          let set = this.byFleet.get(fleetId);
          if (!set) this.byFleet.set(fleetId, (set = new Set()));
          set.add(sub);
        }
        sub.robots = msg.robotIds === null ? null : new Set(msg.robotIds);
        peer.send(notice.subscribed(fleetId, msg.robotIds));
      },
      onDrain: () => {
        if (sub !== null) this.sendDroppedNotice(sub);
      },
      onClose: () => {
        open = false;
        clearTimeout(timer);
        this.peers.delete(peer);
        // `scope` is set only once the socket was counted by track().
        if (scope !== null) this.uncount(scope, keyed);
        if (sub !== null) {
          const set = this.byFleet.get(sub.fleetId);
          set?.delete(sub);
          if (set?.size === 0) this.byFleet.delete(sub.fleetId);
          sub = null;
        }
      },
    };
  }

  /**
   * Admits a socket of another live protocol (the Foxglove endpoint, foxglove-hub.ts) whose ticket was
   * redeemed: the same gateway-wide, per-key and per-organization bounds as this hub's own sockets, and
   * the same revocation ({@link closeKey} calls `fail`) and shutdown ({@link close} ends `peer`). Over a
   * bound `fail` is called (1013 or 4429) and null returned; else the function that frees the slot,
   * to be called once when the socket closes.
   */
  admit(peer: StreamPeer, scope: TicketScope, fail: Keyed['fail']): (() => void) | null {
    if (this.closing || this.peers.size >= this.maxSockets) {
      fail(1013, 'unavailable', TOO_MANY_MESSAGE);
      return null;
    }
    const keyed: Keyed = { fail };
    if (!this.count(scope, keyed)) return null;
    this.peers.add(peer);
    return () => {
      this.peers.delete(peer);
      this.uncount(scope, keyed);
    };
  }

  /** Counts a socket against its key's and organization's bounds; false (and the socket failed) when over one. */
  private count(s: TicketScope, keyed: Keyed): boolean {
    let set = this.byKey.get(s.apiKeyId);
    if ((set?.size ?? 0) >= this.maxSocketsPerKey) {
      keyed.fail(CLOSE.tooManyStreams, 'rate_limited', perKeyMessage(this.maxSocketsPerKey));
      return false;
    }
    const inOrg = this.orgSockets.get(s.orgId) ?? 0;
    if (inOrg >= this.maxSocketsPerOrg) {
      keyed.fail(CLOSE.tooManyStreams, 'rate_limited', perOrgMessage(this.maxSocketsPerOrg));
      return false;
    }
    if (!set) this.byKey.set(s.apiKeyId, (set = new Set()));
    set.add(keyed);
    this.orgSockets.set(s.orgId, inOrg + 1);
    return true;
  }

  private uncount(s: TicketScope, keyed: Keyed): void {
    const set = this.byKey.get(s.apiKeyId);
    set?.delete(keyed);
    if (set?.size === 0) this.byKey.delete(s.apiKeyId);
    const inOrg = (this.orgSockets.get(s.orgId) ?? 1) - 1;
    if (inOrg > 0) this.orgSockets.set(s.orgId, inOrg);
    else this.orgSockets.delete(s.orgId);
  }

  /** Sends each sample message to the sockets of its fleet whose filter includes its robot. */
  publish(batch: LiveBatch): void {
    const { index, data, robotIds, fleetIds } = batch;
    // Group by socket first so each socket gets one corked write for the whole batch.
    const perSub = new Map<Sub, number[]>();
    for (let i = 0; i < index.length; i += 3) {
      const ri = index[i]!;
      const subs = this.byFleet.get(fleetIds[ri]!);
      if (!subs) continue;
      const robotId = robotIds[ri]!;
      for (const sub of subs) {
        if (sub.robots !== null && !sub.robots.has(robotId)) continue;
        let list = perSub.get(sub);
        if (!list) perSub.set(sub, (list = []));
        list.push(i);
      }
    }
    for (const [sub, list] of perSub) {
      sub.peer.cork(() => {
        this.sendDroppedNotice(sub);
        for (const i of list) {
          if (sub.peer.bufferedAmount() >= this.maxBufferedBytes) {
            sub.dropped++;
            this.droppedTotal++;
            continue;
          }
          sub.peer.send(data.subarray(index[i + 1], index[i + 2]));
        }
      });
    }
  }

  /**
   * Sends an `alert` message (`text`, JSON) to the sockets of `fleetId` that may read alerts and whose
   * robot filter includes `robotId` (an alert about no robot, e.g. a schedule, goes to every one).
   * Alerts are rare; a socket at its buffer bound skips it like a sample and is told `dropped`.
   */
  publishAlert(fleetId: string, robotId: string | null, text: string): void {
    const subs = this.byFleet.get(fleetId);
    if (!subs) return;
    for (const sub of subs) {
      if (!sub.alerts) continue;
      if (robotId !== null && sub.robots !== null && !sub.robots.has(robotId)) continue;
      sub.peer.cork(() => {
        this.sendDroppedNotice(sub);
        if (sub.peer.bufferedAmount() >= this.maxBufferedBytes) {
          sub.dropped++;
          this.droppedTotal++;
          return;
        }
        sub.peer.send(text);
      });
    }
  }

  /** Closes every socket with 1001 (gateway shutdown) and refuses new ones. */
  close(): void {
    this.closing = true;
    for (const peer of [...this.peers]) peer.end(CLOSE.goingAway, 'server shutting down');
  }

  private sendDroppedNotice(sub: Sub): void {
    if (sub.dropped > 0 && sub.peer.bufferedAmount() < this.maxBufferedBytes / 2) {
      sub.peer.send(notice.dropped(sub.dropped));
      sub.dropped = 0;
    }
  }
}

/** Creates the hub the ingest publishes to and the WebSocket route serves. */
export function createStreamHub(opts: StreamHubOptions): StreamHub {
  return new StreamHub(opts);
}
