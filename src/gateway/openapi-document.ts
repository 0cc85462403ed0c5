/**
 * The /openapi.json document without a running gateway, for linting the contract and generating
 * clients offline (scripts/lint-openapi.mjs). The routes are built by the same {@link buildRoutes}
 * the gateway serves, over real parts opened on a throw-away data dir: a route list needs its
 * dependencies to exist, not to run, so nothing listens, no scheduler starts and the dir is removed.
 * The document's server is the relative `/` (openapi.ts RELATIVE_SERVER).
 */
import { AdvertisedProfiles } from '../commands/advertised.js';
import { pino } from 'pino';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SessionService } from '../auth/users/sessions.js';
import { CommandService } from '../commands/service.js';
import { EventLog } from '../events/log.js';
import { ObjectTracker } from '../fleet/site/objects/tracker.js';
import { AlertService } from '../fleet/safety/alerts/index.js';
import { IdempotencyClaims } from '../idempotency/index.js';
import { OperationRuntime } from '../missions/catalog/runtime.js';
import { MissionScheduling, runtimeGate } from '../missions/scheduling/scheduling-service.js';
import { RobotRegistry } from '../robotlink/registry.js';
import { openStore } from '../store/lmdb.js';
import { TicketIssuer } from '../telemetry/live/index.js';
import { FieldRuleDelivery, FieldRuleService } from '../fleet/safety/field-rules/index.js';
import { apiError } from '../errors/catalog.js';
import { buildRoutes } from './routes.js';

/** Builds the document the gateway would serve. */
export function offlineOpenApiDocument(): Promise<Record<string, unknown>> {
  return withOfflineRoutes((built) => built.openapi);
}

/** Builds the gateway's routes and document offline, hands them to `use`, then closes everything. */
export async function withOfflineRoutes<T>(use: (built: ReturnType<typeof buildRoutes>) => T): Promise<T> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-openapi-'));
  const log = pino({ enabled: false });
  const store = openStore(dataDir);
  try {
    const events = new EventLog(store);
    const idempotency = new IdempotencyClaims(store);
    const link = new RobotRegistry(log);
    const commands = new CommandService({ store, link, log });
    const runtime = new OperationRuntime(store, { log });
    const missions = new MissionScheduling({ store, events, link, commands, gate: runtimeGate(runtime), log });
    const delivery = new FieldRuleDelivery({ store, link, log });
    const fieldRules = new FieldRuleService(store, events, delivery);
    const objects = new ObjectTracker(store, events, link, { ttlMs: 60_000, log });
    try {
      return use(buildRoutes({
        store, events, idempotency, link, commands, tickets: new TicketIssuer(), streamUrl: () => '', runtime, missions, objects, advertised: new AdvertisedProfiles(link), ready: () => false, log,
        sessions: new SessionService(store), secureCookies: true, fieldRules, alerts: new AlertService({ store, events, log }),
        // Nothing listens offline: the MCP route is described, never called.
        mcp: { endpoint: () => Promise.reject(apiError('unavailable', { what: 'MCP (offline document)' })), isTool: () => false },
      }));
    } finally {
      delivery.close();
      missions.stop();
      runtime.close();
      await objects.close();
      await commands.close();
    }
  } finally {
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
