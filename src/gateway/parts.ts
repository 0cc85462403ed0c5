/**
 * What the gateway's plugins provide to each other (fastify's `decorate`): each plugin puts the parts
 * it built under its names when it starts, and a plugin that needs another's part reads it with `get`,
 * which names the missing part instead of handing on an undefined one. Reading a part another plugin
 * provides is only allowed to a plugin that depends on that one (the composer starts it first).
 */
import type { Logger } from 'pino';
import type { AdvertisedProfiles } from '../commands/advertised.js';
import type { CommandService } from '../commands/service.js';
import type { GatewayTunables } from '../config.js';
import type { EventLog } from '../events/log.js';
import type { ApiKeyVerifier } from '../auth/authenticate.js';
import type { SessionService } from '../auth/users/sessions.js';
import type { FleetAlerts } from '../fleet/safety/alerts/index.js';
import type { WebhookDelivery } from '../webhooks/index.js';
import type { FaultTracker } from '../fleet/safety/faults/tracker.js';
import type { FieldRuleDelivery, FieldRuleService } from '../fleet/safety/field-rules/index.js';
import type { ObjectTracker } from '../fleet/site/objects/tracker.js';
import type { UsageMeter } from '../fleet/robots/details/usage-meter.js';
import type { HttpServer } from '../http/uws-adapter.js';
import type { TlsFiles } from '../http/tls.js';
import type { IdempotencyClaims } from '../idempotency/index.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { ScrapeAuth } from '../metrics/scrape-token.js';
import type { OperationRuntime } from '../missions/catalog/runtime.js';
import type { MissionScheduling } from '../missions/scheduling/scheduling-service.js';
import type { LinkSet } from '../protocol/link-set.js';
import type { RobotLinkServer } from '../robotlink/server.js';
import type { Store } from '../store/lmdb.js';
import type { TelemetryIngest } from '../telemetry/ingest/index.js';
import type { FoxgloveHub } from '../telemetry/foxglove/index.js';
import type { StoreHealth } from '../telemetry/store/index.js';
import type { StreamHub } from '../telemetry/live/index.js';
import type { TicketIssuer } from '../telemetry/live/index.js';
import type { Vda5050BrokerConnection, Vda5050Identities } from '../vda5050/contracts.js';
import type { InboundGate } from '../vda5050/inbound/index.js';
import type { GatewayOptions } from './options.js';
import type { Readiness } from './readiness.js';

/** Every part a plugin provides, by name. */
export interface PartTypes {
  store: Store;
  events: EventLog;
  sessions: SessionService;
  keys: ApiKeyVerifier;
  idempotency: IdempotencyClaims;
  metrics: GatewayMetrics;
  /** Who may read `GET /metrics`. */
  scrapeAuth: ScrapeAuth;
  tickets: TicketIssuer;
  hub: StreamHub;
  foxglove: FoxgloveHub;
  alerts: FleetAlerts;
  webhooks: WebhookDelivery;
  usageMeter: UsageMeter;
  ingest: TelemetryIngest;
  storeHealth: StoreHealth;
  linkServer: RobotLinkServer;
  /** Every robot link as one (src/protocol/link-set.ts): what commands, missions and views use. */
  link: LinkSet;
  /** Robot <-> VDA 5050 identity lookups (src/vda5050). */
  vda5050Identities: Vda5050Identities;
  /** How VDA 5050 master control reaches its broker; null when VDA 5050 is off. */
  vda5050Broker: Vda5050BrokerConnection | null;
  /** The check every inbound VDA 5050 message passes (src/vda5050/inbound); provided while VDA 5050 is on. */
  vda5050Inbound: InboundGate;
  /** Robots with a live control stream (the `fleetgw_robots_online` gauge). */
  online: ReadonlySet<string>;
  faults: FaultTracker;
  advertised: AdvertisedProfiles;
  commands: CommandService;
  fieldRuleDelivery: FieldRuleDelivery;
  fieldRules: FieldRuleService;
  runtime: OperationRuntime;
  missions: MissionScheduling;
  objects: ObjectTracker;
  http: HttpServer;
  readiness: Readiness;
}

/** The parts provided so far. */
export class Parts {
  private readonly parts = new Map<keyof PartTypes, unknown>();

  /** Provides `name`; a second provider of one name is a wiring bug. */
  provide<K extends keyof PartTypes>(name: K, part: PartTypes[K]): PartTypes[K] {
    if (this.parts.has(name)) throw new Error(`gateway part '${name}' is provided twice`);
    this.parts.set(name, part);
    return part;
  }

  /** The part `name`; throws naming it when no started plugin provides it. */
  get<K extends keyof PartTypes>(name: K): PartTypes[K] {
    if (!this.parts.has(name)) throw new Error(`gateway part '${name}' is used before the plugin that provides it started`);
    return this.parts.get(name) as PartTypes[K];
  }

  /** The part `name`, or undefined (for what reads a later plugin's part lazily: metrics, readiness). */
  peek<K extends keyof PartTypes>(name: K): PartTypes[K] | undefined {
    return this.parts.get(name) as PartTypes[K] | undefined;
  }
}

/** What every plugin factory receives: the gateway's settings and the shared parts. */
export interface GatewayContext {
  readonly opts: GatewayOptions;
  readonly tunables: GatewayTunables;
  readonly parts: Parts;
  /** A child of the process logger with `component` bound. */
  logFor(component: string): Logger;
  /** The HTTP certificate (null: plain HTTP), and the robot link's (null on a loopback host: plaintext). */
  readonly tls: { files: TlsFiles | null; grpc: { cert: Buffer; key: Buffer } | null; pem: { cert: Buffer; key: Buffer } | null };
}
