/**
 * Every route the gateway serves, in one list: the router serves exactly this list and /openapi.json
 * is built from it, so the two cannot disagree.
 */
import type { CommandService } from '../commands/service.js';
import { buildOpenApi } from '../api/openapi.js';
import { controlRobotRoutes } from '../api/routes/control-robot.js';
import { fleetRoutes } from '../api/routes/fleets.js';
import { meRoutes } from '../api/routes/me.js';
import { openApiRoutes } from '../api/routes/openapi.js';
import { robotRoutes } from '../api/routes/robots.js';
import { streamTicketRoutes } from '../api/routes/stream-tickets.js';
import type { RouteDef } from '../http/types.js';
import type { RobotLink } from '../robotlink/types.js';
import type { Store } from '../store/lmdb.js';
import type { TicketIssuer } from '../telemetry/ticket-issuer.js';

export interface RouteDeps {
  store: Store;
  link: Pick<RobotLink, 'isOnline'>;
  commands: CommandService;
  tickets: TicketIssuer;
  /** Public URL of the telemetry WebSocket (known once the HTTP server listens). */
  streamUrl: () => string;
}

export const API_INFO = {
  title: 'fleet-gateway',
  version: '0.1.0',
  description: 'Edge gateway for robot fleets: REST API (v1). Errors always have the body {error, code}.',
};

/** Builds the full route list and the OpenAPI document describing it. */
export function buildRoutes(deps: RouteDeps): { routes: RouteDef[]; openapi: Record<string, unknown> } {
  let doc: Record<string, unknown> = {};
  const routes: RouteDef[] = [
    ...openApiRoutes(() => doc),
    ...meRoutes(),
    ...fleetRoutes({ store: deps.store }),
    ...robotRoutes({ store: deps.store, isOnline: (id) => deps.link.isOnline(id) }),
    ...controlRobotRoutes({ store: deps.store, commands: deps.commands }),
    ...streamTicketRoutes({ store: deps.store, tickets: deps.tickets, streamUrl: deps.streamUrl }),
  ];
  doc = buildOpenApi(routes, API_INFO);
  return { routes, openapi: doc };
}
