/**
 * `/v1/mcp`: the Agent API as a Model Context Protocol server over Streamable HTTP (docs/mcp.md).
 * The router authenticates, rate-limits and validates the JSON-RPC envelope like any request; the
 * session table (src/http/mcp-sessions.ts, passed in as `endpoint`) runs the SDK transport, and a tool
 * call goes back through the router as its own `POST /v1/agent/{tool}` request.
 *
 * GET (a standalone server-to-client SSE stream) is not served: 405, which the protocol allows and
 * clients expect; the server never sends a message unasked, so such a stream would carry nothing.
 */
import { JsonText } from '../json-text.js';
import { defineRoute } from '../define-route.js';
import type { McpEndpoint } from '../mcp/exchange.js';
import type { RouteDef } from '../route.js';
import { McpDeleteHeaders, McpMessage, McpPostHeaders, McpResponse } from '../schemas/mcp.js';
import { MCP_BODY_MAX_BYTES } from '../schemas/body-bounds.js';

export interface McpRouteDeps {
  endpoint: McpEndpoint;
  /** Whether a tool of this name exists (src/api/mcp/tool-catalog.ts). */
  isTool: (name: string) => boolean;
}

/**
 * A `tools/call` the tool server will dispatch to its route, which spends the rate limit for it: a
 * known tool name with object arguments (anything else the SDK refuses before any dispatch, so the
 * message spends the limit itself and malformed calls cannot be sent for free).
 */
function dispatchedToItsRoute(message: McpMessage, isTool: (name: string) => boolean): boolean {
  if (message.method !== 'tools/call' || message.id === undefined) return false;
  const { name, arguments: args } = (message.params ?? {}) as { name?: unknown; arguments?: unknown };
  return typeof name === 'string' && isTool(name) && (args === undefined || (typeof args === 'object' && args !== null && !Array.isArray(args)));
}

/** The MCP endpoint's routes. */
export function mcpRoutes(deps: McpRouteDeps): RouteDef[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/v1/mcp',
      operationId: 'mcpMessage',
      summary: 'Model Context Protocol (Streamable HTTP): one JSON-RPC message. `initialize` opens a session (its id comes back in the Mcp-Session-Id header); `tools/list` lists every `POST /v1/agent/*` tool with its input schema; `tools/call` runs one, with that route\'s permission, rate limit and validation. Answers are JSON (never an SSE stream). See docs/mcp.md.',
      tags: ['Agent API'],
      auth: 'any',
      headers: McpPostHeaders,
      body: McpMessage,
      maxBodyBytes: MCP_BODY_MAX_BYTES,
      // A tool call spends the limit once, as its own route (with the route's urgent rule for stops).
      rateLimited: (message) => !dispatchedToItsRoute(message, deps.isTool),
      responses: {
        200: { description: 'The JSON-RPC response (initialize: with the Mcp-Session-Id header).', schema: McpResponse },
        202: { description: 'A notification, accepted (no body).' },
      },
      errors: ['mcp_session_required', 'mcp_session_not_found', 'mcp_session_quota', 'mcp_sessions_full', 'mcp_transport', 'shutting_down'],
    }).handle(async (ctx) => {
      const answer = await deps.endpoint({
        method: 'POST',
        owner: ctx.auth.apiKeyId,
        org: ctx.auth.orgId,
        sessionId: ctx.headers['mcp-session-id'],
        protocolVersion: ctx.headers['mcp-protocol-version'],
        message: ctx.body,
        call: { auth: ctx.auth, client: ctx.client, get aborted() { return ctx.aborted; } },
      });
      if (answer.body === null) return { status: 202, body: null, headers: answer.headers };
      return { status: 200, body: new JsonText<McpResponse>(answer.body), headers: answer.headers };
    }),
    defineRoute({
      method: 'DELETE',
      path: '/v1/mcp',
      operationId: 'mcpCloseSession',
      summary: 'Ends an MCP session (the session\'s credential only). Sessions also end after their idle time (docs/mcp.md).',
      tags: ['Agent API'],
      auth: 'any',
      headers: McpDeleteHeaders,
      responses: { 204: { description: 'The session is closed.' } },
      errors: ['mcp_session_not_found', 'shutting_down'],
    }).handle(async (ctx) => {
      await deps.endpoint({
        method: 'DELETE',
        owner: ctx.auth.apiKeyId,
        org: ctx.auth.orgId,
        sessionId: ctx.headers['mcp-session-id'],
        protocolVersion: ctx.headers['mcp-protocol-version'],
        message: undefined,
        call: { auth: ctx.auth, client: ctx.client, get aborted() { return ctx.aborted; } },
      });
      return { status: 204, body: null };
    }),
  ];
}
