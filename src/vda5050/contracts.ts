/**
 * The seams between the parts of the VDA 5050 robot link: the broker plugin (embedded aedes or an
 * external broker, robot authentication and topic isolation) provides these to the link plugin
 * (master control: the MQTT client that maps VDA 5050 messages to and from the gateway's robot link).
 */

/** A robot's VDA 5050 identity: its topics are `{interface}/{version}/{manufacturer}/{serialNumber}/…`. */
export interface Vda5050Binding {
  readonly manufacturer: string;
  readonly serialNumber: string;
}

/** The robot of a VDA 5050 identity. */
export interface Vda5050Robot {
  readonly robotId: string;
  readonly fleetId: string;
  readonly binding: Vda5050Binding;
}

/** Lookups between robots and their VDA 5050 identities (owned by the robot registry's records). */
export interface Vda5050Identities {
  /** The robot bound to this identity, or undefined when none is. */
  robotOf(manufacturer: string, serialNumber: string): Vda5050Robot | undefined;
  /** The robot's identity, or undefined when it does not use VDA 5050. */
  bindingOf(robotId: string): Vda5050Binding | undefined;
  /** Every bound robot (the broker and the link subscribe from this at start). */
  all(): readonly Vda5050Robot[];
  /** Called with the robot id whenever a binding is added, changed or removed. Returns an unsubscribe. */
  onChange(listener: (robotId: string) => void): () => void;
}

/** How master control reaches the broker. */
export interface Vda5050BrokerConnection {
  /** `mqtt://host:port` or `mqtts://host:port`. */
  readonly url: string;
  readonly username: string;
  readonly password: string;
  /** The CA to trust for `mqtts://` (the gateway's own certificate for the embedded broker). */
  readonly ca?: Buffer;
  /** The topic prefix's interface name (`uagv` by default). */
  readonly interfaceName: string;
  /** The protocol version robots speak (`2.0.0`, `2.1.0`); topics use its major (`v2`). */
  readonly version: string;
}

/**
 * The broker master control uses, as the broker plugin provides it: the topic layout robots use and
 * a way to open master control's session on it.
 */
export interface Vda5050Broker {
  /** The topic prefix's interface name (`uagv` by default). */
  readonly interfaceName: string;
  /** The protocol version robots speak (`2.0.0`, `2.1.0`); topics use its major (`v2`). */
  readonly version: string;
  /** Where robots reach the broker, for log lines (never with a credential). */
  readonly url: string;
  /**
   * Opens master control's session: an MQTT client for an external broker; for the embedded broker,
   * a subscription inside it (no socket, no second MQTT parse between the broker and master control).
   */
  openMasterSession(clientId: string): MasterSession;
}

/** What a master control session reports. Called only after {@link MasterSession.start}. */
export interface MasterSessionEvents {
  /** Connected, or connected again: the session holds no subscriptions until {@link MasterSession.subscribe}. */
  connect(): void;
  /** Lost the broker; the session tries again by itself. */
  close(): void;
  /** A failed connection attempt or a broker error (the session goes on trying). */
  error(err: Error): void;
  /** A message on a subscribed topic (and, at subscribe time, each retained one). */
  message(topic: string, payload: Buffer): void;
  /** {@link MasterSession.publish} may be called again after it returned false. */
  drain(): void;
  /**
   * A robot's MQTT session ended. Only a broker that knows its robots' sessions tells this (the
   * embedded one); on an external broker a robot's last will and master control's silence check
   * (src/vda5050/link) find a robot gone.
   */
  robotDisconnected(binding: Vda5050Binding): void;
}

/** Master control's session on the broker (MQTT 3.1.1 semantics, QoS 0 both ways). */
export interface MasterSession {
  /** Starts connecting; events go to `events` from the next turn on. */
  start(events: MasterSessionEvents): void;
  /** Subscribes to `filters` and delivers their retained messages; `done` once the broker accepted them. */
  subscribe(filters: readonly string[], done: (err: Error | null) => void): void;
  /**
   * Publishes at QoS 0, not retained. Returns false when the session wants a `drain` event before
   * more (the message itself is taken).
   */
  publish(topic: string, payload: Buffer): boolean;
  /** Messages the session dropped at its own bound (not sent; the command service resends what they carried). */
  readonly droppedCount: number;
  /**
   * Whether the broker tells the end of each robot's session ({@link MasterSessionEvents.robotDisconnected}):
   * then a robot is online exactly while its session is, and a quiet one is only asked for its state.
   */
  readonly tellsRobotSessions: boolean;
  /** Ends the session; no event after it settles. */
  close(): Promise<void>;
}
