/**
 * Every route the gateway serves, in one list: the router serves exactly this list and /openapi.json
 * is built from it, so the two cannot disagree.
 */
import type { Logger } from 'pino';
import type { CommandService } from '../commands/service.js';
import type { EventLog } from '../events/log.js';
import type { IdempotencyClaims } from '../idempotency/claims.js';
import { buildOpenApi, RELATIVE_SERVER } from '../api/openapi.js';
import { controlOperationRoutes } from '../api/routes/control-operation.js';
import { commandReadRoutes } from '../api/routes/command-read.js';
import { controlRobotRoutes } from '../api/routes/control-robot.js';
import { robotCommandRoutes } from '../api/routes/robot-commands.js';
import { robotConfigRoutes } from '../api/routes/robot-config.js';
import { eventRoutes } from '../api/routes/events.js';
import { featureRoutes } from '../api/routes/features.js';
import { fieldRuleRoutes } from '../api/routes/field-rules.js';
import type { FieldRuleService } from '../fleet/safety/field-rules/index.js';
import { templateRoutes } from '../api/routes/templates.js';
import { missionRuntimeRoutes } from '../api/routes/mission-runtime.js';
import { missionToolRoutes } from '../api/routes/mission-tools.js';
import { agentReadRoutes } from '../api/routes/agent-read.js';
import type { AdvertisedProfiles } from '../commands/advertised.js';
import { fleetRoutes } from '../api/routes/fleets.js';
import { orgRoutes } from '../api/routes/orgs.js';
import { objectRoutes } from '../api/routes/objects.js';
import { robotAdminRoutes } from '../api/routes/robot-admin.js';
import type { ObjectTracker } from '../fleet/site/objects/tracker.js';
import { healthRoutes } from '../api/routes/health.js';
import { meRoutes } from '../api/routes/me.js';
import { mcpRoutes } from '../api/routes/mcp.js';
import type { McpRouteDeps } from '../api/routes/mcp.js';
import { apiKeyRoutes } from '../api/routes/api-keys.js';
import { webhookRoutes } from '../api/routes/webhooks.js';
import { userRoutes } from '../api/routes/users.js';
import { floorPlanRoutes } from '../api/routes/floor-plan.js';
import { alertRoutes } from '../api/routes/alerts.js';
import type { AlertService } from '../fleet/safety/alerts/index.js';
import { sessionRoutes } from '../api/routes/sessions.js';
import type { SessionService } from '../auth/users/sessions.js';
import { openApiRoutes } from '../api/routes/openapi.js';
import { apiDocsRoutes } from '../api/routes/api-docs.js';
import { dashboardRoutes } from '../api/routes/dashboard.js';
import type { PreparedAsset } from '../api/prepared-body.js';
import { robotRoutes } from '../api/routes/robots.js';
import { faultRoutes } from '../api/routes/faults.js';
import { robotDetailsRoutes } from '../api/routes/robot-details.js';
import { utilizationRoutes } from '../api/routes/utilization.js';
import { telemetryHistoryRoutes } from '../api/routes/telemetry-history.js';
import type { RobotUsageRecord } from '../fleet/robots/details/usage.js';
import type { TelemetrySelect } from '../fleet/history/utilization/utilization.js';
import { streamTicketRoutes } from '../api/routes/stream-tickets.js';
import type { RouteDef } from '../api/route.js';
import { withRouteIdempotency } from '../api/idempotent-routes.js';
import type { OperationRuntime } from '../missions/catalog/runtime.js';
import { NOTHING_ADVERTISED } from '../missions/catalog/robot-capabilities.js';
import type { MissionScheduling } from '../missions/scheduling/scheduling-service.js';
import type { RobotLink } from '../protocol/robot-link.js';
import type { Store } from '../store/lmdb.js';
import type { TicketIssuer } from '../telemetry/live/index.js';

