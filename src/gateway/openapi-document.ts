/**
 * The /openapi.json document without a running gateway, for linting the contract and generating
 * clients offline (scripts/lint-openapi.mjs). The routes are the ones the plugins declare
 * (plugin.ts `routes()`), composed by the same {@link composeServedRoutes} the http plugin serves,
 * over real parts opened on a throw-away data dir: a route list needs its dependencies to exist, not
 * to run, so no plugin starts, nothing listens, no scheduler starts and the dir is removed. The
 * document's server is the relative `/` (openapi.ts RELATIVE_SERVER).
 */
import { pino } from 'pino';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionService } from '../auth/users/sessions.js';
import { AdvertisedProfiles } from '../commands/advertised.js';
import { CommandService } from '../commands/service.js';
import { DEFAULT_TUNABLES } from '../config.js';
import { apiError } from '../errors/catalog.js';
import { EventLog } from '../events/log.js';
import { UsageMeter } from '../fleet/robots/details/usage-meter.js';
import { FleetAlerts } from '../fleet/safety/alerts/index.js';
import { FieldRuleDelivery, FieldRuleService } from '../fleet/safety/field-rules/index.js';
import { ObjectTracker } from '../fleet/site/objects/tracker.js';
import { IdempotencyClaims } from '../idempotency/index.js';
import { catalogReads } from '../missions/catalog/catalog-reads.js';
import { OperationRuntime } from '../missions/catalog/runtime.js';
import { MissionScheduling, runtimeGate } from '../missions/scheduling/scheduling-service.js';
import { LinkSet } from '../protocol/link-set.js';
import { RobotRegistry } from '../robotlink/registry.js';
import { identityReads } from '../store/identity-reads.js';
import { openStore } from '../store/lmdb.js';
import { TicketIssuer } from '../telemetry/live/index.js';
import { latestSnapshots } from '../telemetry/snapshots/index.js';
import { Parts, type GatewayContext } from './parts.js';
import { gatewayPlugins } from './plugins/index.js';
import { DeclaredRoutes } from './route-groups.js';
import { composeServedRoutes } from './served-routes.js';
import { catalogWrites } from '../missions/catalog/catalog-writes.js';
import { registryWrites } from '../store/registry-writes.js';

/** Builds the document the gateway would serve. */
export function offlineOpenApiDocument(): Promise<Record<string, unknown>> {
  return withOfflineRoutes((built) => built.openapi);
}

/** Builds the gateway's routes and document offline, hands them to `use`, then closes everything. */
export async function withOfflineRoutes<T>(use: (built: ReturnType<typeof composeServedRoutes>) => T): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-openapi-'));
  const log = pino({ enabled: false });
  const store = openStore(dataDir);
  try {
    // The parts the plugins' routes are built over, as their plugins' starts would provide them.
    const parts = new Parts();
    parts.provide('store', store);
    const events = parts.provide('events', new EventLog(store));
    const idempotency = parts.provide('idempotency', new IdempotencyClaims(store));
    const link = parts.provide('link', new LinkSet());
    link.add(new RobotRegistry(log));
    const commands = parts.provide('commands', new CommandService({ store, link, log }));
    parts.provide('advertised', new AdvertisedProfiles(link));
    const runtime = parts.provide('runtime', new OperationRuntime(store, { log }));
    const identity = parts.provide('identity', identityReads(store));
    const snapshots = parts.provide('snapshots', latestSnapshots(store));
    const catalog = parts.provide('catalog', catalogReads(store));
    const writes = parts.provide('catalogWrites', catalogWrites(store));
    parts.provide('registryWrites', registryWrites(store));
    const missions = parts.provide('missions', new MissionScheduling({ store, identity, snapshots, catalog, catalogWrites: writes, events, link, commands, gate: runtimeGate(runtime), log }));
    const delivery = parts.provide('fieldRuleDelivery', new FieldRuleDelivery({ store, link, log }));
    parts.provide('fieldRules', new FieldRuleService(store, events, delivery));
    const objects = parts.provide('objects', new ObjectTracker(store, events, link, { ttlMs: 60_000, log }));
    parts.provide('sessions', new SessionService(store));
    parts.provide('tickets', new TicketIssuer());
    const alerts = parts.provide('alerts', new FleetAlerts({ store, events, log }));
    parts.provide('usageMeter', new UsageMeter(store, { log }));
    const ctx: GatewayContext = {
      opts: { dataDir, host: '127.0.0.1', httpPort: 0, grpcPort: 0, clickhouseUrl: null, tls: 'insecure' },
      tunables: DEFAULT_TUNABLES,
      parts,
      routes: new DeclaredRoutes(),
      logFor: () => log,
      tls: { files: null, grpc: null, pem: null },
    };
    try {
      const groups = gatewayPlugins(ctx).flatMap((p) => p.routes());
      return use(composeServedRoutes({
        groups, idempotency, ready: () => false, log,
        // Nothing listens offline: the MCP route is described, never called.
        mcp: { endpoint: () => Promise.reject(apiError('unavailable', { what: 'MCP (offline document)' })), isTool: () => false },
      }));
    } finally {
      delivery.close();
      missions.stop();
      runtime.close();
      await objects.close();
      await alerts.close();
      await commands.close();
    }
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
