/**
 * The composition root: opens the store, starts the robot link, the command service, the telemetry
 * pipe and the HTTP server, and stops them in the order that loses nothing.
 */
import { readFile } from 'node:fs/promises';
import { CommandService } from '../commands/service.js';
import { recordLinkConflicts } from '../events/link-conflict.js';
import type { GatewayTunables } from '../config.js';
import { AuthThrottle } from '../http/auth-throttle.js';
import { RateLimiter } from '../http/rate-limit.js';
import { createRouter } from '../http/router.js';
import { ensureTlsFiles } from '../http/tls.js';
import { startHttpServer, type HttpServer } from '../http/uws-adapter.js';
import { startRobotLinkServer, type RobotLinkServer } from '../robotlink/server.js';
import { isLoopbackHost } from '../http/tls.js';
import { openStore, type Store } from '../store/lmdb.js';
import { createTelemetryIngest, type TelemetryIngest } from '../telemetry/ingest.js';
import { apiKeyUsable } from '../auth/key-status.js';
import { startKeyRevocationSweep } from '../telemetry/key-revocation-sweep.js';
import { StreamHub } from '../telemetry/stream-hub.js';
import { STREAM_PATH } from '../telemetry/stream-protocol.js';
import { registerTelemetryStream } from '../telemetry/stream-ws.js';
import { TicketIssuer } from '../telemetry/ticket-issuer.js';
import { startIdempotencyPurger } from '../idempotency/index.js';
import { startMissionRetention } from '../missions/retention.js';
import { OperationRuntime } from '../missions/runtime.js';
import { attachToRuntime, MissionScheduling, runtimeGate } from '../missions/scheduling-service.js';
import { buildRoutes } from './routes.js';

export interface GatewayOptions {
  dataDir: string;
  host: string;
  httpPort: number;
  grpcPort: number;
  /** null: embedded chdb store. */
  clickhouseUrl: string | null;
  /** 'self-signed': make/reuse `<dataDir>/tls`; 'insecure': plain HTTP (loopback only, checked by the CLI). */
  tls: 'self-signed' | 'insecure' | { certFile: string; keyFile: string };
  tunables: GatewayTunables;
  log: (line: string) => void;
}

export interface Gateway {
  readonly httpUrl: string;
  /** `host:port` of the robot link. */
  readonly grpcAddress: string;
  readonly telemetryStore: 'chdb' | 'clickhouse';
  readonly store: Store;
  readonly ingest: TelemetryIngest;
  readonly commands: CommandService;
  /** Schedules, the scheduler and mission runs. */
  readonly missions: MissionScheduling;
  /** Drains and stops everything; safe to call twice. */
  close(): Promise<void>;
}

const HTTP_DRAIN_MS = 5000;

/** Starts every part of the gateway; resolves once HTTP and gRPC listen. */
export async function startGateway(opts: GatewayOptions): Promise<Gateway> {
  const { log, tunables } = opts;
  const store = openStore(opts.dataDir);
  const tlsFiles = opts.tls === 'insecure' ? null : opts.tls === 'self-signed' ? await ensureTlsFiles(opts.dataDir) : opts.tls;
  // The robot link shares the HTTP certificate; on a loopback host it stays plaintext (the traffic
  // never leaves the machine and local robots/simulators need no CA).
  const grpcTls = tlsFiles !== null && !isLoopbackHost(opts.host)
    ? { cert: await readFile(tlsFiles.certFile), key: await readFile(tlsFiles.keyFile) }
    : null;

  const keyUsable = (apiKeyId: string, nowMs: number): boolean => apiKeyUsable(store, apiKeyId, nowMs);
  const tickets = new TicketIssuer({ keyUsable });
  const hub = new StreamHub({ tickets });
  const stopKeySweep = startKeyRevocationSweep({ hub, tickets, keyUsable, log });
  const ingest = await createTelemetryIngest({
    store,
    dataDir: opts.dataDir,
    ...(opts.clickhouseUrl !== null ? { clickhouseUrl: opts.clickhouseUrl } : {}),
    live: hub,
  });
  let linkServer: RobotLinkServer | undefined;
  let http: HttpServer | undefined;
  try {
    linkServer = await startRobotLinkServer({
      store,
      host: opts.host,
      port: opts.grpcPort,
      tls: grpcTls,
      keepaliveTimeMs: tunables.robotKeepaliveMs,
      keepaliveTimeoutMs: tunables.robotKeepaliveTimeoutMs,
      linkConflict: { clearAfterMs: tunables.linkConflictClearMs },
      log,
    });
    const link = linkServer.link;
    // Before anything else listens, so a conflict is on record before any command reacts to it.
    recordLinkConflicts(store, link);
    link.listen({ onTelemetry: (robotId, fleetId, bytes) => ingest.push(robotId, fleetId, bytes) });
    ingest.onBackpressure((paused) => link.setReadPaused(paused));
    const commands = new CommandService({ store, link, log });

    const runtime = new OperationRuntime(store, { log });
    runtime.loadAll();
    const stopPurger = startIdempotencyPurger(store, { log });
    // Schedules fire only after the runtime has loaded every operation (the dispatch gate reads it).
    const missions = new MissionScheduling({ store, link, commands, gate: runtimeGate(runtime), log });
    attachToRuntime(missions, runtime);
    await missions.start();
    const stopRetention = startMissionRetention(store, { log });

    let streamUrl = '';
    let httpUrl = '';
    const { routes } = buildRoutes({ store, link, commands, tickets, streamUrl: () => streamUrl, httpUrl: () => httpUrl, runtime, missions, log });
    const router = createRouter(routes, {
      store,
      rateLimiter: new RateLimiter({ ratePerSecond: tunables.rateLimitPerSecond, burst: tunables.rateLimitBurst }),
      authThrottle: new AuthThrottle(),
      log,
    });
    http = await startHttpServer({
      host: opts.host,
      port: opts.httpPort,
      tls: tlsFiles,
      handle: router,
      maxBodyBytes: tunables.maxBodyBytes,
      configure: (app) => registerTelemetryStream(app, hub),
      log,
    });
    streamUrl = `${http.url.replace(/^http/, 'ws')}${STREAM_PATH}`;
    httpUrl = http.url;

    const httpServer = http;
    const grpc = linkServer;
    let closing: Promise<void> | undefined;
    const close = async (): Promise<void> => {
      // Order: stop taking requests and robot streams, let in-flight HTTP finish, then drain telemetry
      // into the store, then close commands and the store they write to.
      httpServer.stopListening();
      await grpc.close();
      const deadline = Date.now() + HTTP_DRAIN_MS;
      while (httpServer.inFlight() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      stopKeySweep();
      hub.close();
      httpServer.close();
      stopPurger();
      stopRetention();
      missions.stop();
      runtime.close();
      await ingest.close();
      await commands.close();
      await store.close();
    };
    return {
      httpUrl: http.url,
      grpcAddress: linkServer.address,
      telemetryStore: ingest.storeKind,
      store,
      ingest,
      commands,
      missions,
      close: () => (closing ??= close()),
    };
  } catch (err: unknown) {
    stopKeySweep();
    http?.close();
    linkServer?.forceClose();
    await ingest.close();
    await store.close();
    throw err;
  }
}
