/**
 * The Foxglove endpoint's state (docs/foxglove.md): the channels of the online robots, the sockets
 * of each fleet, their subscriptions, and the fan-out of the frames the decode workers produce
 * (foxglove-output.ts). Transport-agnostic like the stream hub (foxglove-ws.ts adapts uWS sockets).
 *
 * - Scope: a socket's ticket names one fleet; it is advertised the channels of that fleet's online
 *   robots only, and a subscribe to any other channel id is refused. Robots of other fleets and
 *   organizations are never advertised to it.
 * - Channels: three per robot (location, pose, status), advertised to the fleet's sockets when the
 *   robot comes online and unadvertised when it goes offline. A robot keeps its channel ids for the
 *   life of the process.
 * - Bounds, revocation, shutdown: every socket is admitted by the stream hub (StreamHub.admit), so it
 *   counts against the same per-key, per-organization and gateway-wide socket bounds as the JSON
 *   stream, the revocation sweep closes it with 4403, and shutdown with 1001.
 * - Slow consumers: the stream's policy: while a socket's send buffer is at or above
 *   `maxBufferedBytes`, frames for it are dropped and counted; once it drains below half, it gets a
 *   `status` warning naming the count, then frames resume.
 */
import { randomUUID } from 'node:crypto';
import type { Channel } from '@foxglove/ws-protocol';
import { FOXGLOVE_KINDS, foxgloveSchemaText, foxgloveTopic } from '../sample/index.js';
import { foxgloveMessage, MAX_FOXGLOVE_SUBSCRIPTIONS, parseFoxgloveMessage, STATUS } from './foxglove-protocol.js';
import { type FoxgloveSink, closeReason, type StreamHub, type StreamPeer, type StreamSession, type TicketScope } from '../live/index.js';
import type { FoxgloveBatch } from '../decode/index.js';

export interface FoxgloveHubOptions {
  /** Admits each socket under the live stream's bounds, revocation and shutdown. */
  hub: StreamHub;
  /** Per-socket send buffer bound. Default: the stream hub's (1 MiB). */
  maxBufferedBytes?: number;
}

/** One socket's Foxglove session as the transport drives it (text or binary messages). */
export interface FoxgloveSession extends Omit<StreamSession, 'onMessage'> {
  onMessage(data: ArrayBuffer, isBinary: boolean): void;
}

interface Session {
  peer: StreamPeer;
  fleetId: string;
  /** Subscription id -> channel id. */
  subs: Map<number, number>;
  dropped: number;
}

interface ChannelState {
  channel: Channel;
  robotId: string;
  fleetId: string;
  bit: number;
  /** Subscribers: session -> its subscription id for this channel. */
  subs: Map<Session, number>;
}

// Advertise messages carry the schema of every channel: a few KB per robot, so sent in chunks.
const ADVERTISE_CHUNK_ROBOTS = 50;
const DROPPED_STATUS_ID = 'fleetgw.dropped';

export class FoxgloveHub implements FoxgloveSink {
  private readonly hub: StreamHub;
  private readonly maxBufferedBytes: number;
  /** Channel ids of every robot seen online since start (stable across its reconnects). */
  private readonly idsOf = new Map<string, number[]>();
  private nextChannelId = 1;
  /** Online robots: robot id -> fleet id. */
  private readonly online = new Map<string, string>();
  private readonly channels = new Map<number, ChannelState>();
  private readonly sessionsOf = new Map<string, Set<Session>>();
  private subscriptionCount = 0;
  /** Frames not sent to some socket because it was slow (all sockets, since start). */
  droppedTotal = 0;

  constructor(opts: FoxgloveHubOptions) {
    this.hub = opts.hub;
    this.maxBufferedBytes = opts.maxBufferedBytes ?? opts.hub.maxBufferedBytes;
  }

  anyWatched(): boolean {
    return this.subscriptionCount > 0;
  }

  watchedKinds(robotId: string): number {
    const ids = this.online.has(robotId) ? this.idsOf.get(robotId) : undefined;
    if (ids === undefined) return 0;
    let bits = 0;
    for (const id of ids) {
      const c = this.channels.get(id);
      if (c !== undefined && c.subs.size > 0) bits |= c.bit;
    }
    return bits;
  }

  /** A robot came online (idempotent; a changed fleet moves its channels). Advertises its channels to its fleet's sockets. */
  robotOnline(robotId: string, fleetId: string): void {
    const current = this.online.get(robotId);
    if (current === fleetId) return;
    if (current !== undefined) this.robotOffline(robotId);
    this.online.set(robotId, fleetId);
    let ids = this.idsOf.get(robotId);
    if (ids === undefined) this.idsOf.set(robotId, (ids = FOXGLOVE_KINDS.map(() => this.nextChannelId++)));
    const created: Channel[] = [];
    FOXGLOVE_KINDS.forEach((k, i) => {
      const channel: Channel = {
        id: ids[i]!, topic: foxgloveTopic(robotId, k.kind), encoding: 'json', schemaName: k.schemaName, schema: foxgloveSchemaText(k.kind), schemaEncoding: 'jsonschema',
      };
      this.channels.set(channel.id, { channel, robotId, fleetId, bit: k.bit, subs: new Map() });
      created.push(channel);
    });
    const text = foxgloveMessage.advertise(created);
    for (const s of this.sessionsOf.get(fleetId) ?? []) s.peer.send(text);
  }

  /** A robot went offline: its channels are unadvertised and their subscriptions end. */
  robotOffline(robotId: string): void {
    const fleetId = this.online.get(robotId);
    if (fleetId === undefined) return;
    this.online.delete(robotId);
    const ids = this.idsOf.get(robotId)!;
    for (const id of ids) {
      const c = this.channels.get(id);
      if (c === undefined) continue;
      for (const [session, subId] of c.subs) session.subs.delete(subId);
      this.subscriptionCount -= c.subs.size;
      this.channels.delete(id);
    }
    const text = foxgloveMessage.unadvertise(ids);
    for (const s of this.sessionsOf.get(fleetId) ?? []) s.peer.send(text);
  }

