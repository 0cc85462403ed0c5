/**
 * Wires the Agent API's MCP server (docs/mcp.md): the tools are derived from the served route list
 * (src/api/mcp/tool-catalog.ts), each call is dispatched through the router as the caller the
 * `/v1/mcp` request authenticated (Router.dispatch), and the session table (src/http/mcp-sessions.ts)
 * runs the SDK transport.
 */
import type { Logger } from 'pino';
import type { McpEndpoint, RouteDispatch } from '../api/mcp/exchange.js';
import { agentTools } from '../api/mcp/tool-catalog.js';
import { toolServerFactory } from '../api/mcp/tool-server.js';
import type { RouteDef } from '../api/route.js';
import type { McpRouteDeps } from '../api/routes/mcp.js';
import { apiError } from '../errors/catalog.js';
import { DEFAULT_TUNABLES, type GatewayTunables } from '../config.js';
import { McpSessions, type McpSessionLimits } from '../http/mcp-sessions.js';
import type { Router } from '../http/router.js';

/** A tool call as the REST request of its route, served by the router's pipeline minus authentication. */
export function dispatchThrough(router: Router): RouteDispatch {
  return async (call) => {
    const headers: Record<string, string> = {};
    if (call.body !== '') headers['content-type'] = 'application/json';
    if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
    const body = Buffer.from(call.body, 'utf8');
    // The router holds the tool's route to its own body bound (RouteDef.maxBodyBytes), as over REST.
    const res = await router.dispatch({ method: 'POST', path: call.path, query: '', headers, body, remoteAddress: call.context.client }, call.signal, call.context.auth);
    return { status: res.status, headers: res.headers, body: typeof res.body === 'string' ? res.body : Buffer.from(res.body).toString('utf8') };
  };
}

/** The session table's bounds and times from the tunables (`FLEETGW_MCP_*`); idle never outlasts the timeout. */
export function mcpSessionLimits(t: Pick<GatewayTunables, 'mcpMaxSessions' | 'mcpMaxSessionsPerOrg' | 'mcpMaxSessionsPerKey' | 'mcpSessionIdleS' | 'mcpSessionTimeoutS'>): McpSessionLimits {
  return {
    maxSessions: t.mcpMaxSessions,
    maxPerOrg: t.mcpMaxSessionsPerOrg,
    maxPerOwner: t.mcpMaxSessionsPerKey,
    idleMs: Math.min(t.mcpSessionIdleS, t.mcpSessionTimeoutS) * 1000,
    timeoutMs: t.mcpSessionTimeoutS * 1000,
  };
}

/**
 * The MCP route's dependencies, which exist only once the router does: the route list (with the MCP
 * route in it) is built first, the router from it, then {@link start} derives the tools from the same
 * list and opens the session table.
 */
export class LateMcp implements McpRouteDeps {
  private sessions: McpSessions | undefined;
  private names: ReadonlySet<string> = new Set();

  readonly endpoint: McpEndpoint = (exchange) => {
    if (this.sessions === undefined) return Promise.reject(apiError('unavailable', { what: 'MCP' }));
    return this.sessions.handle(exchange);
  };

  readonly isTool = (name: string): boolean => this.names.has(name);

  /** Serves the Agent API tools of `routes` through `router`; returns the session table (closed by the caller). */
  start(routes: readonly RouteDef[], router: Router, version: string, log: Logger, limits: McpSessionLimits = mcpSessionLimits(DEFAULT_TUNABLES)): McpSessions {
    const tools = agentTools(routes);
    this.names = new Set(tools.map((t) => t.name));
    this.sessions = new McpSessions(toolServerFactory({ tools, dispatch: dispatchThrough(router), version }), limits, Date.now, log);
    return this.sessions;
  }
}
