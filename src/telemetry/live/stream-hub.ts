/**
 * Live telemetry fan-out: the subscriptions of every dashboard socket and the delivery of decoded
 * samples to them. Transport-agnostic (stream-ws.ts adapts uWS sockets to {@link StreamPeer}).
 *
 * Topics: a subscription is a set of topics, one per (encoding, rate class, fleet) when it watches the
 * whole fleet, else one per (encoding, rate class, fleet, robot) it names. A sample is published once
 * per topic that has a subscriber; with a {@link TopicPublisher} (uWS) that is one native publish per
 * topic whatever the number of sockets, and peers without native topics get one send each. A socket
 * subscribes to topics only after its ticket was redeemed, and only to topics of its ticket's fleet
 * (the fleet id is part of every topic name), so a robot topic never reaches another fleet's socket.
 *
 * Decimation (`max_hz`): rate classes (stream-protocol.ts RATE_CLASSES_HZ) have their own topics; a
 * sample goes to a class's topics when that class is due for its robot by the robot's clock.
 *
 * Slow consumers: a socket whose send buffer holds `maxBufferedBytes` or more gets no new samples;
 * they are counted, and once its buffer has drained below half of the bound it receives
 * `{"op":"dropped","count":N}` before the next sample. With native topics a socket is measured
 * (`bufferedAmount`) every `backpressureCheckMs` and at each uWS drain, and between measurements its
 * buffer is estimated from above as measured + bytes published to its topics since (uWS queues
 * published messages until the end of the event-loop turn, so a burst is not yet in the measured
 * amount). The estimate is checked whenever a quarter of the bound has been published in total. An
 * over-bound socket is unsubscribed from its topics; the messages published to them meanwhile are its
 * drop count (exact: nothing else is withheld), and it is subscribed again once measured below half
 * the bound. So a socket's buffer stays under 1.25x the bound, below uWS's own limit (4x, stream-ws.ts),
 * which therefore never drops anything uncounted. A slow dashboard never slows the ingest or other
 * dashboards, and its memory is bounded.
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
import { CLOSE, closeReason, notice, parseClientMessage, type StreamEncoding } from './stream-protocol.js';
import { CLASSES, classOf, ENCODINGS, fleetTopic, robotTopic, takeSample, type RobotLive } from './stream-topics.js';
import type { TicketIssuer, TicketScope } from './ticket-issuer.js';
import type { LiveBatch } from '../decode/index.js';

/** One connected socket as the hub sees it. */
export interface StreamPeer {
  /**
   * `binary` true sends a binary message (the `binary` encoding's samples), else a text one. The
   * bytes are the peer's to keep (the hub hands each peer a copy it never reuses).
   */
  send(msg: Uint8Array | string, binary?: boolean): void;
  bufferedAmount(): number;
  /** Runs `fn` with sends batched into one write (uWS cork). */
  cork(fn: () => void): void;
  /** Sends a close frame with `code` (the transport then calls {@link StreamSession.onClose}). */
  end(code: number, reason: string): void;
  /**
   * Native topic subscription (uWS `ws.subscribe`). When the peer has both and the hub has a
   * {@link TopicPublisher}, its samples come through the publisher; otherwise through send().
   */
  subscribe?(topic: string): void;
  unsubscribe?(topic: string): void;
}

/** Publishes one message to every socket subscribed to a topic (uWS `app.publish`). */
export interface TopicPublisher {
  publish(topic: string, message: Uint8Array | string, binary: boolean): void;
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
  /** How often sockets on native topics are checked against `maxBufferedBytes`. Default 50 ms. */
  backpressureCheckMs?: number;
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
  encoding: StreamEncoding;
  /** Rate class index (0: every sample). */
  cls: number;
  /** Samples arrive through native topics (else through send()). */
  native: boolean;
  topics: Topic[];
  /** Native subscriber over its buffer bound: unsubscribed, `pausedAt[i]` = topics[i].published then. */
  paused: boolean;
  pausedAt: number[];
  /** bufferedAmount at its last measurement, and the sum of its topics' `bytes` then. */
  measured: number;
  markBytes: number;
}

interface Topic {
  name: string;
  /** Messages published to it so far (a paused socket's drop count is the difference). */
  published: number;
  /** Bytes published to it so far (the subscribers' buffer estimate). */
  bytes: number;
  /** Sockets subscribed natively right now. */
  native: number;
  /** Subscribers served by send(). */
  js: Set<Sub>;
  /** Subscriptions holding it (subscribed or paused): it is forgotten at 0. */
  refs: number;
}

