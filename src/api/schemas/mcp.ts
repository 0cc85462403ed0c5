/**
 * `/v1/mcp`: the JSON-RPC 2.0 envelope of the Model Context Protocol's Streamable HTTP transport
 * (docs/mcp.md). The envelope is strict like every body; what a method takes (`params`) and returns
 * (`result`) is MCP's, checked by the SDK, and a tool's arguments are checked by the tool's route.
 */
import { Type, type Static } from '@sinclair/typebox';
import { FreeForm, uuidSchema } from './common.js';
import { named } from './named.js';

const JsonRpcId = Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Integer()], { description: 'The request id (absent on a notification).' });

/** One JSON-RPC request or notification (batches are not accepted: MCP 2025-06-18 removed them). */
export const McpMessage = named('McpMessage', Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(JsonRpcId),
    method: Type.String({ minLength: 1, maxLength: 100, description: '`initialize`, `notifications/initialized`, `tools/list`, `tools/call`, `ping`, ...' }),
    params: Type.Optional(FreeForm({ description: 'The method\'s parameters; `tools/call`: `{name, arguments}`, the arguments being the tool\'s input (its REST body).' })),
  },
  { additionalProperties: false, description: 'A JSON-RPC 2.0 request or notification of the Model Context Protocol.' },
));
export type McpMessage = Static<typeof McpMessage>;

/** The JSON-RPC answer to a request: `result`, or a JSON-RPC `error` (protocol errors; a tool's own errors are results with isError). */
export const McpResponse = named('McpResponse', Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Union([JsonRpcId, Type.Null()]),
    result: Type.Optional(FreeForm({ description: 'The method\'s result; `tools/call`: `{content, structuredContent, isError?, _meta}`.' })),
    error: Type.Optional(Type.Object(
      {
        code: Type.Integer(),
        message: Type.String(),
        data: Type.Optional(Type.Unknown()),
      },
      { additionalProperties: false },
    )),
  },
  { additionalProperties: false, description: 'A JSON-RPC 2.0 response.' },
));
export type McpResponse = Static<typeof McpResponse>;

const SessionId = uuidSchema('The session id the initialize answer returned in its Mcp-Session-Id header.');
const ProtocolVersion = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$', description: 'The protocol version negotiated on initialize (e.g. 2025-06-18).' });

/** The MCP headers of a POST: no session on initialize, the session's id on everything after. */
export const McpPostHeaders = Type.Object(
  {
    'mcp-session-id': Type.Optional(SessionId),
    'mcp-protocol-version': Type.Optional(ProtocolVersion),
  },
  { additionalProperties: false },
);

/** DELETE ends a session: its id is required. */
export const McpDeleteHeaders = Type.Object(
  {
    'mcp-session-id': SessionId,
    'mcp-protocol-version': Type.Optional(ProtocolVersion),
  },
  { additionalProperties: false },
);
