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
import type { IdentityReads } from '../store/identity-reads.js';
import type { Store } from '../store/lmdb.js';
import type { LatestSnapshots } from '../telemetry/snapshots/index.js';
import type { CatalogReads } from '../missions/catalog/catalog-reads.js';
import type { TelemetryIngest } from '../telemetry/ingest/index.js';
import type { FoxgloveHub } from '../telemetry/foxglove/index.js';
import type { StoreHealth } from '../telemetry/store/index.js';
import type { StreamHub } from '../telemetry/live/index.js';
import type { TicketIssuer } from '../telemetry/live/index.js';
import type { Vda5050Broker, Vda5050Identities } from '../vda5050/contracts.js';
import type { InboundGate } from '../vda5050/inbound/index.js';
import type { GatewayOptions } from './options.js';
import type { Readiness } from './readiness.js';
import type { DeclaredRoutes } from './route-groups.js';
import type { CatalogWrites } from '../missions/catalog/catalog-writes.js';
import type { RegistryWrites } from '../store/registry-writes.js';

/** Every part a plugin provides, by name. */
export interface PartTypes {
  store: Store;
  /** The registry's records, for every module that reads them (src/store/identity-reads.ts). */
  identity: IdentityReads;
  /** Each robot's latest snapshot, for every module that reads it (src/telemetry/snapshots). */
  snapshots: LatestSnapshots;
  /** Templates and operations, for the modules built on the catalog (src/missions/catalog/catalog-reads.ts). */
  catalog: CatalogReads;
  /** The catalog's writes made in another module's change, over the catalog's store (catalog-writes.ts). */
  catalogWrites: CatalogWrites;
  /** The registry's writes made in robot administration's transaction, over the registry's store (src/store/registry-writes.ts). */
  registryWrites: RegistryWrites;
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
  vda5050Broker: Vda5050Broker | null;
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
  /**
   * @param parts shared by every plugin's view of the parts
   * @param scope what `get('store')` hands out instead of the store itself (a plugin's write scope)
   */
  constructor(
    private readonly parts = new Map<keyof PartTypes, unknown>(),
    private readonly scope?: (store: Store) => Store,
  ) {}

  /**
   * The same parts as one plugin sees them: `get('store')` and `peek('store')` answer `scope(store)`,
   * built once per store (src/store/write-scope.ts: the databases the plugin does not own are read-only).
   */
  withStoreScope(scope: (store: Store) => Store): Parts {
    let raw: Store | undefined;
    let view: Store | undefined;
    return new Parts(this.parts, (store) => {
      if (store !== raw) {
        raw = store;
        view = scope(store);
      }
      return view!;
    });
  }

  /** Provides `name`; a second provider of one name is a wiring bug. */
  provide<K extends keyof PartTypes>(name: K, part: PartTypes[K]): PartTypes[K] {
    if (this.parts.has(name)) throw new Error(`gateway part '${name}' is provided twice`);
    this.parts.set(name, part);
    return part;
  }

  /** The part `name`; throws naming it when no started plugin provides it. */
  get<K extends keyof PartTypes>(name: K): PartTypes[K] {
    if (!this.parts.has(name)) throw new Error(`gateway part '${name}' is used before the plugin that provides it started`);
    return this.scoped(name, this.parts.get(name)) as PartTypes[K];
  }

  /** The part `name`, or undefined (for what reads a later plugin's part lazily: metrics, readiness). */
  peek<K extends keyof PartTypes>(name: K): PartTypes[K] | undefined {
    const part = this.parts.get(name);
    return (part === undefined ? undefined : this.scoped(name, part)) as PartTypes[K] | undefined;
  }

  private scoped(name: keyof PartTypes, part: unknown): unknown {
    return name === 'store' && this.scope !== undefined ? this.scope(part as Store) : part;
  }
}

/** What every plugin factory receives: the gateway's settings and the shared parts. */
export interface GatewayContext {
  readonly opts: GatewayOptions;
  readonly tunables: GatewayTunables;
  readonly parts: Parts;
  /** The route groups of the started plugins (the composer fills it, the http plugin serves it). */
  readonly routes: DeclaredRoutes;
  /** A child of the process logger with `component` bound. */
  logFor(component: string): Logger;
  /** The HTTP certificate (null: plain HTTP), and the robot link's (null on a loopback host: plaintext). */
  readonly tls: { files: TlsFiles | null; grpc: { cert: Buffer; key: Buffer } | null; pem: { cert: Buffer; key: Buffer } | null };
}
