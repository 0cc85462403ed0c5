/**
 * The gateway's gRPC server for the robot link: authenticates each stream, hands a control stream
 * (Connect) to a new session and a telemetry stream (PublishTelemetry) to the robot's current
 * session, and keeps dead links short-lived with HTTP/2 keepalive pings.
 */
import { pino, type Logger } from 'pino';
import { Server, ServerCredentials, status, type ChannelOptions } from '@grpc/grpc-js';
import type { Store } from '../store/lmdb.js';
import { authenticateRobot } from './auth.js';
import { widenConnectionWindow } from './connection-window.js';
import { MAX_ROBOT_MESSAGE_BYTES } from './limits.js';
import { addHealthAndReflection } from './health-reflection.js';
import type { LinkConflictOptions } from './link-conflict.js';
import { RobotRegistry } from './registry.js';
import { robotLinkServiceDefinition } from '../protocol/service.js';
import { RobotSession, type RobotCall } from './session.js';
import type { TelemetryCall } from './telemetry-stream.js';
import type { RobotLink } from '../protocol/robot-link.js';

export interface RobotLinkServerOptions {
  store: Store;
  host: string;
  /** 0 picks a free port. */
  port: number;
  /** null: plaintext (the caller allows that on loopback only). */
  tls: { cert: Buffer; key: Buffer } | null;
  /** Interval of server keepalive pings on each connection (default 2000 ms). */
  keepaliveTimeMs?: number;
  /** How long a ping may go unanswered before the connection is dropped (default 2000 ms). */
  keepaliveTimeoutMs?: number;
  /** How long an authenticated stream may take to send its Hello (default 10000 ms). */
  helloTimeoutMs?: number;
  /** Link conflict detection (two processes with one robot's credentials), see link-conflict.ts. */
  linkConflict?: LinkConflictOptions;
  /** The robot link's logger (`component: robotlink`). */
  log?: Logger;
}

export interface RobotLinkServer {
  link: RobotLink;
  port: number;
  /** `host:port` as bound (IPv6 hosts in brackets). */
  address: string;
  /**
   * Ends every stream with status OK, waits up to 5 s for a graceful shutdown, then forces it. With
   * `restartHoldMs` > 0 it first tells each online robot to hold its link-loss reaction that long
   * (a planned restart, restart-notice.ts).
   */
  close(opts?: { restartHoldMs?: number }): Promise<void>;
  /** Drops every connection at once. */
  forceClose(): void;
  /**
   * What the gRPC health service (`grpc.health.v1`, for '' and `fleetgw.v1.RobotLink`) answers:
   * SERVING or NOT_SERVING (the initial answer, until the gateway says it is ready).
   */
  setServing(serving: boolean): void;
}

const SHUTDOWN_GRACE_MS = 5000;
// How long a planned stop waits for its restart notices to reach the connections before ending the streams.
const RESTART_NOTICE_FLUSH_MS = 1000;

/** Starts the robot link server and resolves once it listens. */
export async function startRobotLinkServer(opts: RobotLinkServerOptions): Promise<RobotLinkServer> {
  const log = opts.log ?? pino({ enabled: false });
  const keepaliveTimeMs = opts.keepaliveTimeMs ?? 2000;
  const keepaliveTimeoutMs = opts.keepaliveTimeoutMs ?? 2000;
  const helloTimeoutMs = opts.helloTimeoutMs ?? 10_000;
  const options: ChannelOptions = {
    // A dead link (robot powered off, TCP silently gone) is found within time + timeout.
    'grpc.keepalive_time_ms': keepaliveTimeMs,
    'grpc.keepalive_timeout_ms': keepaliveTimeoutMs,
    'grpc.keepalive_permit_without_calls': 1,
    // Robots ping too (their agents use keepalive); declare that we accept pings this often. grpc-js
    // itself does not police client pings, other gRPC servers in front (proxies) may read these.
    'grpc.http2.min_ping_interval_without_data_ms': 1000,
    'grpc.http2.max_pings_without_data': 0,
    'grpc.max_receive_message_length': MAX_ROBOT_MESSAGE_BYTES,
  };
  const server = new Server(options);
  const registry = new RobotRegistry(log, opts.linkConflict);
  let windowUnavailableLogged = false;
  let fastPathUnavailableLogged = false;
  // Once per authenticated connection (connection-window.ts says why).
  const widen = (call: object): void => {
    if (widenConnectionWindow(call) !== 'unavailable' || windowUnavailableLogged) return;
    windowUnavailableLogged = true;
    log.warn('robot link: could not widen a robot connection\'s HTTP/2 window (grpc-js internals changed?); telemetry works, at more CPU per sample');
  };

  server.addService(robotLinkServiceDefinition, {
    Connect: (call: RobotCall) => {
      const robot = authenticateRobot(opts.store, call.metadata);
      if (robot === null) {
        log.warn({ peer: call.getPeer() }, 'robot link: rejected a stream: invalid robot credentials');
        call.emit('error', { code: status.UNAUTHENTICATED, details: 'invalid robot credentials' });
        return;
      }
      widen(call);
      registry.add(new RobotSession(robot, call, registry, helloTimeoutMs));
    },
    PublishTelemetry: (call: TelemetryCall) => {
      const robot = authenticateRobot(opts.store, call.metadata);
      if (robot === null) {
        log.warn({ peer: call.getPeer() }, 'robot link: rejected a telemetry stream: invalid robot credentials');
        call.emit('error', { code: status.UNAUTHENTICATED, details: 'invalid robot credentials' });
        return;
      }
      widen(call);
      const stream = registry.attachTelemetry(robot.robotId, call);
      if (stream?.readPath === 'unavailable' && !fastPathUnavailableLogged) {
        fastPathUnavailableLogged = true;
        log.warn('robot link: telemetry is read through grpc-js, not the fast path (grpc-js internals changed?); telemetry works, at more CPU per sample');
      }
    },
  });

  // Unauthenticated, and neither reaches a robot session (health-reflection.ts, docs/robot-link.md).
  const health = addHealthAndReflection(server);

  const creds = opts.tls
    ? ServerCredentials.createSsl(null, [{ cert_chain: opts.tls.cert, private_key: opts.tls.key }], false)
    : ServerCredentials.createInsecure();
  const hostPart = opts.host.includes(':') ? `[${opts.host}]` : opts.host;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${hostPart}:${opts.port}`, creds, (err, bound) => (err ? reject(err) : resolve(bound)));
  });

  let closing: Promise<void> | null = null;
  return {
    link: registry,
    port,
    address: `${hostPart}:${port}`,
    close: (closeOpts) => {
      closing ??= (async () => {
        const holdMs = closeOpts?.restartHoldMs ?? 0;
        if (holdMs > 0) {
          const sent = await registry.announceRestart(holdMs, RESTART_NOTICE_FLUSH_MS);
          log.info({ robots: sent.notified, flushed: sent.flushed, holdMs }, `planned stop: told ${sent.notified} robot(s) to hold for ${holdMs} ms`);
        }
      })().then(() => new Promise<void>((resolve) => {
        registry.endAll('gateway shutting down');
        const timer = setTimeout(() => {
          server.forceShutdown();
          resolve();
        }, SHUTDOWN_GRACE_MS);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      }));
      return closing;
    },
    forceClose: () => {
      registry.endAll('gateway shutting down');
      server.forceShutdown();
    },
    setServing: (serving) => health.setServing(serving),
  };
}
