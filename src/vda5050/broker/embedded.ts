/**
 * The embedded VDA 5050 broker (aedes, MQTT 3.1.1) with robot authentication and per-robot topic
 * isolation (docs/vda5050.md, "Embedded broker"):
 *  - a robot logs in with its robot id and token and may publish only its own connection, state,
 *    visualization and factsheet topics (its last will included: a will on any other topic refuses
 *    the connection) and subscribe only to its own order and instantActions;
 *  - master control logs in with the credential made at start and may use every topic under
 *    `{interfaceName}/{majorVersion}/`;
 *  - everything else is denied: a publish closes the connection (MQTT 3.1.1 has no way to refuse one
 *    otherwise), a subscription gets the failure return code (0x80). Each denial is counted and
 *    logged at most once per robot per window;
 *  - bounds: connections (beyond, new sockets are dropped), packet size (checked from the fixed
 *    header, before the body is buffered), one session per robot (a new login replaces the old one,
 *    as a robot reconnecting after a half-open TCP connection needs), a CONNECT within 10 s.
 * A robot whose identity changes or goes away is disconnected, so its next login uses the new one.
 */
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { createServer as createTlsServer } from 'node:tls';
import { Aedes, type AuthenticateError, type Client } from 'aedes';
import type { Logger } from 'pino';
import type { Store } from '../../store/lmdb.js';
import type { Vda5050Binding, Vda5050Broker, Vda5050BrokerConnection, Vda5050Identities } from '../contracts.js';
import { authenticateVdaRobot, isRobotIdShaped, MASTER_USERNAME, MasterCredential } from './credentials.js';
import { InProcessMasterSession } from './in-process-session.js';
import { LogWindow } from './log-window.js';
import { PacketLimitedStream } from './packet-limit.js';
import { robotTopic, robotTopics, topicRoot, underRoot, type RobotTopics } from './topics.js';
import { cachedRobot } from '../../store/identity-reads.js';

/** Why the broker refused something (the `reason` label of `fleetgw_vda5050_denied_total`). */
export const DENIAL_REASONS = ['auth', 'will', 'publish', 'subscribe', 'packet_size', 'connections'] as const;
export type DenialReason = (typeof DENIAL_REASONS)[number];

/** What the broker reports to the gateway's metrics. */
export interface BrokerObserver {
  denied(reason: DenialReason): void;
  /** Publishes waiting in the broker's routing queue as a robot's publish is authorized (see ROUTING_CONCURRENCY). */
  routingQueue(length: number): void;
}

export interface EmbeddedBrokerOptions {
  store: Store;
  identities: Vda5050Identities;
  /** The gateway's host; the broker listens there. */
  host: string;
  port: number;
  /** The gateway's certificate (non-loopback host), or null: plain MQTT. */
  tls: { cert: Buffer; key: Buffer } | null;
  interfaceName: string;
  version: string;
  maxConnections: number;
  maxPacketBytes: number;
  observer: BrokerObserver;
  log: Logger;
  /** One log line per robot (or username) per this window. Default 60 s. */
  logWindowMs?: number;
}

/** Whose connection it is. */
type Principal = { kind: 'master' } | { kind: 'robot'; robotId: string; fleetId: string; binding: Vda5050Binding; topics: RobotTopics };

const CONNECT_TIMEOUT_MS = 10_000;
const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;
const DRAIN_TIMEOUT_MS = 30_000;
/**
 * How many publishes aedes routes at once. aedes' default (100) queues every publish beyond it in
 * mqemitter's array, whose `shift` per routed message costs O(queue length): once robots publish
 * faster than the broker routes for a moment, each message costs more than the last, the queue
 * never drains, and the gateway's event loop (the gRPC robot link's included) is spent shifting it.
 * Unlimited here, nothing waits in that array; what is in flight stays bounded without it: aedes
 * reads a connection's next bytes only after the publishes it parsed from the last read were
 * routed, and a read holds at most the stream's buffer, so at most `maxConnections` reads' worth.
 */
const ROUTING_CONCURRENCY = Number.MAX_SAFE_INTEGER;
const RC_BAD_CREDENTIALS = 4;
const RC_NOT_AUTHORIZED = 5;

function authError(message: string, returnCode: number): AuthenticateError {
  const err: AuthenticateError = Object.assign(new Error(message), { returnCode });
  return err;
}

/** Where master control on this machine reaches a broker listening on `host`. */
function dialHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

