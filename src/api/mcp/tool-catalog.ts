/**
 * The Agent API as MCP tools, derived from the route list: every `POST /v1/agent/{tool}` route the
 * gateway serves is one tool named `{tool}`, so a route a plugin declares (src/gateway/plugin.ts) is a
 * tool without any change here. A tool's input schema is the route's body schema, the very TypeBox
 * object ajv validates REST bodies with and /openapi.json publishes (there with named parts as
 * `$ref`s, here inline, since an MCP input schema must stand alone), plus `idempotency_key` for
 * routes that read the `Idempotency-Key` header. Its output schema comes from the route's response
 * schemas (output-schema.ts) and its annotations from the route's declared effect (route-effect.ts).
 */
import type { TSchema } from '@sinclair/typebox';
import { IDEMPOTENCY_KEY_SHAPE } from '../../idempotency/index.js';
import type { RouteDef } from '../route.js';
import { effectOf, type EffectFacts } from '../route-effect.js';
import { outputSchemaOf } from './output-schema.js';

/** Paths under this prefix, served with POST, are the Agent API's tools. */
export const AGENT_TOOL_PREFIX = '/v1/agent/';

/** The argument that carries the `Idempotency-Key` header of tools whose route reads it. */
export const IDEMPOTENCY_ARGUMENT = 'idempotency_key';

type Json = Record<string, unknown>;

/** One tool: what `tools/list` publishes and what `tools/call` needs to reach its route. */
export interface AgentTool {
  /** `control-robot` for `POST /v1/agent/control-robot`. */
  name: string;
  /** The route's path, where a call is dispatched. */
  path: string;
  /** A short display name: `Control robot`. */
  title: string;
  description: string;
  /** Plain JSON Schema (an object schema, as MCP requires). */
  inputSchema: Json;
  /** What `structuredContent` holds: a reply body of the route, or the catalog's error body. */
  outputSchema: Json;
  /** Whether the route declares a body (a tool without one is called with an empty body). */
  hasBody: boolean;
  /** The route's Idempotency-Key rule, when it reads the header. */
  idempotencyKey: 'required' | 'optional' | undefined;
  /** What a call does (RouteDef.effect): published as `readOnlyHint`, `destructiveHint`, `idempotentHint`. */
  effect: EffectFacts;
}

/**
 * The tools of `routes`, in route order.
 * @throws Error when a tool's body already has a field named {@link IDEMPOTENCY_ARGUMENT}, or a
 *   route declared read-only needs a write permission (route-effect.ts)
 */
export function agentTools(routes: readonly RouteDef[]): AgentTool[] {
  return routes
    .filter((r) => r.method === 'POST' && r.path.startsWith(AGENT_TOOL_PREFIX) && !r.path.slice(AGENT_TOOL_PREFIX.length).includes('/'))
    .map((r) => {
      const name = r.path.slice(AGENT_TOOL_PREFIX.length);
      return {
        name,
        path: r.path,
        title: titleOf(name),
        description: describeTool(r),
        inputSchema: inputSchemaOf(r),
        outputSchema: outputSchemaOf(r),
        hasBody: r.body !== undefined,
        idempotencyKey: r.idempotencyKey,
        effect: effectOf(r),
      };
    });
}

/** `control-robot` -> `Control robot`. */
function titleOf(name: string): string {
  const words = name.replace(/-/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function describeTool(r: RouteDef): string {
  const who = r.auth === 'any' || r.auth === 'none' ? 'Any valid API key or user session.' : `Requires permission \`${r.auth}\`.`;
  const idem = r.idempotencyKey === 'required' ? ` Requires \`${IDEMPOTENCY_ARGUMENT}\`.` : '';
  // What a result is (the REST reply, errors with isError) is said once, in the server's instructions.
  return `${r.summary} ${who}${idem}`;
}

/** The route's body schema as plain JSON Schema (TypeBox's symbol-keyed metadata dropped). */
function plain(schema: TSchema): Json {
  return JSON.parse(JSON.stringify(schema)) as Json;
}

function inputSchemaOf(r: RouteDef): Json {
  const body: Json = r.body !== undefined ? plain(r.body) : { type: 'object', properties: {}, additionalProperties: false };
  if (r.idempotencyKey === undefined) return body.type === 'object' ? body : { type: 'object', allOf: [body] };
  const key = {
    type: 'string',
    pattern: IDEMPOTENCY_KEY_SHAPE.source,
    description: 'The Idempotency-Key header: a unique value per logical request (1-255 printable ASCII); the same key and arguments within 24 h replay the first answer, other arguments with it are a conflict.',
  };
  const required = r.idempotencyKey === 'required' ? [IDEMPOTENCY_ARGUMENT] : [];
  if (body.type !== 'object' || typeof body.properties !== 'object' || body.properties === null) {
    return { type: 'object', properties: { [IDEMPOTENCY_ARGUMENT]: key }, required, allOf: [body] };
  }
  const props = body.properties as Json;
  if (props[IDEMPOTENCY_ARGUMENT] !== undefined) throw new Error(`${r.path}: the body has a field named ${IDEMPOTENCY_ARGUMENT}, which the MCP tool uses for the Idempotency-Key`);
  return {
    ...body,
    properties: { ...props, [IDEMPOTENCY_ARGUMENT]: key },
    required: [...((body.required as string[] | undefined) ?? []), ...required],
  };
}
