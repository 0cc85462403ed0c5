/**
 * The composition root: opens the store, builds the services that hold state for it (API-key
 * verifier, event log, idempotency claims), starts the robot link, the command service, the mission
 * runtime, the telemetry pipe and the HTTP server, and stops them in the order that loses nothing.
 * Each service is built here once and handed to who needs it; no module keeps per-store state of
 * its own.
 */
import { HeapGrowthPolicy } from './heap-growth.js';
import { ensureRobotNameIndex } from '../store/robot-names.js';
import { AdvertisedProfiles } from '../commands/advertised.js';
import { pino, type Logger } from 'pino';
import { REMOVED_ROUTES } from '../api/removed-routes.js';
import { CommandService } from '../commands/service.js';
import type { CommandServiceOptions } from '../commands/service-types.js';
import { EventLog } from '../events/log.js';
import { ObjectTracker } from '../fleet/objects/tracker.js';
import { recordLinkConflicts } from '../events/link-conflict.js';
import { DEFAULT_TUNABLES, type GatewayTunables } from '../config.js';
import { accessLog, type LogBytesSink } from '../http/access-log.js';
import { AuthThrottle } from '../http/auth-throttle.js';
import type { RequestObserver } from '../http/request-done.js';
import { RateLimiter } from '../http/rate-limit.js';
import { createRouter } from '../http/router.js';
import { ensureTlsFiles, readTlsFiles } from '../http/tls.js';
import { startHttpServer, type HttpServer } from '../http/uws-adapter.js';
import { startRobotLinkServer, type RobotLinkServer } from '../robotlink/server.js';
import { isLoopbackHost } from '../http/tls.js';
import { openStore, type Store } from '../store/lmdb.js';
import { createTelemetryIngest, type TelemetryIngest } from '../telemetry/ingest.js';
import { BOUND_REASONS } from '../telemetry/sample-table.js';
import { ApiKeyVerifier } from '../auth/authenticate.js';
import { SessionService } from '../auth/users/sessions.js';
import { startKeyRevocationSweep } from '../telemetry/key-revocation-sweep.js';
import { StreamHub } from '../telemetry/stream-hub.js';
import { FoxgloveHub } from '../telemetry/foxglove-hub.js';
import { registerFoxgloveEndpoint } from '../telemetry/foxglove-ws.js';
import { STREAM_PATH } from '../telemetry/stream-protocol.js';
import { registerTelemetryStream } from '../telemetry/stream-ws.js';
import { TicketIssuer } from '../telemetry/ticket-issuer.js';
import { IdempotencyClaims, startIdempotencyPurger } from '../idempotency/index.js';
import { startMissionRetention } from '../missions/retention.js';
import { OperationRuntime } from '../missions/catalog/runtime.js';
import { attachToRuntime, MissionScheduling, runtimeGate } from '../missions/scheduling/scheduling-service.js';
import type { Clock } from '../missions/clock.js';
import type { RobotLink } from '../protocol/robot-link.js';
import { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { FleetAlerts } from '../fleet/alerts/index.js';
import { DELIVERY_OUTCOMES, WebhookDelivery } from '../webhooks/index.js';
import { alertView } from '../api/routes/alerts.js';
import { loadScrapeToken } from '../metrics/scrape-token.js';
import { registerMetricsEndpoint } from '../http/metrics-endpoint.js';
import { StoreHealth } from '../telemetry/store-health.js';
import { FaultTracker } from '../fleet/faults/tracker.js';
import { startFaultRetention } from '../fleet/faults/retention.js';
import { applyHealthReport } from '../fleet/health/intake.js';
import { UsageMeter } from '../fleet/robot-details/usage-meter.js';
import { join } from 'node:path';
import { Readiness } from './readiness.js';
import { FieldRuleDelivery, FieldRuleService } from '../fleet/field-rules/index.js';
import { API_INFO, buildRoutes } from './routes.js';
import { loadApiDocsAssets } from './api-docs-assets.js';
import { loadDashboardAssets } from './dashboard-assets.js';
import { LateMcp, mcpSessionLimits } from './mcp.js';

export interface GatewayOptions {
  dataDir: string;
  host: string;
  httpPort: number;
  grpcPort: number;
  /** null: embedded chdb store. */
  clickhouseUrl: string | null;
  /** With `clickhouseUrl`: write to this cluster's shards (docs/scale-out.md). */
  clickhouseCluster?: { name: string; shardUrls: string[] };
  /** Bound of the telemetry disk spool (`<dataDir>/telemetry-spool`). Default 1 GiB. */
  telemetrySpoolMaxBytes?: number;
  /** ClickHouse user/password (from a file or the environment, never the command line). */
  clickhouseAuth?: { username?: string; password?: string };
  /** 'self-signed': make/reuse `<dataDir>/tls`; 'insecure': plain HTTP (loopback only, checked by the CLI). */
  tls: 'self-signed' | 'insecure' | { certFile: string; keyFile: string };
  /** Defaults: DEFAULT_TUNABLES (src/config.ts), field by field. */
  tunables?: Partial<GatewayTunables>;
  /** The process logger; each component logs on a child with `component` bound. Default: none. */
  log?: Logger;
  /**
   * The process logger's byte sink (`ProcessLogger.writeBytes`), for the access log's lines written as
   * bytes. Without it the access log goes through `log` (pino), the same line at a higher cost.
   */
  logBytes?: LogBytesSink;
  /**
   * Further observers of finished HTTP requests (request metrics), after the access log; see
   * src/http/request-done.ts.
   */
  onRequestDone?: readonly RequestObserver[];
  /**
   * File holding the bearer token of `GET /metrics` (docs/operations.md). Default
   * `<dataDir>/metrics-token`, created with a random token when missing.
   */
  metricsTokenFile?: string;
  /** Browser origins allowed to call the API (FLEETGW_CORS_ORIGINS; src/http/cors.ts). Default: none, CORS off. */
  corsOrigins?: readonly string[];
  /**
   * A planned stop (close()) tells every connected robot to hold its link-loss reaction this long
   * while the gateway restarts (docs/robot-link.md, "Planned gateway restarts"). Default 0: no notice.
   */
  restartHoldMs?: number;
  /** Replacements for tests and embedders; `fleetgw serve` passes none. */
  overrides?: GatewayOverrides;
}

/** What a test (or an embedder) may replace in the gateway it starts; everything else is production wiring. */
export interface GatewayOverrides {
  /**
   * Serve this store instead of opening `<dataDir>/lmdb`. The caller keeps it: close() leaves it open,
   * so one store can outlive several gateway starts (a restart test).
   */
  store?: Store;
  /** Time source of the mission runtime (scheduler, dispatcher, run tracker). Default: the system clock. */
  clock?: Clock;
  /** Command service settings (ack retry schedule, outbox and audit bounds, wait limits). */
  commands?: Omit<CommandServiceOptions, 'store' | 'link'>;
  /** How often the mission dispatcher re-checks waiting fires (default 500 ms). */
  missionPassIntervalMs?: number;
}

export interface Gateway {
  readonly httpUrl: string;
  /** `host:port` of the robot link. */
  readonly grpcAddress: string;
  readonly telemetryStore: 'chdb' | 'clickhouse';
  /** Which telemetry decoder runs: the C++ addon, or the JS reader. */
  readonly telemetryDecoder: 'native' | 'js' | 'reference';
  readonly store: Store;
  /** The robot link as the domain sees it (who is online, link conflicts). */
  readonly link: RobotLink;
  readonly ingest: TelemetryIngest;
  readonly commands: CommandService;
  /** The store's event log. */
  readonly events: EventLog;
  /** Tracked objects (src/fleet/objects). */
  readonly objects: ObjectTracker;
  /** The live view of each fleet's operation and templates. */
  readonly runtime: OperationRuntime;
  /** Schedules, the scheduler and mission runs. */
  readonly missions: MissionScheduling;
  /** Field rule changes, and their delivery to robots over the link (docs/field-rules.md). */
  readonly fieldRules: FieldRuleService;
  readonly fieldRuleDelivery: FieldRuleDelivery;
  /** The Prometheus registry behind `GET /metrics`. */
  readonly metrics: GatewayMetrics;
  /** What /readyz and the gRPC health service answer. */
  readonly readiness: Readiness;
  /**
   * Fault records from the robots' health reports; `faults.observe(observer)` subscribes to raised,
   * updated and cleared faults (alerts: docs/faults.md).
   */
  readonly faults: FaultTracker;
  /** Alerts: the lifecycle service and its sources (the faults module's observer feeds `alerts.faults`). */
  readonly alerts: FleetAlerts;
  /** Drains and stops everything; safe to call twice. */
  close(): Promise<void>;
}

const HTTP_DRAIN_MS = 5000;

/** Starts every part of the gateway; resolves once HTTP and gRPC listen. */
export async function startGateway(opts: GatewayOptions): Promise<Gateway> {
  const root = opts.log ?? pino({ enabled: false });
  const logFor = (component: string): Logger => root.child({ component });
  const tunables: GatewayTunables = { ...DEFAULT_TUNABLES, ...opts.tunables };
  // Process-wide, before the telemetry path allocates; follows the telemetry rate (heap-growth.ts).
  const heapGrowth = new HeapGrowthPolicy(tunables.heapGrowingPercentLowLoad, tunables.heapGrowingPercent);
  const overrides = opts.overrides ?? {};
  const ownStore = overrides.store === undefined;
  const store = overrides.store ?? openStore(opts.dataDir);
  const closeOwnStore = (): Promise<void> => (ownStore ? store.close() : Promise.resolve());
  const tlsFiles = opts.tls === 'insecure' ? null : opts.tls === 'self-signed' ? await ensureTlsFiles(opts.dataDir) : opts.tls;
  // Read up front so a missing or unreadable file is named before anything starts. The robot link
  // shares the HTTP certificate; on a loopback host it stays plaintext (the traffic never leaves the
  // machine and local robots/simulators need no CA).
  const tlsPem = tlsFiles !== null ? await readTlsFiles(tlsFiles) : null;
  const grpcTls = tlsPem !== null && !isLoopbackHost(opts.host) ? tlsPem : null;

  // The services that hold state for this store: one of each, handed to every user below.
  const sessions = new SessionService(store, { idleTimeoutMs: tunables.sessionIdleTimeoutS * 1000, maxAgeMs: tunables.sessionMaxAgeS * 1000, log: logFor('sessions') });
  const keys = new ApiKeyVerifier(store, sessions);
  const events = new EventLog(store);
  const idempotency = new IdempotencyClaims(store);
  const alerts = new FleetAlerts({
    store,
    events,
    settings: {
      offlineAfterMs: tunables.alertOfflineAfterS * 1000,
      batteryLowPct: tunables.alertBatteryLowPct,
      batteryClearPct: tunables.alertBatteryClearPct,
      linkConflictClearMs: tunables.linkConflictClearMs,
    },
    log: logFor('alerts'),
  });
  const keyUsable = (apiKeyId: string, nowMs: number): boolean => keys.keyUsable(apiKeyId, nowMs);
  const tickets = new TicketIssuer({ keyUsable });
  const hub = new StreamHub({
    tickets,
    maxSockets: tunables.streamMaxSockets,
    maxSocketsPerKey: tunables.streamMaxSocketsPerKey,
    maxSocketsPerOrg: tunables.streamMaxSocketsPerOrg,
  });
  // The Foxglove endpoint (docs/foxglove.md): its sockets are admitted, bounded and revoked by `hub`.
  const foxglove = new FoxgloveHub({ hub });
  // New and changed alerts go out on the live stream at once (docs/telemetry-stream.md, alert messages).
  alerts.service.observe((a, change) => hub.publishAlert(a.fleetId, a.robotId, JSON.stringify({ op: 'alert', change, alert: alertView(a) })));
  // And to the organizations' webhooks (docs/webhooks.md): queued here, sent off the event loop's path.
  const webhooks = new WebhookDelivery({ store, log: logFor('webhooks') });
  alerts.service.observe((a, change) => webhooks.onAlert(a, change));
  const metricsFile = opts.metricsTokenFile ?? join(opts.dataDir, 'metrics-token');
  const scrapeAuth = await loadScrapeToken(metricsFile, opts.metricsTokenFile === undefined);
  // The metrics read their sources only when scraped, once everything below exists (the HTTP
  // server, which serves the scrape, starts last).
  let commands: CommandService | undefined;
  let missions: MissionScheduling | undefined;
  let readiness: Readiness | undefined;
  const online = new Set<string>();
  const metrics = new GatewayMetrics({
    telemetry: () => ingest.stats(),
    boundReasons: BOUND_REASONS,
    robotsOnline: () => online.size,
    commandsPending: () => commands?.stats().pending ?? 0,
    stream: () => ({ sockets: hub.socketCount, droppedSamples: hub.droppedTotal + foxglove.droppedTotal }),
    schedulesArmed: () => missions?.scheduler.stats().armed ?? 0,
    readiness: () => readiness?.results() ?? {},
    alertsUnresolved: () => alerts.service.unresolvedCount,
    storeUp: () => storeHealth.reachable,
    webhooks: { outcomeNames: DELIVERY_OUTCOMES, read: () => webhooks.stats() },
  });
  const stopKeySweep = startKeyRevocationSweep({ hub, tickets, keyUsable, log: logFor('telemetry') });
  // Distance and operating time of robots, from the telemetry snapshots the ingest writes.
  const usageMeter = new UsageMeter(store, { log: logFor('fleet') });
  const ingest = await createTelemetryIngest({
    store,
    dataDir: opts.dataDir,
    ...(opts.telemetrySpoolMaxBytes !== undefined ? { spoolMaxBytes: opts.telemetrySpoolMaxBytes } : {}),
    highWaterBytes: tunables.telemetryHighWaterBytes,
    lowWaterBytes: Math.floor(tunables.telemetryHighWaterBytes / 4),
    ...(opts.clickhouseUrl !== null ? { clickhouseUrl: opts.clickhouseUrl } : {}),
    ...(opts.clickhouseAuth !== undefined ? { clickhouseAuth: opts.clickhouseAuth } : {}),
    ...(opts.clickhouseCluster !== undefined ? { clickhouseCluster: opts.clickhouseCluster } : {}),
    live: hub,
    foxglove,
    // At most once a second per robot (the snapshot interval), never per sample.
    onSnapshot: (robotId, value) => {
      alerts.telemetry.onSnapshot(robotId, value);
      usageMeter.observe(robotId, value);
    },
    insert: {
      maxAgeMs: tunables.telemetryInsertMaxAgeMs,
      minRows: tunables.telemetryInsertMinRows,
      smallMaxAgeMs: tunables.telemetryInsertSmallMaxAgeMs,
      onInsert: (a) => {
        metrics.insertDone(a.ok, a.durationMs);
        storeHealth.noteInsert(a.ok, a.durationMs);
      },
    },
    log: logFor('telemetry'),
  });
  // Inserts report to it (above), the probe runs from here on: /readyz never queries the store itself.
  const storeHealth = new StoreHealth(ingest.sampleStore, logFor('telemetry'));
  // A server that did not answer at start (or refused): the gateway serves without it, and reports it.
  const setUpError = ingest.sampleStore.setUpError ?? null;
  if (setUpError !== null) storeHealth.note(false, setUpError);
  storeHealth.start();
  const telemetryStore = storeHealth;
  let linkServer: RobotLinkServer | undefined;
  let stopHeapGrowth = (): void => {};
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
      log: logFor('robotlink'),
    });
    const link = linkServer.link;
    // Before anything else listens, so a conflict is on record before any command reacts to it.
    recordLinkConflicts(events, link);
    link.listen({ telemetrySink: (robotId, fleetId) => ingest.sinkFor(robotId, fleetId) });
    const heapLog = logFor('gateway');
    stopHeapGrowth = heapGrowth.follow(
      () => ingest.stats().samplesIn,
      (percent, rate) => {
        heapLog.info({ heapGrowingPercent: percent, samplesPerS: Math.round(rate) }, `V8 heap growing percent set to ${percent} for telemetry at ${Math.round(rate)} samples/s`);
      },
      undefined,
      (atPeak) => ingest.setPeakLoad(atPeak),
    );
    // Acknowledged telemetry (issue 14 part 1): durable points become receipts to the robots.
    ingest.onDurable((robotId, epoch, seq) => link.telemetryDurable?.(robotId, epoch, seq));
    link.setTelemetryDurableSource?.((robotId) => ingest.durableOf(robotId));
    link.listen({ onOnline: (robotId) => online.add(robotId), onOffline: (robotId) => online.delete(robotId) });
    link.listen({ onOnline: (robotId, info) => foxglove.robotOnline(robotId, info.fleetId), onOffline: (robotId) => foxglove.robotOffline(robotId) });
    // Robot health reports: faults and per-device health (docs/faults.md).
    const faults = new FaultTracker(store, events, { log: logFor('fleet') });
    // A fault at error severity or worse is an alert; `updated` re-evaluates it (a warning that became
    // an error raises one, an error downgraded below that resolves it). Alerts are stored, and after a
    // restart the robot's next full health report raises or clears whatever changed meanwhile.
    faults.observe({
      raised: (f) => alerts.faults.onFaultRaised(f),
      cleared: (f) => alerts.faults.onFaultCleared(f),
      updated: (f) => alerts.faults.onFaultRaised(f),
    });
    link.listen({ onHealthReport: (robotId, report) => applyHealthReport(store, faults, robotId, report, Date.now()) });
    ingest.onBackpressure((paused) => link.setReadPaused(paused));
    const advertised = new AdvertisedProfiles(link);
    ingest.onBackpressure((paused) => metrics.backpressure(paused));
    commands = new CommandService({
      ...overrides.commands,
      store,
      link,
      log: logFor('commands'),
      observer: { state: (action, state) => metrics.commandState(action, state), acked: (outcome, ms) => metrics.commandAcked(outcome, ms) },
      exhaustion: alerts.commands,
    });
    // After the link-conflict events (above) and before the scheduler starts (its start-up misfires are schedule events).
    const commandRecords = commands;
    alerts.start(link, (commandId) => commandRecords.get(commandId));

    // Rule sets go out in the link's onLinkOpening, which runs before every onOnline listener (the
    // command service's outbox resend among them), whatever order the listeners were added in.
    const fieldRuleDelivery = new FieldRuleDelivery({ store, link, log: logFor('field-rules'), ackTimeoutMs: tunables.fieldRuleAckTimeoutMs });
    const fieldRules = new FieldRuleService(store, events, fieldRuleDelivery);

    const runtime = new OperationRuntime(store, { log: logFor('missions') });
    runtime.loadAll();
    // Robots registered before the name index existed get their keys (resolve reads only the index).
    await ensureRobotNameIndex(store);
    const stopPurger = startIdempotencyPurger(store, { log: logFor('idempotency') });
    // Schedules fire only after the runtime has loaded every operation (the dispatch gate reads it).
    missions = new MissionScheduling({
      store,
      events,
      link,
      commands,
      gate: runtimeGate(runtime),
      log: logFor('missions'),
      onLateness: (outcome, ms) => metrics.schedulerLateness(outcome, ms),
      ...(overrides.clock !== undefined ? { clock: overrides.clock } : {}),
      ...(overrides.missionPassIntervalMs !== undefined ? { passIntervalMs: overrides.missionPassIntervalMs } : {}),
    });
    attachToRuntime(missions, runtime);
    // Missions completed and failed per robot, counted as runs finish (robot details).
    missions.tracker.onChange((run, previous) => usageMeter.runFinished(run, previous));
    const objects = new ObjectTracker(store, events, link, { ttlMs: tunables.objectTtlMs, log: logFor('objects') });
    await missions.start();
    const stopRetention = startMissionRetention(store, { log: logFor('missions') });
    const stopFaultRetention = startFaultRetention(store, { log: logFor('fleet') });
    const scheduler = missions.scheduler;
    const grpcHealth = linkServer;
    readiness = new Readiness(
      {
        // Reachable, or spooling: while the disk spool has room a store outage loses nothing and
        // slows no robot (issue 14 part 1); a full spool with the store down is not ready.
        store: () => telemetryStore.reachable || ingest.spoolAccepting(),
        lmdb: () => {
          // A read from a closed environment throws: a memory-mapped read, microseconds.
          store.meta.get('schemaVersion');
          return true;
        },
        scheduler: () => scheduler.running,
      },
      logFor('gateway'),
      (ready) => grpcHealth.setServing(ready),
      { storeReachable: () => telemetryStore.reachable },
    );
    readiness.start();
    const ready = readiness;

    let streamUrl = '';
    let httpUrl = '';
    // The API reference is a convenience: a broken docs bundle must not keep the gateway (and its stops) down.
    const apiDocs = await loadApiDocsAssets().catch((err: unknown) => {
      logFor('api').warn({ err }, `GET /docs is not served: ${(err as Error).message}`);
      return undefined;
    });
    // Likewise the dashboard: a checkout built without it still serves the API and the robots.
    const dashboard = await loadDashboardAssets().catch((err: unknown) => {
      logFor('api').warn({ err }, `GET / (dashboard) is not served: ${(err as Error).message}`);
      return undefined;
    });
    // The MCP endpoint's tools dispatch through the router, which serves the MCP route: built after it.
    const lateMcp = new LateMcp();
    const { routes } = buildRoutes({
      store, events, idempotency, link, commands, tickets, streamUrl: () => streamUrl, httpUrl: () => httpUrl, runtime, missions, objects, advertised, ready: () => ready.ready(), degraded: () => ready.status() === 'degraded', log: logFor('api'),
      sessions, secureCookies: tlsFiles !== null, fieldRules, alerts: alerts.service, ...(apiDocs ? { apiDocs } : {}), ...(dashboard ? { dashboard } : {}),
      mcp: lateMcp,
      usage: (id) => usageMeter.usage(id),
      ...(ingest.sampleStore.select !== undefined ? { telemetrySelect: (q) => ingest.sampleStore.select!(q) } : {}),
      historyExportMaxBytes: tunables.historyExportMaxBytes,
      historyExports: tunables.historyExports,
    });
    const router = createRouter(routes, {
      auth: keys,
      rateLimiter: new RateLimiter({ ratePerSecond: tunables.rateLimitPerSecond, burst: tunables.rateLimitBurst }),
      authThrottle: new AuthThrottle(),
      log: logFor('http'),
      removed: REMOVED_ROUTES,
      corsOrigins: opts.corsOrigins ?? [],
    });
    const mcp = lateMcp.start(routes, router, API_INFO.version, logFor('mcp'), mcpSessionLimits(tunables));
    // Released when the gateway closes: its exit-flush hook must not outlive it (a process that goes on).
    const access = accessLog(logFor('http'), opts.logBytes);
    http = await startHttpServer({
      host: opts.host,
      port: opts.httpPort,
      tls: tlsFiles,
      handle: router,
      maxBodyBytes: tunables.maxBodyBytes,
      configure: (app) => {
        registerTelemetryStream(app, hub);
        registerFoxgloveEndpoint(app, { foxglove, tickets, maxBufferedBytes: hub.maxBufferedBytes });
        registerMetricsEndpoint(app, {
          allows: (authorization) => scrapeAuth.allows(authorization),
          render: async () => ({ text: await metrics.render(), contentType: metrics.contentType }),
          log: logFor('http'),
        });
      },
      log: logFor('http'),
      onRequestDone: [access, (done) => metrics.httpRequest(done), ...(opts.onRequestDone ?? [])],
    });
    streamUrl = `${http.url.replace(/^http/, 'ws')}${STREAM_PATH}`;
    httpUrl = http.url;
    // Last: nothing below can fail, so the meter's timer never outlives a failed start.
    usageMeter.start();

    const httpServer = http;
    const grpc = linkServer;
    const commandService = commands;
    const missionRuntime = missions;
    let closing: Promise<void> | undefined;
    const close = async (): Promise<void> => {
      // Order: stop taking requests and robot streams, let in-flight HTTP finish, then drain telemetry
      // into the store, then close commands and the store they write to.
      ready.stop();
      httpServer.stopListening();
      await grpc.close({ restartHoldMs: opts.restartHoldMs ?? 0 });
      const deadline = Date.now() + HTTP_DRAIN_MS;
      while (httpServer.inFlight() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      stopKeySweep();
      stopHeapGrowth();
      hub.close();
      await mcp.close();
      httpServer.close();
      access.release();
      stopPurger();
      stopRetention();
      stopFaultRetention();
      missionRuntime.stop();
      fieldRuleDelivery.close();
      runtime.close();
      await objects.close();
      telemetryStore.stop();
      await ingest.close();
      await usageMeter.stop();
      await commandService.close();
      await webhooks.close();
      await alerts.close();
      await closeOwnStore();
    };
    return {
      httpUrl: http.url,
      grpcAddress: linkServer.address,
      telemetryStore: ingest.storeKind,
      telemetryDecoder: ingest.decoder,
      store,
      link,
      ingest,
      commands: commandService,
      events,
      runtime,
      missions: missionRuntime,
      fieldRules,
      fieldRuleDelivery,
      objects,
      metrics,
      readiness: ready,
      faults,
      alerts,
      close: () => (closing ??= close()),
    };
  } catch (err: unknown) {
    readiness?.stop();
    stopHeapGrowth();
    storeHealth.stop();
    stopKeySweep();
    await webhooks.close();
    await alerts.close();
    http?.close();
    linkServer?.forceClose();
    await ingest.close();
    await closeOwnStore();
    throw err;
  }
}
