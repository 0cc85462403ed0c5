import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CATALOG } from '../../src/errors/catalog.js';
import { call, startFixture, type Fixture } from './fixture.js';

const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as unknown as (a: Ajv2020) => Ajv2020;

type Json = Record<string, any>;

let fx: Fixture;
let doc: Json;
beforeAll(async () => {
  fx = await startFixture();
  const r = await call(fx, 'GET', '/openapi.json');
  expect(r.status).toBe(200);
  doc = r.json as Json;
});
afterAll(async () => {
  await fx.close();
});

/** Resolves a local `#/components/...` reference. */
function deref(node: Json): Json {
  if (typeof node.$ref !== 'string') return node;
  return (node.$ref)
    .slice(2)
    .split('/')
    .reduce((n: Json, k) => n[k] as Json, doc);
}

const HTTP_METHODS = ['get', 'post', 'put', 'patch', 'delete'];

describe('GET /openapi.json', () => {
  it('is served without a credential and is the document built from the routes', () => {
    expect(doc).toEqual(JSON.parse(JSON.stringify(fx.document)));
    expect(doc.openapi).toBe('3.1.0');
  });

  it('passes a real OpenAPI 3.1 validator', async () => {
    const v = new Validator();
    const res = await v.validate(doc);
    expect(res.errors).toBeUndefined();
    expect(res.valid).toBe(true);
    expect(v.version).toBe('3.1');
    // Control: the validator has teeth (a response without a description is invalid in 3.1).
    const broken = { ...doc, paths: { '/x': { get: { responses: { '200': { content: {} } } } } } };
    expect((await new Validator().validate(broken)).valid).toBe(false);
  });

  it('lists exactly the operations the router serves, both ways', () => {
    const served = fx.router.routes.map((r) => `${r.method} ${r.path}`).sort();
    const documented: string[] = [];
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const m of Object.keys(item as Json)) {
        expect(HTTP_METHODS).toContain(m);
        documented.push(`${m.toUpperCase()} ${path}`);
      }
    }
    expect(documented.sort()).toEqual(served);
    expect(served).toEqual(
      ['GET /openapi.json', 'GET /v1/me', 'GET /v1/orgs/{org_id}/fleets', 'GET /v1/robots', 'GET /v1/robots/{robot_id}'].sort(),
    );
  });

  it('requires an API key or a session on every operation but /openapi.json and login (key management: a session only), and declares every path parameter', () => {
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.components.securitySchemes.sessionCookie).toMatchObject({ type: 'apiKey', in: 'cookie', name: 'fleetgw_session' });
    for (const [path, item] of Object.entries(doc.paths as Json)) {
      for (const [method, op] of Object.entries(item as Json) as [string, Json][]) {
        const sessionOnly = path.startsWith('/v1/orgs/{org_id}/api-keys') || path === '/v1/sessions/current';
        const open = path === '/openapi.json' || (path === '/v1/sessions' && method === 'post');
        expect(op.security, `${method} ${path}`).toEqual(open ? [] : sessionOnly ? [{ sessionCookie: [] }] : [{ bearerAuth: [] }, { sessionCookie: [] }]);
        const declared = ((op.parameters ?? []) as Json[]).filter((p) => p.in === 'path').map((p) => p.name as string);
        const inTemplate = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]);
        expect(declared).toEqual(inTemplate);
        if (path !== '/openapi.json') {
          expect(Object.keys(op.responses as Json)).toEqual(expect.arrayContaining(['400', '401', '429', '500']));
          if (!open && method !== 'get') expect(op['x-errors']).toContain('csrf_failed');
          if (sessionOnly) expect(op['x-errors']).toContain('session_required');
        }
      }
    }
  });

  it('publishes every catalog status as an error response with the {error, code} schema', () => {
    const statuses = new Set(Object.values(ERROR_CATALOG).map((e) => String(e.status)));
    const responses = doc.components.responses as Json;
    for (const s of statuses) {
      const r = responses[`Error${s}`] as Json;
      expect(r, `status ${s}`).toBeDefined();
      expect(r.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/ErrorBody' });
    }
    expect(doc.components.schemas.ErrorBody.required).toEqual(['error', 'code']);
    expect(responses.Error429.headers['Retry-After']).toBeDefined();
  });

  it('the real responses match the published schemas (2020-12 validation of live bodies)', async () => {
    const ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }));
    ajv.addSchema({ $id: 'doc', components: doc.components }, 'doc');
    const schemaFor = (path: string, status: number): Json => {
      const resp = deref(doc.paths[path].get.responses[String(status)] as Json);
      const schema = resp.content['application/json'].schema as Json;
      return schema.$ref ? { $ref: `doc${schema.$ref as string}` } : schema;
    };
    const check = async (path: string, url: string, key: string | undefined, status: number): Promise<void> => {
      const r = await call(fx, 'GET', url, { key });
      expect(r.status).toBe(status);
      const validate = ajv.compile(schemaFor(path, status));
      expect(validate(r.json), `${url} ${JSON.stringify(validate.errors)}`).toBe(true);
    };
    await fx.store.snapshots.put(fx.ids.robotA2, {
      robotId: fx.ids.robotA2, fleetId: fx.ids.fleetA2, tsMs: 1, receivedAtMs: 2, latitude: 1, longitude: 2, elevationM: 3,
      pose: { xM: 0, yM: 0, zM: 0, headingDeg: 0 }, velocity: { linearMps: 0, angularDps: 0 }, gpsFix: 1, mode: 'manual',
      estop: true, battery: { percent: 50, voltageV: 24, charging: true }, mission: null,
      health: { level: 'ok', faults: [], cpuTempC: 40 },
    });
    await check('/v1/me', '/v1/me', fx.keys.full, 200);
    await check('/v1/orgs/{org_id}/fleets', `/v1/orgs/${fx.ids.orgA}/fleets`, fx.keys.full, 200);
    await check('/v1/robots', `/v1/robots?fleet_id=${fx.ids.fleetA1}`, fx.keys.full, 200);
    await check('/v1/robots/{robot_id}', `/v1/robots/${fx.ids.robotA2}`, fx.keys.full, 200);
    await check('/v1/robots/{robot_id}', `/v1/robots/${fx.ids.robotA1}`, fx.keys.full, 200);
    await check('/v1/robots/{robot_id}', `/v1/robots/${fx.ids.robotB1}`, fx.keys.full, 404);
    await check('/v1/robots/{robot_id}', `/v1/robots/${fx.ids.robotA1}`, undefined, 401);
    await check('/v1/robots/{robot_id}', `/v1/robots/${fx.ids.robotA1}`, fx.keys.only['fleet:read'], 403);
    await check('/v1/robots', '/v1/robots?fleet_id=x', fx.keys.full, 400);
  });
});