export interface RouteDeps {
  store: Store;
  /** The store's event log (one per store). */
  events: EventLog;
  /** The store's Idempotency-Key claims (one per store). */
  idempotency: IdempotencyClaims;
  link: Pick<RobotLink, 'isOnline' | 'linkConflict' | 'closeSession'>;
  commands: CommandService;
  tickets: TicketIssuer;
  /** Public URL of the telemetry WebSocket (known once the HTTP server listens). */
  streamUrl: () => string;
  /**
   * The gateway's own REST URL, published as the document's `servers` entry ('' until the server
   * listens, and without a server at all: then the relative `/` server, see openapi.ts).
   */
  httpUrl?: () => string;
  /** Live view of each fleet's operation and templates (src/missions/catalog/runtime.ts). */
  runtime: OperationRuntime;
  /** Schedules, the scheduler and mission runs (src/missions/scheduling/scheduling-service.ts). */
  missions?: MissionScheduling;
  /** Tracked objects (src/fleet/site/objects/tracker.ts). */
  objects: ObjectTracker;
  /** What each robot advertised in its latest Hello (the Agent read tools describe it). */
  advertised: AdvertisedProfiles;
  /** Readiness behind GET /readyz (src/gateway/readiness.ts). */
  ready: () => boolean;
  /** Ready with the telemetry store down (spooling): /readyz says `degraded`. */
  degraded?: () => boolean;
  log?: Logger;
  /** Field rule changes and their delivery to robots (src/fleet/safety/field-rules). */
  fieldRules: FieldRuleService;
  /** User sessions (src/auth/users/sessions.ts). */
  sessions: SessionService;
  /** The gateway serves HTTPS: session cookies get `Secure`. */
  secureCookies: boolean;
  /** The files of GET /docs (api-docs-assets.ts); absent: no /docs. */
  apiDocs?: ReadonlyMap<string, PreparedAsset>;
  /** The dashboard's files for GET / (dashboard-assets.ts); absent: no dashboard. */
  dashboard?: ReadonlyMap<string, PreparedAsset>;
  /** Robot usage totals (src/fleet/robots/details/usage-meter.ts); absent: only the saved totals. */
  usage?: (robotId: string) => RobotUsageRecord | undefined;
  /** Bound-parameter reads on the telemetry store (utilization, telemetry history); absent: 503. */
  telemetrySelect?: TelemetrySelect;
  /** Bytes of messages an MCAP history export writes at most (tunable `historyExportMaxBytes`). */
  historyExportMaxBytes?: number;
  /** MCAP history exports at once (tunable `historyExports`). */
  historyExports?: number;
  /** Alerts (src/fleet/safety/alerts); without it the alert routes are not served. */
  alerts?: AlertService;
  /** The MCP session table behind `/v1/mcp` and the tool names (src/gateway/mcp.ts `LateMcp`: filled in once the router exists). */
  mcp: McpRouteDeps;
}

export const API_INFO = {
  title: 'fleet-gateway',
  version: '0.1.0',
  description: 'Edge gateway for robot fleets: REST API (v1). Errors always have the body {error, code}.',
  tagDescriptions: {
    'Agent API': 'Intent-oriented tools at `POST /v1/agent/{tool}`; every body carries `org_id` and `fleet_id`. The same tools over the Model Context Protocol at `/v1/mcp` (docs/mcp.md).',
    Alerts: 'Fleet conditions that need a person: open, acknowledged (`fleet:write`), resolved when the condition clears (docs/alerts.md).',
    'API keys': 'Keys for automations, managed by people through a user session (an API key cannot manage keys).',
    Audit: 'Command audit entries: who asked for which command, and its delivery history.',
    Discovery: 'The contract, the calling key\'s identity, its organization and the fleets it can use (manifests).',
    Events: 'Correlated event timelines (schedules, runs, templates, the operation, robot links).',
    Faults: 'Faults robots report in their health reports: one record per occurrence, active until the robot stops reporting it (docs/faults.md).',
    Features: 'Work areas (GeoJSON polygons) that templates and jobs refer to.',
    'Field rules': 'Zones with a constraint robots obey (speed limit, keep-out, stop-and-wait), delivered over the robot link.',
    Health: 'Liveness and readiness probes for load balancers and orchestrators (no credential, status words only).',
    'Mission runs': 'One robot\'s execution of a template: live control and recent history.',
    'Mission templates': 'Reusable work; each template is one step of the fleet\'s operation.',
    'Robot commands': 'Commands to one robot or the whole fleet, with an observable delivery state.',
    'Robot configuration': 'Remote configuration and onboard settings, read and written through the robot.',
    Robots: 'Robot records with their latest telemetry snapshot.',
    Sessions: 'People log in with email and password: a session cookie plus a CSRF token for calls other than GET.',
    Schedules: 'Registered mission runs and commands; a fire-now request is a schedule too.',
    Telemetry: 'Tickets for the live telemetry WebSocket; one robot\'s stored history: samples, downsampled series, path, MCAP export (docs/telemetry-history.md).',
    Utilization: 'How the fleet\'s robots spent a window: online, on missions, idle, charging, paused, offline; missions and distance (docs/utilization.md).',
    Webhooks: 'Alerts sent to URLs per organization, signed (HMAC-SHA256), retried, and dead-lettered when they cannot be delivered (docs/webhooks.md).',
    'Tracked objects': 'Objects in the fleet\'s area (pallets, people, obstacles): reported by robots, or placed by operators.',
  },
};