/** A fleet with at least one subscribed socket. */
interface FleetLive {
  subs: Set<Sub>;
  /** Subscriptions by encoding * CLASSES + class (any robot filter): which topics can have readers. */
  use: Int32Array;
  names: string[];
  /** Robots of the fleet that sent samples while watched (forgotten with the fleet's last socket). */
  robots: Map<string, RobotLive>;
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
  private readonly fleets = new Map<string, FleetLive>();
  private readonly topics = new Map<string, Topic>();
  /** Subscriptions on native topics, checked every `backpressureCheckMs`. */
  private readonly nativeSubs = new Set<Sub>();
  private publisher: TopicPublisher | null = null;
  private readonly backpressureCheckMs: number;
  private sweepTimer: NodeJS.Timeout | null = null;
  /** Bytes published to native topics since the last estimate check. */
  private publishedSinceCheck = 0;
  private readonly peers = new Set<StreamPeer>();
  /** Sockets with a redeemed ticket, by the API key that issued it. */
  private readonly byKey = new Map<string, Set<Keyed>>();
  private closing = false;
  /** Drops already counted (told to their socket, or at its close); {@link droppedTotal} adds pending ones. */
  private dropsCounted = 0;

  constructor(opts: StreamHubOptions) {
    this.tickets = opts.tickets;
    this.maxBufferedBytes = opts.maxBufferedBytes ?? 1024 * 1024;
    this.subscribeTimeoutMs = opts.subscribeTimeoutMs ?? 5_000;
    this.maxSockets = opts.maxSockets ?? DEFAULT_MAX_STREAMS.gateway;
    this.maxSocketsPerKey = opts.maxSocketsPerKey ?? DEFAULT_MAX_STREAMS.perKey;
    this.maxSocketsPerOrg = opts.maxSocketsPerOrg ?? DEFAULT_MAX_STREAMS.perOrg;
    this.backpressureCheckMs = opts.backpressureCheckMs ?? 50;
  }

  /**
   * Delivers samples through `publisher` to peers that support native topics (stream-ws.ts passes
   * uWS's `app.publish`). Set before sockets connect.
   */
  useTopics(publisher: TopicPublisher): void {
    this.publisher = publisher;
  }

  /**
   * Samples (and alerts) not sent to some socket because it was slow, since start: those already
   * told to their socket or counted at its close, plus what paused sockets have missed so far.
   */
  get droppedTotal(): number {
    let pending = 0;
    for (const sub of this.nativeSubs) {
      if (!sub.paused) continue;
      for (let i = 0; i < sub.topics.length; i++) pending += sub.topics[i]!.published - sub.pausedAt[i]!;
    }
    return this.dropsCounted + pending;
  }

  get socketCount(): number {
    return this.peers.size;
  }

  hasSubscribers(fleetId: string): boolean {
    return this.fleets.has(fleetId);
  }

  anySubscribers(): boolean {
    return this.fleets.size > 0;
  }

