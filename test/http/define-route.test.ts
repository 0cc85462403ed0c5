/**
 * defineRoute (src/api/define-route.ts): the handler's context is typed by the route's schemas and
 * its result is checked against the declared responses. The `@ts-expect-error` lines are the test:
 * `npm run typecheck` fails if any of them compiles. (An undeclared extra field in a returned object
 * literal is not one of them: TypeScript does not check excess properties of an inferred return type.
 * Handlers that build their body as `const body: View = {...}` get that check; the contract test,
 * test/e2e/contract.test.ts, catches the rest against the closed published schemas.)
 */
import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { defineRoute, isDefinedRoute } from '../../src/api/define-route.js';
import { JsonText } from '../../src/api/json-text.js';
import type { RouteDef } from '../../src/api/route.js';

const Params = Type.Object({ robot_id: Type.String() }, { additionalProperties: false });
const Body = Type.Object({ mode: Type.String(), wait: Type.Optional(Type.Boolean()) }, { additionalProperties: false });
const View = Type.Object({ id: Type.String(), mode: Type.String() }, { additionalProperties: false });
const Partial = Type.Object({ id: Type.String(), failed: Type.Integer() }, { additionalProperties: false });

const declared = () =>
  defineRoute({
    method: 'POST',
    path: '/v1/robots/{robot_id}/mode',
    operationId: 'setMode',
    summary: 'test',
    tags: ['test'],
    auth: 'robots:write',
    params: Params,
    body: Body,
    urgent: (b) => b.mode === 'stop',
    responses: { 200: { description: 'ok', schema: View }, 207: { description: 'partly', schema: Partial }, 204: { description: 'nothing' } },
  });

describe('defineRoute', () => {
  it('types the context from the schemas and accepts every declared response', () => {
    const route: RouteDef = declared().handle(({ params, body }) => {
      const id: string = params.robot_id;
      const wait: boolean | undefined = body.wait;
      if (wait === true) return { status: 207, body: { id, failed: 1 } };
      if (body.mode === '') return { status: 204, body: null };
      if (body.mode === 'cached') return { status: 200, body: new JsonText<{ id: string; mode: string }>('{"id":"r","mode":"x"}') };
      return { status: 200, body: { id, mode: body.mode } };
    });
    expect(isDefinedRoute(route)).toBe(true);
    expect(route.urgent?.({ mode: 'stop' })).toBe(true);
    expect(isDefinedRoute({ ...route })).toBe(false);
  });

  it('refuses, at compile time, what the declaration does not allow', () => {
    // @ts-expect-error: 201 is not a declared status
    declared().handle(() => ({ status: 201, body: { id: 'r', mode: 'm' } }));
    // @ts-expect-error: the 200 body lacks `mode`
    declared().handle(() => ({ status: 200, body: { id: 'r' } }));
    // @ts-expect-error: 207 takes the Partial body, not the View
    declared().handle(() => ({ status: 207, body: { id: 'r', mode: 'm' } }));
    // @ts-expect-error: 204 declares no body
    declared().handle(() => ({ status: 204, body: { id: 'r', mode: 'm' } }));
    // @ts-expect-error: params have no `fleet_id`
    declared().handle(({ params }) => ({ status: 200, body: { id: params.fleet_id, mode: 'm' } }));
    // @ts-expect-error: body.mode is a string
    declared().handle(({ body }) => ({ status: 200, body: { id: 'r', mode: body.mode * 2 } }));
    // @ts-expect-error: pre-serialized text must say what it encodes
    declared().handle(() => ({ status: 200, body: new JsonText<{ other: true }>('{}') }));
    expect(true).toBe(true);
  });
});