/** Builds the full route list and the OpenAPI document describing it. */
export function buildRoutes(deps: RouteDeps): { routes: RouteDef[]; openapi: Record<string, unknown> } {
  let doc: Record<string, unknown> = {};
  let served: Record<string, unknown> | null = null;
  const document = (): Record<string, unknown> => {
    const url = deps.httpUrl?.() ?? '';
    if (url === '') return doc;
    served ??= { ...doc, servers: [{ url, description: 'This gateway.' }, RELATIVE_SERVER] };
    return served;
  };
  // Roster checks count a robot's capabilities as the dispatcher does: registered plus advertised.
  const rosterCapabilities = deps.missions?.tracker ?? NOTHING_ADVERTISED;
  const routes: RouteDef[] = withRouteIdempotency([
    ...openApiRoutes(document),
    ...(deps.apiDocs ? apiDocsRoutes(deps.apiDocs) : []),
    ...(deps.dashboard ? dashboardRoutes(deps.dashboard) : []),
    ...healthRoutes({ ready: deps.ready, ...(deps.degraded ? { degraded: deps.degraded } : {}) }),
    ...meRoutes(),
    ...sessionRoutes({ store: deps.store, events: deps.events, sessions: deps.sessions, secureCookies: deps.secureCookies, ...(deps.log ? { log: deps.log } : {}) }),
    ...apiKeyRoutes({ store: deps.store, events: deps.events, idempotency: deps.idempotency, ...(deps.log ? { log: deps.log } : {}) }),
    ...webhookRoutes({ store: deps.store, idempotency: deps.idempotency, ...(deps.log ? { log: deps.log } : {}) }),
    ...userRoutes({ store: deps.store, events: deps.events, ...(deps.log ? { log: deps.log } : {}) }),
    ...fleetRoutes({ store: deps.store }),
    ...orgRoutes({ store: deps.store }),
    ...objectRoutes({ store: deps.store, objects: deps.objects, idempotency: deps.idempotency }),
    ...(deps.missions
      ? robotAdminRoutes({
          store: deps.store,
          events: deps.events,
          commands: deps.commands,
          runs: deps.missions.tracker,
          link: deps.link,
          isOnline: (id) => deps.link.isOnline(id),
          rostersChanged: (fleetId) => void deps.runtime.changed(fleetId),
          ...(deps.log ? { log: deps.log } : {}),
        })
      : []),
    ...robotRoutes({ store: deps.store, isOnline: (id) => deps.link.isOnline(id), linkConflict: (id) => deps.link.linkConflict(id) }),
    ...faultRoutes({ store: deps.store }),
    ...robotDetailsRoutes({ store: deps.store, isOnline: (id) => deps.link.isOnline(id), usage: deps.usage ?? ((id) => deps.store.robotUsage.get(id)) }),
    ...utilizationRoutes({ store: deps.store, ...(deps.telemetrySelect ? { select: deps.telemetrySelect } : {}), ...(deps.log ? { log: deps.log } : {}) }),
    ...telemetryHistoryRoutes({
      store: deps.store, ...(deps.telemetrySelect ? { select: deps.telemetrySelect } : {}), ...(deps.log ? { log: deps.log } : {}),
      ...(deps.historyExportMaxBytes !== undefined ? { exportMaxBytes: deps.historyExportMaxBytes } : {}),
      ...(deps.historyExports !== undefined ? { maxExports: deps.historyExports } : {}),
    }),
    ...controlRobotRoutes({ store: deps.store, commands: deps.commands }),
    ...robotCommandRoutes({ store: deps.store, commands: deps.commands }),
    ...robotConfigRoutes({ store: deps.store, commands: deps.commands }),
    ...commandReadRoutes({ store: deps.store, commands: deps.commands }),
    ...streamTicketRoutes({ store: deps.store, tickets: deps.tickets, streamUrl: deps.streamUrl }),
    ...eventRoutes({ store: deps.store, events: deps.events }),
    ...floorPlanRoutes({ store: deps.store }),
    ...featureRoutes({ store: deps.store, events: deps.events, idempotency: deps.idempotency, fieldRules: deps.fieldRules }),
    ...fieldRuleRoutes({ store: deps.store, fieldRules: deps.fieldRules, idempotency: deps.idempotency }),
    ...templateRoutes({ store: deps.store, events: deps.events, idempotency: deps.idempotency, runtime: deps.runtime, advertised: rosterCapabilities }),
    ...controlOperationRoutes({ store: deps.store, events: deps.events, runtime: deps.runtime, advertised: rosterCapabilities, ...(deps.log ? { log: deps.log } : {}) }),
    ...(deps.alerts ? alertRoutes({ store: deps.store, alerts: deps.alerts }) : []),
    ...(deps.missions
      ? [
          ...missionToolRoutes({ store: deps.store, events: deps.events, idempotency: deps.idempotency, missions: deps.missions, runtime: deps.runtime }),
          ...missionRuntimeRoutes({ store: deps.store, missions: deps.missions, link: deps.link }),
          ...agentReadRoutes({ store: deps.store, link: deps.link, missions: deps.missions, advertised: deps.advertised, commands: deps.commands }),
        ]
      : []),
    // The Agent API over MCP: its tools are the `POST /v1/agent/*` routes of this very list (src/gateway/mcp.ts).
    ...mcpRoutes(deps.mcp),
  ], deps.idempotency, deps.log);
  doc = buildOpenApi(routes, API_INFO);
  return { routes, openapi: doc };
}