  /** Topics with at least one subscription (a gauge for memory accounting and tests). */
  get topicCount(): number {
    return this.topics.size;
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
          sub = {
            peer, fleetId, robots: null, dropped: 0, alerts: scope?.alerts === true, encoding: 'json', cls: 0,
            native: this.publisher !== null && peer.subscribe !== undefined && peer.unsubscribe !== undefined,
            topics: [], paused: false, pausedAt: [], measured: 0, markBytes: 0,
          };
          let fleet = this.fleets.get(fleetId);
          if (!fleet) {
            fleet = { subs: new Set(), use: new Int32Array(ENCODINGS.length * CLASSES), names: [], robots: new Map() };
            for (let e = 0; e < ENCODINGS.length; e++) for (let c = 0; c < CLASSES; c++) fleet.names.push(fleetTopic(e, c, fleetId));
            this.fleets.set(fleetId, fleet);
          }
          fleet.subs.add(sub);
        } else {
          this.detach(sub);
        }
        sub.robots = msg.robotIds === null ? null : new Set(msg.robotIds);
        sub.encoding = msg.encoding;
        sub.cls = classOf(msg.maxHz);
        // The confirmation goes first: samples of the new topics follow it.
        peer.send(notice.subscribed(fleetId, msg.robotIds, msg.encoding, msg.maxHz));
        this.attach(sub);
        this.sendDroppedNotice(sub);
      },
      onDrain: () => {
        if (sub === null) return;
        if (sub.native) this.measure(sub);
        else this.sendDroppedNotice(sub);
      },
      onClose: () => {
        open = false;
        clearTimeout(timer);
        this.peers.delete(peer);
        // `scope` is set only once the socket was counted by track().
        if (scope !== null) this.uncount(scope, keyed);
        if (sub !== null) {
          this.detach(sub, true);
          const fleet = this.fleets.get(sub.fleetId);
          fleet?.subs.delete(sub);
          if (fleet?.subs.size === 0) this.fleets.delete(sub.fleetId);
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

  /**
   * Publishes each sample of `batch` (in order) to the topics that have subscribers: per rate class
   * due for its robot, per encoding in use, the fleet's topic and the robot's topic.
   */
  publish(batch: LiveBatch): void {
    const { index, data, robotIds, fleetIds, rows, rowSpans, ts } = batch;
    const now = ts === undefined ? Date.now() : 0;
    for (let i = 0, k = 0; i < index.length; i += 3, k++) {
      const ri = index[i]!;
      const fleetId = fleetIds[ri]!;
      const fleet = this.fleets.get(fleetId);
      if (fleet === undefined) continue;
      const robotId = robotIds[ri]!;
      let robot = fleet.robots.get(robotId);
      if (robot === undefined) {
        robot = { next: new Float64Array(CLASSES), names: [] };
        fleet.robots.set(robotId, robot);
      }
      const t = ts === undefined ? now : ts[k]!;
      const use = fleet.use;
      for (let c = 0; c < CLASSES; c++) {
        if (use[c] === 0 && use[CLASSES + c] === 0) continue;
        if (c > 0 && !takeSample(robot, c, t)) continue;
        for (let e = 0; e < ENCODINGS.length; e++) {
          const u = e * CLASSES + c;
          if (use[u] === 0) continue;
          let msg: Uint8Array;
          if (e === 0) msg = data.subarray(index[i + 1], index[i + 2]);
          else if (rows !== undefined && rowSpans !== undefined) msg = rows.subarray(rowSpans[k * 2], rowSpans[k * 2 + 1]);
          else continue;
          const binary = e === 1;
          this.deliver(this.topics.get(fleet.names[u]!), msg, binary);
          const name = (robot.names[u] ??= robotTopic(e, c, fleetId, robotId));
          this.deliver(this.topics.get(name), msg, binary);
        }
      }
    }
  }

  /**
   * Sends an `alert` message (`text`, JSON) to the sockets of `fleetId` that may read alerts and whose
   * robot filter includes `robotId` (an alert about no robot, e.g. a schedule, goes to every one).
   * Alerts are rare; a socket at its buffer bound skips it like a sample and is told `dropped`.
   */
  publishAlert(fleetId: string, robotId: string | null, text: string): void {
    const subs = this.fleets.get(fleetId)?.subs;
    if (!subs) return;
    for (const sub of subs) {
      if (!sub.alerts) continue;
      if (robotId !== null && sub.robots !== null && !sub.robots.has(robotId)) continue;
      sub.peer.cork(() => {
        this.sendDroppedNotice(sub);
        if (sub.paused || sub.peer.bufferedAmount() >= this.maxBufferedBytes) {
          sub.dropped++;
          this.dropsCounted++;
          return;
        }
        sub.peer.send(text);
      });
    }
  }

  /** Closes every socket with 1001 (gateway shutdown) and refuses new ones. */
  close(): void {
    this.closing = true;
    if (this.sweepTimer !== null) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
    for (const peer of [...this.peers]) peer.end(CLOSE.goingAway, 'server shutting down');
  }

  private sendDroppedNotice(sub: Sub): void {
    if (sub.dropped > 0 && !sub.paused && sub.peer.bufferedAmount() < this.maxBufferedBytes / 2) {
      sub.peer.send(notice.dropped(sub.dropped));
      sub.dropped = 0;
    }
  }

  private deliver(topic: Topic | undefined, msg: Uint8Array, binary: boolean): void {
    if (topic === undefined) return;
    topic.published++;
    topic.bytes += msg.length;
    if (topic.native > 0) {
      this.publisher!.publish(topic.name, msg, binary);
      this.publishedSinceCheck += msg.length;
      if (this.publishedSinceCheck >= this.maxBufferedBytes / 4) this.checkEstimates();
    }
    if (topic.js.size === 0) return;
    // The live decoder reuses its buffers: peers that may queue the bytes get their own copy.
    const own = msg.slice();
    for (const sub of topic.js) {
      if (sub.peer.bufferedAmount() >= this.maxBufferedBytes) {
        sub.dropped++;
        this.dropsCounted++;
        continue;
      }
      sub.peer.cork(() => {
        this.sendDroppedNotice(sub);
        sub.peer.send(own, binary);
      });
    }
  }

  /** Subscribes `sub` to the topics of its filter, encoding and rate class. */
  private attach(sub: Sub): void {
    const fleet = this.fleets.get(sub.fleetId)!;
    const e = sub.encoding === 'binary' ? 1 : 0;
    const names = sub.robots === null
      ? [fleetTopic(e, sub.cls, sub.fleetId)]
      : [...sub.robots].map((r) => robotTopic(e, sub.cls, sub.fleetId, r));
    fleet.use[e * CLASSES + sub.cls]!++;
    for (const name of names) {
      let topic = this.topics.get(name);
      if (topic === undefined) this.topics.set(name, (topic = { name, published: 0, bytes: 0, native: 0, js: new Set(), refs: 0 }));
      topic.refs++;
      sub.topics.push(topic);
      if (sub.native) {
        sub.peer.subscribe!(name);
        topic.native++;
      } else {
        topic.js.add(sub);
      }
    }
    if (sub.native) {
      sub.measured = sub.peer.bufferedAmount();
      sub.markBytes = this.topicBytes(sub);
      this.nativeSubs.add(sub);
      this.sweepTimer ??= setInterval(() => this.sweep(), this.backpressureCheckMs).unref();
    }
  }

  /**
   * Undoes {@link attach}; what a paused subscription missed is added to its drop count. On a closed
   * peer (`peerClosed`) the transport has already dropped its native subscriptions (uWS does at close).
   */
  private detach(sub: Sub, peerClosed = false): void {
    if (sub.topics.length === 0) return;
    const fleet = this.fleets.get(sub.fleetId);
    if (fleet) fleet.use[(sub.encoding === 'binary' ? CLASSES : 0) + sub.cls]!--;
    const wasPaused = sub.paused;
    if (wasPaused) {
      const missed = this.unpause(sub, false);
      sub.dropped += missed;
      this.dropsCounted += missed;
    }
    for (const topic of sub.topics) {
      if (!sub.native) topic.js.delete(sub);
      else if (!wasPaused) {
        if (!peerClosed) sub.peer.unsubscribe!(topic.name);
        topic.native--;
      }
      if (--topic.refs === 0) this.topics.delete(topic.name);
    }
    sub.topics = [];
    this.nativeSubs.delete(sub);
    if (this.nativeSubs.size === 0 && this.sweepTimer !== null) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = null;
    }
  }

  /**
   * Timer: a turn boundary, uWS has flushed its topic queues into the sockets' buffers. Measures the
   * sockets that may have grown (paused, holding bytes, or a sixteenth of the bound published to them
   * since their last measurement); an idle or fast reader is not asked every time.
   */
  private sweep(): void {
    this.publishedSinceCheck = 0;
    const enough = this.maxBufferedBytes / 16;
    for (const sub of this.nativeSubs) {
      if (sub.paused || sub.measured > 0 || this.topicBytes(sub) - sub.markBytes >= enough) this.measure(sub);
    }
  }

  private topicBytes(sub: Sub): number {
    let n = 0;
    for (const t of sub.topics) n += t.bytes;
    return n;
  }

  /** Mid-turn: pauses every subscription whose estimated buffer reached the bound. */
  private checkEstimates(): void {
    this.publishedSinceCheck = 0;
    for (const sub of this.nativeSubs) {
      if (!sub.paused && sub.measured + this.topicBytes(sub) - sub.markBytes >= this.maxBufferedBytes) this.pause(sub);
    }
  }

  /** Measures a native subscription: pauses it at the bound, resumes it below half of it. */
  private measure(sub: Sub): void {
    const buffered = sub.peer.bufferedAmount();
    sub.measured = buffered;
    sub.markBytes = this.topicBytes(sub);
    if (!sub.paused) {
      if (buffered >= this.maxBufferedBytes) this.pause(sub);
      return;
    }
    if (buffered >= this.maxBufferedBytes / 2) return;
    const missed = this.unpause(sub, true);
    sub.dropped += missed;
    this.dropsCounted += missed;
    this.sendDroppedNotice(sub);
  }

  private pause(sub: Sub): void {
    sub.paused = true;
    sub.pausedAt = sub.topics.map((t) => {
      sub.peer.unsubscribe!(t.name);
      t.native--;
      return t.published;
    });
  }

  /** Counts what a paused subscription missed; with `resubscribe`, subscribes it again. */
  private unpause(sub: Sub, resubscribe: boolean): number {
    let missed = 0;
    for (let i = 0; i < sub.topics.length; i++) {
      const t = sub.topics[i]!;
      missed += t.published - sub.pausedAt[i]!;
      if (resubscribe) {
        sub.peer.subscribe!(t.name);
        t.native++;
      }
    }
    sub.paused = false;
    sub.pausedAt = [];
    return missed;
  }
}

/** Creates the hub the ingest publishes to and the WebSocket route serves. */
export function createStreamHub(opts: StreamHubOptions): StreamHub {
  return new StreamHub(opts);
}