export class EmbeddedBroker {
  private readonly aedes: Aedes;
  private readonly routingQueue: { readonly length: number };
  private readonly master = new MasterCredential();
  private readonly principals = new WeakMap<Client, Principal>();
  /** Will topics from CONNECT, held until authentication decides on them. */
  private readonly wills = new WeakMap<Client, string>();
  /** Each robot's one session. */
  private readonly sessions = new Map<string, Client>();
  /** Told when a robot's current session ends (master control's session inside the broker). */
  private readonly sessionEndListeners = new Set<(binding: Vda5050Binding) => void>();
  private readonly root: string;
  private readonly logWindow: LogWindow;
  private server: Server | null = null;
  private listening: Promise<void> | null = null;
  private aedesReady: Promise<void> | null = null;
  private unsubscribe: () => void = () => {};
  private closed = false;
  /** The broker's MQTT login for master control (a client on this machine; tests and tools use it). */
  readonly connection: Vda5050BrokerConnection;
  /** The broker as master control uses it: its session is attached inside the broker (in-process-session.ts). */
  readonly forMasterControl: Vda5050Broker;

  constructor(private readonly opts: EmbeddedBrokerOptions) {
    this.root = topicRoot(opts.interfaceName, opts.version);
    this.logWindow = new LogWindow(opts.logWindowMs ?? 60_000);
    const host = dialHost(opts.host);
    const urlHost = host.includes(':') ? `[${host}]` : host;
    this.connection = Object.freeze({
      url: `${opts.tls !== null ? 'mqtts' : 'mqtt'}://${urlHost}:${opts.port}`,
      username: MASTER_USERNAME,
      password: this.master.password,
      ...(opts.tls !== null ? { ca: opts.tls.cert } : {}),
      interfaceName: opts.interfaceName,
      version: opts.version,
      // The password stays out of log lines even when the whole part is logged.
      toJSON: () => ({ url: `${opts.tls !== null ? 'mqtts' : 'mqtt'}://${urlHost}:${opts.port}`, username: MASTER_USERNAME, interfaceName: opts.interfaceName, version: opts.version }),
    });
    this.aedes = new Aedes({
      connectTimeout: CONNECT_TIMEOUT_MS,
      drainTimeout: DRAIN_TIMEOUT_MS,
      concurrency: ROUTING_CONCURRENCY,
      preConnect: (client, packet, done) => {
        if (packet.will) this.wills.set(client, packet.will.topic);
        done(null, true);
      },
      authenticate: (client, username, password, done) => this.authenticate(client, username, password, done),
      authorizePublish: (client, packet, done) => {
        this.opts.observer.routingQueue(this.routingQueue.length);
        done(this.mayPublish(client, packet.topic));
      },
      authorizeSubscribe: (client, sub, done) => done(null, this.maySubscribe(client, sub.topic) ? sub : null),
      // Defence in depth: a robot is handed only what its own subscriptions allow.
      authorizeForward: (client, packet) => {
        const p = this.principals.get(client);
        return p === undefined || (p.kind === 'robot' && !p.topics.subscribe.has(packet.topic)) ? null : packet;
      },
    });
    const inside = {
      aedes: this.aedes,
      ready: () => this.aedesStarted(),
      onRobotSessionEnded: (fn: (binding: Vda5050Binding) => void) => {
        this.sessionEndListeners.add(fn);
        return () => this.sessionEndListeners.delete(fn);
      },
    };
    this.forMasterControl = Object.freeze({
      interfaceName: opts.interfaceName,
      version: opts.version,
      url: this.connection.url,
      openMasterSession: () => new InProcessMasterSession(inside, opts.log),
    });
    // aedes' types do not declare its mqemitter; its `length` is the number of queued publishes.
    this.routingQueue = (this.aedes as unknown as { mq: { readonly length: number } }).mq;
    this.aedes.on('clientReady', (client) => this.sessionStarted(client));
    this.aedes.on('clientDisconnect', (client) => this.sessionEnded(client));
    // Named by the principal, not the client id: a client id is the client's to choose and may hold anything.
    this.aedes.on('clientError', (client, err) => this.opts.log.debug({ err: err.message, ...this.whoIs(client) }, 'VDA 5050 client error'));
    this.aedes.on('connectionError', (client, err) => this.opts.log.debug({ err: err.message, ...this.whoIs(client) }, 'VDA 5050 connection error'));
  }

  /** Whether the broker accepts connections. */
  get isListening(): boolean {
    return this.server?.listening === true;
  }

  /**
   * Starts listening; a call while a start is under way or done returns that start's promise, a call
   * after a failed start tries again.
   * @throws Error naming the address and `--vda5050-mqtt-port` when the port cannot be bound
   */
  listen(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the VDA 5050 broker is closed'));
    this.listening ??= this.startListening().catch((err: unknown) => {
      this.listening = null;
      throw err;
    });
    return this.listening;
  }

