/**
 * Master control's session on the embedded broker, inside it: subscriptions on aedes' own message
 * router and publishes handed to it directly, so a robot's state reaches master control in the turn
 * the broker parsed it and a stop is on its way to the robot in the turn it was asked for. An MQTT
 * client would add, each way, a packet written and parsed again and a loopback socket read one
 * event-loop iteration later (bench/notes/vda5050.md, "Master control inside the embedded broker").
 *
 * There is no shared socket to push back: each robot's messages wait in its own connection. Bound:
 * at most {@link MAX_IN_FLIGHT_PER_TOPIC} of master control's messages per topic (a robot's `order`
 * or `instantActions`) are in the broker at once, i.e. handed over and not yet taken by the robot's
 * socket. A publish beyond it is dropped and counted: the robot is not reading (aedes disconnects it
 * when its socket has not drained for the drain timeout), and the commands it carried are still
 * awaited in the robot's state, so the command service resends them. One robot that stops reading
 * therefore never holds another robot's stop.
 */
import type { Aedes, AedesPublishPacket } from 'aedes';
import type { Logger } from 'pino';
import type { MasterSession, MasterSessionEvents, Vda5050Binding } from '../contracts.js';

/**
 * Master control's messages per topic handed to the broker and not yet written to the robot's socket.
 * Above the publish queue's two lanes per robot (16 + 64), which may drain into the broker in one turn.
 */
export const MAX_IN_FLIGHT_PER_TOPIC = 128;

/** What the session needs of the embedded broker. */
export interface InProcessBroker {
  readonly aedes: Aedes;
  /** Settles once aedes is set up (its persistence holds the retained messages). */
  ready(): Promise<void>;
  /** Calls `fn` whenever a robot's current session ends; returns an unsubscribe. */
  onRobotSessionEnded(fn: (binding: Vda5050Binding) => void): () => void;
}

/** The retained-message store of aedes' persistence (not in aedes' types). */
interface RetainedStore {
  createRetainedStreamCombi(patterns: string[]): AsyncIterable<{ topic: string; payload: Buffer | string }>;
}

export class InProcessMasterSession implements MasterSession {
  private events: MasterSessionEvents | null = null;
  private readonly filters = new Set<string>();
  private readonly inFlight = new Map<string, number>();
  private dropped = 0;
  private closed = false;
  private readonly deliver = (packet: AedesPublishPacket, done: () => void): void => {
    this.hand(packet.topic, packet.payload);
    done();
  };
  private readonly onBrokerClosed = (): void => {
    if (!this.closed) this.events?.close();
  };
  private unlistenSessions = (): void => {};

  constructor(
    private readonly broker: InProcessBroker,
    private readonly log: Logger,
  ) {}

  get droppedCount(): number {
    return this.dropped;
  }

  /** The embedded broker tells master control when a robot's session ends. */
  readonly tellsRobotSessions = true;

  start(events: MasterSessionEvents): void {
    this.events = events;
    this.broker.aedes.on('closed', this.onBrokerClosed);
    this.unlistenSessions = this.broker.onRobotSessionEnded((binding) => {
      if (this.closed) return;
      try {
        events.robotDisconnected(binding);
      } catch (err) {
        this.log.error({ err }, 'VDA 5050 master control failed on a robot\'s disconnect');
      }
    });
    this.broker.ready().then(
      () => {
        if (this.closed) return;
        if (this.broker.aedes.closed) events.close();
        else events.connect();
      },
      (err: unknown) => {
        if (!this.closed) events.error(err instanceof Error ? err : new Error(String(err)));
      },
    );
  }

  subscribe(filters: readonly string[], done: (err: Error | null) => void): void {
    const fresh = filters.filter((f) => !this.filters.has(f));
    let left = fresh.length;
    const subscribed = (): void => {
      if (--left > 0) return;
      void this.replayRetained(fresh).then(() => done(null), (err: unknown) => done(err instanceof Error ? err : new Error(String(err))));
    };
    if (fresh.length === 0) {
      done(null);
      return;
    }
    for (const f of fresh) {
      this.filters.add(f);
      this.broker.aedes.subscribe(f, this.deliver, subscribed);
    }
  }

  publish(topic: string, payload: Buffer): boolean {
    if (this.closed) return true;
    const n = this.inFlight.get(topic) ?? 0;
    if (n >= MAX_IN_FLIGHT_PER_TOPIC) {
      this.dropped++;
      return true;
    }
    this.inFlight.set(topic, n + 1);
    this.broker.aedes.publish({ cmd: 'publish', topic, payload, qos: 0, retain: false, dup: false }, (err) => {
      const left = (this.inFlight.get(topic) ?? 1) - 1;
      if (left <= 0) this.inFlight.delete(topic);
      else this.inFlight.set(topic, left);
      // A robot's socket that failed or timed out on drain: aedes closes it, the robot goes offline.
      if (err) this.log.debug({ err: err.message }, 'VDA 5050: a message to a robot was not written');
    });
    return true;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.broker.aedes.removeListener('closed', this.onBrokerClosed);
    this.unlistenSessions();
    await Promise.all([...this.filters].map((f) => new Promise<void>((resolve) => this.broker.aedes.unsubscribe(f, this.deliver, resolve))));
    this.filters.clear();
  }

  /**
   * Hands each retained message under `filters` to master control, as a broker does at SUBSCRIBE
   * (after the subscription is live, as aedes does for a client: a robot that connects in between may
   * have its live `connection` message arrive before its older retained one; this happens only at
   * master control's start).
   */
  private async replayRetained(filters: string[]): Promise<void> {
    const store = (this.broker.aedes as unknown as { persistence: RetainedStore }).persistence;
    for await (const packet of store.createRetainedStreamCombi(filters)) {
      if (this.closed) return;
      this.hand(packet.topic, packet.payload);
    }
  }

  private hand(topic: string, payload: Buffer | string): void {
    if (this.closed) return;
    try {
      this.events?.message(topic, typeof payload === 'string' ? Buffer.from(payload) : payload);
    } catch (err) {
      // Master control's own failure must not reach aedes' router (it would stop the other subscribers).
      this.log.error({ err, topic: topic.slice(0, 256) }, 'VDA 5050 master control failed on a message');
    }
  }
}
