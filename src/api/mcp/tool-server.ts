/**
 * The MCP server of one session: `tools/list` publishes the Agent API tools (tool-catalog.ts) and
 * `tools/call` turns a call into the REST request of its route and dispatches it through the router
 * (RouteDispatch), so authentication, permission, rate limit, validation and the handler are exactly
 * REST's. Built on the SDK's low-level `Server`, not `McpServer`: the input schemas are the routes'
 * JSON Schemas as they are, and arguments are validated once, by the route.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { apiError } from '../../errors/catalog.js';
import { callContextOf, type RouteDispatch, type RouteReply } from './exchange.js';
import { IDEMPOTENCY_ARGUMENT, type AgentTool } from './tool-catalog.js';

/** `_meta` key of a tool result: the HTTP status of the REST reply (201 and 202, 207 mean different things). */
export const HTTP_STATUS_META = 'fleet-gateway/http-status';
/** `_meta` key of a tool result: the REST reply's Retry-After, in seconds (429, some 503). */
export const RETRY_AFTER_META = 'fleet-gateway/retry-after-s';

export interface ToolServerOptions {
  tools: readonly AgentTool[];
  dispatch: RouteDispatch;
  /** Server version announced on initialize. */
  version: string;
}

const INSTRUCTIONS = 'The fleet-gateway Agent API: each tool is one POST /v1/agent/{tool} route of the REST API, with the same arguments (the JSON body), permissions, rate limits and results. Every call names org_id and fleet_id. Results carry the REST reply as structuredContent and as text; an error carries {error, code} with isError; _meta["fleet-gateway/http-status"] is the HTTP status.';

/**
 * Returns a factory of per-session servers (one SDK Server per transport, as the SDK requires).
 * The tool list is computed once.
 */
export function toolServerFactory(opts: ToolServerOptions): () => Server {
  const byName = new Map(opts.tools.map((t) => [t.name, t]));
  const listed: ListToolsResult = {
    tools: opts.tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema as ListToolsResult['tools'][number]['inputSchema'],
      outputSchema: t.outputSchema as ListToolsResult['tools'][number]['outputSchema'],
      annotations: { readOnlyHint: t.effect.readOnly, destructiveHint: t.effect.destructive, idempotentHint: t.effect.idempotent, openWorldHint: false },
    })),
  };
  return () => {
    const server = new Server({ name: 'fleet-gateway', version: opts.version }, { capabilities: { tools: { listChanged: false } }, instructions: INSTRUCTIONS });
    server.setRequestHandler(ListToolsRequestSchema, () => listed);
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const tool = byName.get(request.params.name);
      if (tool === undefined) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${request.params.name.slice(0, 100)}`);
      const context = callContextOf(extra.authInfo);
      // Every request reaches the server through the session table, which always attaches it.
      if (context === undefined) throw new McpError(ErrorCode.InternalError, 'tool call without its request context');
      const args: Record<string, unknown> = { ...(request.params.arguments ?? {}) };
      let idempotencyKey: string | undefined;
      if (tool.idempotencyKey !== undefined && IDEMPOTENCY_ARGUMENT in args) {
        const key = args[IDEMPOTENCY_ARGUMENT];
        delete args[IDEMPOTENCY_ARGUMENT];
        if (typeof key !== 'string') return errorResult(apiError('invalid_body', { detail: `/${IDEMPOTENCY_ARGUMENT} must be string` }).toBody(), 400);
        idempotencyKey = key;
      }
      // Otherwise an `idempotency_key` stays in the body, where the route names it as an unknown field.
      const reply = await opts.dispatch({
        path: tool.path,
        body: tool.hasBody ? JSON.stringify(args) : '',
        idempotencyKey,
        context,
        signal: AbortSignal.any([context.aborted, extra.signal]),
      });
      return resultOf(reply);
    });
    return server;
  };
}

/** The tool result of a REST reply: its JSON as structuredContent (objects) and as text. */
export function resultOf(reply: RouteReply): CallToolResult {
  let value: unknown = null;
  try {
    value = reply.body === '' ? null : JSON.parse(reply.body);
  } catch {
    // Agent routes answer JSON; anything else is passed on as text only.
  }
  const meta: Record<string, unknown> = { [HTTP_STATUS_META]: reply.status };
  const retry = Number(reply.headers['retry-after']);
  if (reply.headers['retry-after'] !== undefined && Number.isFinite(retry)) meta[RETRY_AFTER_META] = retry;
  return {
    content: [{ type: 'text', text: reply.body }],
    ...(isRecord(value) ? { structuredContent: value } : {}),
    ...(reply.status >= 400 ? { isError: true } : {}),
    _meta: meta,
  };
}

function errorResult(body: Record<string, unknown>, status: number): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true, _meta: { [HTTP_STATUS_META]: status } };
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
