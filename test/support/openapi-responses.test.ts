/** The response check of the e2e helper (openapi-responses.ts) on a small document: it has teeth. */
import { describe, expect, it } from 'vitest';
import { checkAgainst } from './openapi-responses.js';

const closed = (properties: Record<string, unknown>, required: string[]) => ({ type: 'object', properties, required, additionalProperties: false });
const json = (schema: unknown) => ({ content: { 'application/json': { schema } } });
const DOC = {
  openapi: '3.1.0',
  paths: {
    '/v1/things/{thing_id}': {
      get: {
        operationId: 'getThing',
        responses: {
          200: { description: 'ok', ...json(closed({ id: { type: 'string', format: 'uuid' }, state: { enum: ['a', 'b'] } }, ['id', 'state'])) },
          404: { $ref: '#/components/responses/NotFound' },
        },
      },
    },
    '/v1/things/current': { get: { operationId: 'currentThing', responses: { 204: { description: 'none' } } } },
  },
  components: {
    schemas: { ErrorBody: closed({ error: { type: 'string' }, code: { type: 'string' } }, ['error', 'code']) },
    responses: { NotFound: { description: 'not found', ...json({ $ref: '#/components/schemas/ErrorBody' }) } },
  },
};
const ID = '7d3c1c52-3f0e-4b8f-9a43-2b1f0f6a0c11';
const res = (url: string, status: number, body: unknown, contentType = 'application/json; charset=utf-8') => ({ base: 'http://x', method: 'GET', url, status, contentType, body });

describe('the response check', () => {
  it('passes published shapes and flags the rest', () => {
    expect(checkAgainst(DOC, [
      res(`/v1/things/${ID}?x=1`, 200, { id: ID, state: 'a' }),
      res(`/v1/things/${ID}`, 404, { error: 'no', code: 'not_found' }),
      res(`/v1/things/${ID}`, 413, { error: 'too big', code: 'bad_request' }), // unpublished error: the error body
      res('/v1/things/current', 204, '', ''), // no body published
      res('/v1/elsewhere', 200, { anything: true }), // not a published path: not checked
    ])).toEqual([]);
    const problems = checkAgainst(DOC, [
      res(`/v1/things/${ID}`, 200, { id: ID, state: 'cancelled' }),
      res(`/v1/things/${ID}`, 200, { id: ID, state: 'a', extra: 1 }),
      res(`/v1/things/${ID}`, 201, { id: ID, state: 'a' }),
      res(`/v1/things/${ID}`, 500, { message: 'x' }),
    ]);
    expect(problems).toHaveLength(4);
    expect(problems[2]).toContain('status not published');
  });
});
