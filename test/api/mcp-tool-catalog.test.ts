/**
 * The MCP tool catalogue is derived from the route list (src/api/mcp/tool-catalog.ts): every
 * `POST /v1/agent/{tool}` route and nothing else, its body schema as the input schema, plus
 * `idempotency_key` where the route reads Idempotency-Key. Checked on the gateway's real route list
 * (built offline) and on synthetic routes.
 */
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { agentTools, IDEMPOTENCY_ARGUMENT } from '../../src/api/mcp/tool-catalog.js';
import { resultOf } from '../../src/api/mcp/tool-server.js';
import type { RouteDef } from '../../src/api/route.js';
import { effectOf } from '../../src/api/route-effect.js';
import { withOfflineRoutes } from '../../src/gateway/openapi-document.js';

const route = (over: Partial<RouteDef>): RouteDef => ({
  method: 'POST', path: '/v1/agent/x', operationId: 'x', summary: 'X.', tags: ['t'], auth: 'robots:write',
  responses: { 200: { description: 'ok' } }, handler: () => ({ status: 200, body: null }), ...over,
});

describe('agentTools', () => {
  it('is every POST /v1/agent/* route of the gateway, with the body schema as input schema', async () => {
    await withOfflineRoutes(({ routes }) => {
      const tools = agentTools(routes);
      const agent = routes.filter((r) => r.method === 'POST' && r.path.startsWith('/v1/agent/'));
      expect(tools.map((t) => t.path)).toEqual(agent.map((r) => r.path));
      expect(tools.map((t) => t.name)).toContain('control-robot');
      expect(tools.map((t) => t.name)).not.toContain('mcp');
      for (const r of agent) {
        const t = tools.find((x) => x.path === r.path)!;
        const { [IDEMPOTENCY_ARGUMENT]: key, ...props } = t.inputSchema.properties as Record<string, unknown>;
        expect(props, t.name).toEqual(JSON.parse(JSON.stringify(r.body)).properties);
        expect(key !== undefined, t.name).toBe(r.idempotencyKey !== undefined);
        // Every Agent API route says what it does; the tool's annotations are that declaration.
        expect(r.effect, `${r.path} declares its effect`).toBeDefined();
        expect(t.effect, t.name).toEqual(effectOf(r));
        expect(t.outputSchema.type, t.name).toBe('object');
      }
      const readTool = tools.find((t) => t.name === 'get-runtime-status')!;
      expect(readTool.effect.readOnly).toBe(true);
      expect(tools.find((t) => t.name === 'control-robot')!.effect).toEqual({ readOnly: false, destructive: true, idempotent: false });
      expect(tools.find((t) => t.name === 'control-operation')!.effect.readOnly).toBe(false);
      expect(tools.find((t) => t.name === 'cancel-schedule')!.effect).toEqual({ readOnly: false, destructive: true, idempotent: true });
      expect((tools.find((t) => t.name === 'schedule-command')!.inputSchema.required as string[])).toContain(IDEMPOTENCY_ARGUMENT);
    });
  });

  it('takes new agent routes as they come, whatever their body shape', () => {
    const union = Type.Union([Type.Object({ a: Type.String() }, { additionalProperties: false }), Type.Object({ b: Type.String() }, { additionalProperties: false })]);
    const tools = agentTools([
      route({ path: '/v1/agent/query-entities', auth: 'robots:read', effect: 'read', body: Type.Object({ kind: Type.String() }, { additionalProperties: false }) }),
      route({ path: '/v1/agent/either', body: union, idempotencyKey: 'optional' }),
      route({ path: '/v1/agent/nested/no' }),
      route({ method: 'GET', path: '/v1/agent/get' }),
      route({ path: '/v1/robots' }),
    ]);
    expect(tools.map((t) => t.name)).toEqual(['query-entities', 'either']);
    expect(tools[0]!.effect.readOnly).toBe(true);
    expect(tools[0]!.title).toBe('Query entities');
    expect(tools[1]!.inputSchema).toMatchObject({ type: 'object', allOf: [{ anyOf: [{}, {}] }], required: [] });
    expect(() => agentTools([route({ body: Type.Object({ [IDEMPOTENCY_ARGUMENT]: Type.String() }), idempotencyKey: 'required' })])).toThrow(/idempotency_key/);
  });
});

describe('effectOf', () => {
  it('reads the declaration, defaults a POST to destructive, and refuses a read that needs a write permission', () => {
    expect(effectOf(route({ effect: 'read', auth: 'robots:read' }))).toEqual({ readOnly: true, destructive: false, idempotent: true });
    expect(effectOf(route({ effect: 'read', auth: 'any' })).readOnly).toBe(true);
    expect(effectOf(route({ effect: { changes: 'additive', idempotent: true } }))).toEqual({ readOnly: false, destructive: false, idempotent: true });
    // Undeclared: a POST is taken as the worst case, a GET as a read.
    expect(effectOf(route({}))).toEqual({ readOnly: false, destructive: true, idempotent: false });
    expect(effectOf(route({ method: 'GET', auth: 'robots:read' })).readOnly).toBe(true);
    expect(() => effectOf(route({ effect: 'read', auth: 'robots:write' }))).toThrow(/robots:write/);
  });
});

describe('resultOf', () => {
  it('carries the REST reply as structuredContent and text, errors with isError and the status', () => {
    expect(resultOf({ status: 200, headers: {}, body: '{"a":1}' })).toEqual({ content: [{ type: 'text', text: '{"a":1}' }], structuredContent: { a: 1 }, _meta: { 'fleet-gateway/http-status': 200 } });
    const err = resultOf({ status: 429, headers: { 'retry-after': '3' }, body: '{"error":"x","code":"rate_limited"}' });
    expect(err).toMatchObject({ isError: true, structuredContent: { code: 'rate_limited' }, _meta: { 'fleet-gateway/http-status': 429, 'fleet-gateway/retry-after-s': 3 } });
    // A JSON array is text only (structuredContent must be an object).
    expect(resultOf({ status: 200, headers: {}, body: '[1]' }).structuredContent).toBeUndefined();
  });
});