  /** A socket whose ticket was redeemed (at the upgrade) opened. */
  connect(peer: StreamPeer, scope: TicketScope): FoxgloveSession {
    let open = true;
    const fail = (code: number, _errCode: string, message: string): void => {
      if (!open) return;
      open = false;
      peer.send(foxgloveMessage.status(STATUS.error, message));
      peer.end(code, closeReason(message));
    };
    const release = this.hub.admit(peer, scope, fail);
    if (release === null) return { onMessage() {}, onDrain() {}, onClose() {} };
    const session: Session = { peer, fleetId: scope.fleetId, subs: new Map(), dropped: 0 };
    let set = this.sessionsOf.get(scope.fleetId);
    if (!set) this.sessionsOf.set(scope.fleetId, (set = new Set()));
    set.add(session);
    peer.send(foxgloveMessage.serverInfo(randomUUID(), scope.fleetId));
    this.advertiseFleet(session);
    const status = (message: string): void => peer.send(foxgloveMessage.status(STATUS.error, message));
    return {
      onMessage: (data, isBinary) => {
        if (!open) return;
        if (isBinary) return status('client publishing is not supported by this server');
        const parsed = parseFoxgloveMessage(data);
        if (!parsed.ok) return status(parsed.message);
        const msg = parsed.msg;
        if (msg.op === 'subscribe') {
          for (const { id, channelId } of msg.subscriptions) {
            const c = this.channels.get(channelId);
            if (session.subs.has(id)) status(`subscription id ${id} is already in use`);
            else if (c === undefined || c.fleetId !== session.fleetId) status(`channel ${channelId} is not advertised to this connection`);
            else if (c.subs.has(session)) status(`channel ${channelId} is already subscribed`);
            else if (session.subs.size >= MAX_FOXGLOVE_SUBSCRIPTIONS) status(`at most ${MAX_FOXGLOVE_SUBSCRIPTIONS} subscriptions per connection`);
            else {
              session.subs.set(id, channelId);
              c.subs.set(session, id);
              this.subscriptionCount++;
            }
          }
        } else {
          for (const id of msg.subscriptionIds) this.unsubscribe(session, id);
        }
      },
      onDrain: () => this.sendDroppedNotice(session),
      onClose: () => {
        if (!open && !set.has(session)) return;
        open = false;
        for (const id of [...session.subs.keys()]) this.unsubscribe(session, id);
        set.delete(session);
        if (set.size === 0 && this.sessionsOf.get(scope.fleetId) === set) this.sessionsOf.delete(scope.fleetId);
        release();
      },
    };
  }

  /** Sends each frame to the subscribers of its channel, with their subscription id. */
  publishFoxglove(batch: FoxgloveBatch): void {
    const { data, index, robotIds } = batch;
    // Group by session first so each socket gets one corked write for the whole batch.
    const perSession = new Map<Session, number[]>();
    for (let i = 0; i < index.length; i += 4) {
      const robotId = robotIds[index[i]!]!;
      if (!this.online.has(robotId)) continue;
      const c = this.channels.get(this.idsOf.get(robotId)![index[i + 1]!]!);
      if (c === undefined || c.subs.size === 0) continue;
      for (const [session, subId] of c.subs) {
        let list = perSession.get(session);
        if (!list) perSession.set(session, (list = []));
        list.push(i, subId);
      }
    }
    // The subscription id is written into the batch's own frame before each send: the transport copies
    // a message into the socket's buffer during send (uWS does), so no per-subscriber copy is needed.
    const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
    for (const [session, list] of perSession) {
      session.peer.cork(() => {
        this.sendDroppedNotice(session);
        for (let j = 0; j < list.length; j += 2) {
          if (session.peer.bufferedAmount() >= this.maxBufferedBytes) {
            session.dropped++;
            this.droppedTotal++;
            continue;
          }
          const i = list[j]!;
          const start = index[i + 2]!;
          view.setUint32(start + 1, list[j + 1]!, true);
          session.peer.send(data.subarray(start, index[i + 3]));
        }
      });
    }
  }

  private unsubscribe(session: Session, subId: number): void {
    const channelId = session.subs.get(subId);
    if (channelId === undefined) return;
    session.subs.delete(subId);
    const c = this.channels.get(channelId);
    if (c?.subs.delete(session) === true) this.subscriptionCount--;
  }

  /** Advertises the channels of every online robot of the session's fleet, a chunk of robots per message. */
  private advertiseFleet(session: Session): void {
    let chunk: Channel[] = [];
    for (const [robotId, fleetId] of this.online) {
      if (fleetId !== session.fleetId) continue;
      for (const id of this.idsOf.get(robotId)!) chunk.push(this.channels.get(id)!.channel);
      if (chunk.length >= ADVERTISE_CHUNK_ROBOTS * FOXGLOVE_KINDS.length) {
        session.peer.send(foxgloveMessage.advertise(chunk));
        chunk = [];
      }
    }
    if (chunk.length > 0) session.peer.send(foxgloveMessage.advertise(chunk));
  }

  private sendDroppedNotice(session: Session): void {
    if (session.dropped > 0 && session.peer.bufferedAmount() < this.maxBufferedBytes / 2) {
      session.peer.send(foxgloveMessage.status(STATUS.warning, `${session.dropped} messages were not sent: this connection read too slowly`, DROPPED_STATUS_ID));
      session.dropped = 0;
    }
  }
}