  /** aedes' own start (its persistence), once; shared by listening and master control's session. */
  private aedesStarted(): Promise<void> {
    this.aedesReady ??= this.aedes.listen();
    return this.aedesReady;
  }

  private async startListening(): Promise<void> {
    await this.aedesStarted();
    const { tls, maxConnections, maxPacketBytes } = this.opts;
    const accept = (socket: Socket): void => {
      // A stop is one small packet: Nagle's algorithm would hold it ~40 ms behind an unacknowledged
      // write (measured: bench/notes/vda5050.md).
      socket.setNoDelay(true);
      const stream = new PacketLimitedStream(socket, maxPacketBytes, (declared) => {
        this.opts.observer.denied('packet_size');
        this.logThrottled(`packet:${socket.remoteAddress ?? ''}`, 'warn', { remoteAddress: socket.remoteAddress, declaredBytes: declared, maxBytes: maxPacketBytes }, 'VDA 5050 packet over the size limit: connection closed');
      });
      this.aedes.handle(stream);
    };
    const server = tls !== null
      ? createTlsServer({ cert: tls.cert, key: tls.key, handshakeTimeout: TLS_HANDSHAKE_TIMEOUT_MS }, accept)
      : createTcpServer(accept);
    server.maxConnections = maxConnections;
    server.on('drop', (data?: { remoteAddress?: string }) => {
      this.opts.observer.denied('connections');
      this.logThrottled('connections', 'warn', { remoteAddress: data?.remoteAddress, maxConnections }, 'VDA 5050 broker at its connection limit: connection dropped');
    });
    server.on('tlsClientError', (err: Error) => this.opts.log.debug({ err: err.message }, 'VDA 5050 TLS handshake failed'));
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err: NodeJS.ErrnoException) => {
        reject(new Error(`the VDA 5050 broker cannot listen on ${this.opts.host}:${this.opts.port} (${err.code ?? err.message}); choose another --vda5050-mqtt-port`, { cause: err }));
      });
      server.listen(this.opts.port, this.opts.host, () => resolve());
    });
    server.on('error', (err) => this.opts.log.error({ err }, 'VDA 5050 broker socket error'));
    this.server = server;
    // A robot whose identity changed logs in again, under the new one (or not at all).
    this.unsubscribe = this.opts.identities.onChange((robotId) => this.identityChanged(robotId));
    this.opts.log.info({ url: this.connection.url, interfaceName: this.opts.interfaceName, version: this.opts.version }, 'VDA 5050 broker listening');
  }

  /** Stops accepting connections (the first phase of shutdown); sessions stay until {@link close}. */
  stopAccepting(): Promise<void> {
    const server = this.server;
    if (server === null || !server.listening) return Promise.resolve();
    // close() would wait for the open sessions; the broker ends those in close().
    server.close();
    return Promise.resolve();
  }

  /** Ends every session and the broker. Safe to call twice and before listen. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    await this.listening?.catch(() => {});
    this.server?.close();
    await new Promise<void>((resolve) => this.aedes.close(() => resolve()));
  }

  private authenticate(client: Client, username: string | undefined, password: Buffer | undefined, done: (err: AuthenticateError | null, ok: boolean | null) => void): void {
    if (username === MASTER_USERNAME) {
      if (!this.master.matches(password)) return this.refuseLogin(done, username, 'auth', RC_BAD_CREDENTIALS);
      this.principals.set(client, { kind: 'master' });
      return done(null, true);
    }
    const robot = authenticateVdaRobot(this.opts.store, username, password);
    if (robot === null || robot.vda5050 === undefined) return this.refuseLogin(done, username, 'auth', RC_BAD_CREDENTIALS);
    const will = this.wills.get(client);
    if (will !== undefined && will !== robotTopic(this.root, robot.vda5050, 'connection')) {
      this.opts.observer.denied('will');
      this.logThrottled(robot.robotId, 'warn', { robotId: robot.robotId, fleetId: robot.fleetId, willTopic: will.slice(0, 256) }, 'VDA 5050 robot refused: its last will is not on its own connection topic');
      return done(authError('will topic not allowed', RC_NOT_AUTHORIZED), false);
    }
    this.principals.set(client, { kind: 'robot', robotId: robot.robotId, fleetId: robot.fleetId, binding: robot.vda5050, topics: robotTopics(this.root, robot.vda5050) });
    done(null, true);
  }

  private refuseLogin(done: (err: AuthenticateError | null, ok: boolean | null) => void, username: string | undefined, reason: DenialReason, rc: number): void {
    this.opts.observer.denied(reason);
    // A client may put anything in the username, a secret too (a robot token, with username and
    // password swapped): only a robot id or master control's name is logged, anything else by its
    // length, all of those under one log window.
    const name = username ?? '';
    const named = isRobotIdShaped(name) || name === MASTER_USERNAME;
    const fields = named ? { username: name } : { usernameLength: name.length };
    this.logThrottled(named ? `auth:${name}` : 'auth:other', 'warn', fields, 'VDA 5050 login refused: unknown robot, wrong token, or no VDA 5050 identity');
    done(authError('bad username or password', rc), false);
  }

  private mayPublish(client: Client | null, topic: string): Error | null {
    // aedes publishes a will whose client is gone with client null; its topic was checked at CONNECT.
    if (client === null) return null;
    const p = this.principals.get(client);
    if (p?.kind === 'master' && underRoot(this.root, topic)) return null;
    if (p?.kind === 'robot' && p.topics.publish.has(topic)) return null;
    this.denied(p, 'publish', topic);
    return new Error('publish not allowed');
  }

  private maySubscribe(client: Client, filter: string): boolean {
    const p = this.principals.get(client);
    if (p?.kind === 'master' && underRoot(this.root, filter)) return true;
    if (p?.kind === 'robot' && p.topics.subscribe.has(filter)) return true;
    this.denied(p, 'subscribe', filter);
    return false;
  }

  private denied(p: Principal | undefined, reason: 'publish' | 'subscribe', topic: string): void {
    this.opts.observer.denied(reason);
    const who = p === undefined ? 'unknown' : p.kind === 'robot' ? p.robotId : MASTER_USERNAME;
    const fields = p?.kind === 'robot' ? { robotId: p.robotId, fleetId: p.fleetId } : { username: who };
    this.logThrottled(who, 'warn', { ...fields, reason, topic: topic.slice(0, 256) }, `VDA 5050 ${reason} denied: not one of the client's own topics`);
  }

  /**
   * Ends the robot's session when it no longer matches the registry. A session that logged in after
   * the change (the login reads the registry itself, the notice comes with the next poll) is kept.
   */
  private identityChanged(robotId: string): void {
    const client = this.sessions.get(robotId);
    const p = client === undefined ? undefined : this.principals.get(client);
    if (client === undefined || p?.kind !== 'robot') return;
    const now = cachedRobot(this.opts.store, robotId);
    const same = now?.vda5050 !== undefined && now.fleetId === p.fleetId && now.vda5050.manufacturer === p.binding.manufacturer && now.vda5050.serialNumber === p.binding.serialNumber;
    if (!same) client.close();
  }

  private sessionStarted(client: Client): void {
    const p = this.principals.get(client);
    if (p?.kind !== 'robot') return;
    const previous = this.sessions.get(p.robotId);
    this.sessions.set(p.robotId, client);
    if (previous !== undefined && previous !== client) {
      this.logThrottled(`session:${p.robotId}`, 'info', { robotId: p.robotId, fleetId: p.fleetId }, 'VDA 5050 robot logged in again: its previous session is closed');
      previous.close();
    }
  }

  private sessionEnded(client: Client): void {
    const p = this.principals.get(client);
    if (p?.kind !== 'robot' || this.sessions.get(p.robotId) !== client) return;
    this.sessions.delete(p.robotId);
    // Told after the robot's last will, which aedes routes through its persistence's promises: a
    // robot with one goes offline by it (CONNECTIONBROKEN), one without only by this. Not when the
    // robot logged in again meanwhile.
    const robotId = p.robotId;
    setImmediate(() => {
      if (this.sessions.has(robotId)) return;
      for (const fn of this.sessionEndListeners) fn(p.binding);
    });
  }

  /** The log fields naming a client: its robot, master control, or nothing before it logged in. */
  private whoIs(client: Client | null | undefined): Record<string, string> {
    const p = client === null || client === undefined ? undefined : this.principals.get(client);
    if (p === undefined) return {};
    return p.kind === 'robot' ? { robotId: p.robotId, fleetId: p.fleetId } : { username: MASTER_USERNAME };
  }

  private logThrottled(key: string, level: 'info' | 'warn', fields: Record<string, unknown>, msg: string): void {
    const held = this.logWindow.take(key);
    if (held === null) return;
    this.opts.log[level]({ ...fields, ...(held > 0 ? { heldBack: held } : {}) }, msg);
  }
}
