/**
 * What the `/v1/mcp` route (src/api/routes/mcp.ts), the MCP session table that runs the SDK's
 * Streamable HTTP transport (src/http/mcp-sessions.ts) and the tool server (server.ts) hand each
 * other. Declared here, in the API, because the transport imports the API and not the reverse:
 * src/gateway passes the implementations in.
 */
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type { AuthContext } from '../route.js';

/** One HTTP request to `/v1/mcp`, already authenticated, rate-limited and validated by the router. */
export interface McpExchange {
  method: 'POST' | 'DELETE';
  /** The credential the request acts as (AuthContext.apiKeyId): a session answers only to the credential that opened it. */
  owner: string;
  /** The organization of that credential (AuthContext.orgId): sessions are bounded per organization too. */
  org: string;
  /** The `Mcp-Session-Id` header (undefined on initialize). */
  sessionId: string | undefined;
  /** The `MCP-Protocol-Version` header, when sent. */
  protocolVersion: string | undefined;
  /** The JSON-RPC message (POST). */
  message: unknown;
  /** What a tool call carried by this request runs as (handed to the tool server). */
  call: ToolCallContext;
}

/** The transport's answer, with the body as JSON text (null: no body). */
export interface McpAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

/** Serves one exchange; throws ApiError for what the transport refuses (catalog `mcp_*`). */
export type McpEndpoint = (exchange: McpExchange) => Promise<McpAnswer>;

/** The HTTP request a tool call arrived in: who is calling and when the client went away. */
export interface ToolCallContext {
  auth: AuthContext;
  /** Aborts when the HTTP client of the carrying request disconnects. */
  aborted: AbortSignal;
  /** The caller's address as the router's throttles count it (RouteContext.client). */
  client: string;
}

/** One REST request a tool call becomes (always `POST` with a JSON body). */
export interface RouteCall {
  path: string;
  /** The body as JSON text: it is parsed and checked exactly as a REST body is. */
  body: string;
  idempotencyKey: string | undefined;
  context: ToolCallContext;
  /** Aborts when the client went away or cancelled the call. */
  signal: AbortSignal;
}

/** The REST answer: status, headers and the body text (the catalog's `{error, code}` on errors). */
export interface RouteReply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * Serves a {@link RouteCall} through the router's pipeline for an already-authenticated caller
 * (src/http/router.ts `Router.dispatch`): rate limit, permission, validation and handler, as over REST.
 */
export type RouteDispatch = (call: RouteCall) => Promise<RouteReply>;

/** Where {@link authInfoFor} puts the call context in the SDK's per-request AuthInfo. */
const CALL_CONTEXT = 'fleetgw.call';

/**
 * The SDK's per-request `authInfo` carrying `call`: the transport hands it to `handleRequest`, and the
 * SDK gives it to the tool handler of each message of that request. `token` stays empty: the
 * credential was checked by the router and is never copied.
 */
export function authInfoFor(call: ToolCallContext): AuthInfo {
  return { token: '', clientId: call.auth.apiKeyId, scopes: [...call.auth.permissions], extra: { [CALL_CONTEXT]: call } };
}

/** The call context {@link authInfoFor} attached, or undefined. */
export function callContextOf(info: AuthInfo | undefined): ToolCallContext | undefined {
  return info?.extra?.[CALL_CONTEXT] as ToolCallContext | undefined;
}
