/**
 * The composition root: composes the gateway's plugins (src/gateway/plugins, one per domain module:
 * what it owns in LMDB, what it starts and stops) and hands out the parts they built. The composer
 * (compose.ts) starts them in dependency order and stops them in reverse; a start that fails stops
 * everything already started before the error reaches the caller. Each service is built once, by its
 * plugin, and handed to who needs it; no module keeps per-store state of its own.
 */
import { pino } from 'pino';
import { DEFAULT_TUNABLES, type GatewayTunables } from '../config.js';
import type { CommandService } from '../commands/service.js';
import type { EventLog } from '../events/log.js';
import type { FleetAlerts } from '../fleet/safety/alerts/index.js';
import type { FaultTracker } from '../fleet/safety/faults/tracker.js';
import type { FieldRuleDelivery, FieldRuleService } from '../fleet/safety/field-rules/index.js';
import type { ObjectTracker } from '../fleet/site/objects/tracker.js';
import { ensureTlsFiles, isLoopbackHost, readTlsFiles } from '../http/tls.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { OperationRuntime } from '../missions/catalog/runtime.js';
import { faultPoint } from '../missions/fault-points.js';
import type { MissionScheduling } from '../missions/scheduling/scheduling-service.js';
import type { RobotLink } from '../protocol/robot-link.js';
import type { Store } from '../store/lmdb.js';
import { StorageOwnership } from '../store/ownership.js';
import type { TelemetryIngest } from '../telemetry/ingest/index.js';
import { setDecoderSetting } from '../telemetry/decode/index.js';
import { setHugePages } from '../telemetry/store/index.js';
import { startPlugins } from './compose.js';
import type { GatewayOptions } from './options.js';
import { Parts, type GatewayContext } from './parts.js';
import { DeclaredRoutes } from './route-groups.js';
import { gatewayPlugins } from './plugins/index.js';
import type { Readiness } from './readiness.js';

export type { GatewayOptions, GatewayOverrides } from './options.js';

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
  /** Tracked objects (src/fleet/site/objects). */
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
  /** Which plugin owns each LMDB database and key prefix. */
  readonly ownership: StorageOwnership;
  /** Drains and stops everything; safe to call twice. */
  close(): Promise<void>;
}

/** Starts every part of the gateway; resolves once HTTP and gRPC listen. */
export async function startGateway(opts: GatewayOptions): Promise<Gateway> {
  const root = opts.log ?? pino({ enabled: false });
  const tunables: GatewayTunables = { ...DEFAULT_TUNABLES, ...opts.tunables };
  // Before anything of the telemetry core loads the addon or allocates its buffers.
  if (opts.telemetry?.decoder !== undefined) setDecoderSetting(opts.telemetry.decoder);
  if (opts.telemetry?.hugePages !== undefined) setHugePages(opts.telemetry.hugePages);
  const tlsFiles = opts.tls === 'insecure' ? null : opts.tls === 'self-signed' ? await ensureTlsFiles(opts.dataDir) : opts.tls;
  // Read up front so a missing or unreadable file is named before anything starts. The robot link
  // shares the HTTP certificate; on a loopback host it stays plaintext (the traffic never leaves the
  // machine and local robots/simulators need no CA).
  const tlsPem = tlsFiles !== null ? await readTlsFiles(tlsFiles) : null;
  const grpcTls = tlsPem !== null && !isLoopbackHost(opts.host) ? tlsPem : null;
  const parts = new Parts();
  const routes = new DeclaredRoutes();
  const ctx: GatewayContext = {
    opts,
    tunables,
    parts,
    routes,
    logFor: (component) => root.child({ component }),
    tls: { files: tlsFiles, grpc: grpcTls, pem: tlsPem },
  };
  const ownership = new StorageOwnership();
  const running = await startPlugins(gatewayPlugins(ctx), {
    log: root.child({ component: 'gateway' }),
    ownership,
    routes,
    beforeStart: (step) => faultPoint(step as `start.${string}`),
  });
  const http = parts.get('http');
  const linkServer = parts.get('linkServer');
  const ingest = parts.get('ingest');
  return {
    httpUrl: http.url,
    grpcAddress: linkServer.address,
    telemetryStore: ingest.storeKind,
    telemetryDecoder: ingest.decoder,
    store: parts.get('store'),
    link: parts.get('link'),
    ingest,
    commands: parts.get('commands'),
    events: parts.get('events'),
    runtime: parts.get('runtime'),
    missions: parts.get('missions'),
    fieldRules: parts.get('fieldRules'),
    fieldRuleDelivery: parts.get('fieldRuleDelivery'),
    objects: parts.get('objects'),
    metrics: parts.get('metrics'),
    readiness: parts.get('readiness'),
    faults: parts.get('faults'),
    alerts: parts.get('alerts'),
    ownership,
    close: () => running.stop(),
  };
}
