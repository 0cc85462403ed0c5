// Features through the real HTTP stack: CRUD, geometry validation, delete while used, control-feature.
import { describe, expect, it } from 'vitest';
import { holdFeature, isFeatureLocked } from '../../src/missions/catalog/features.js';
import { req } from '../idempotency/harness.js';
import { square, type Catalog, catalogPerTest } from './catalog-support.js';

const setup = catalogPerTest();

describe('features', () => {
  it('create, list, read, edit and delete', async () => {
    const c = await setup();
    const created = await req(c.s, 'POST', `${c.base}/features`, { body: { name: 'North lawn', geometry: square() } });
    expect(created.status).toBe(201);
    const id = created.json.featureId;
    expect(created.json).toMatchObject({ name: 'North lawn', geometry: square(), locked: false, lockReason: null, holders: [], decompositionEpoch: 0 });
    expect((await req(c.s, 'GET', `${c.base}/features`)).json).toEqual({ items: [{ featureId: id, name: 'North lawn', locked: false }], next_cursor: null });
    expect((await req(c.s, 'GET', `${c.base}/features/${id}`)).json.featureId).toBe(id);
    const edited = await req(c.s, 'PUT', `${c.base}/features/${id}`, { body: { name: 'South lawn' } });
    expect(edited.json).toMatchObject({ name: 'South lawn', geometry: square() });
    expect((await req(c.s, 'DELETE', `${c.base}/features/${id}`)).status).toBe(204);
    expect(await req(c.s, 'GET', `${c.base}/features/${id}`)).toMatchObject({ status: 404, json: { code: 'not_found' } });
  });

  it.each([
    ['an open ring', { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [1, 1], [0, 1]]] }, /not closed/],
    ['a ring of 3 positions', { type: 'Polygon', coordinates: [[[0, 0], [1, 0], [0, 0]]] }, /fewer than 4|4 items/],
    ['a longitude out of range', { type: 'Polygon', coordinates: [[[0, 0], [181, 0], [1, 1], [0, 0]]] }, /longitude/],
    ['a latitude out of range', { type: 'Polygon', coordinates: [[[0, 0], [1, 91], [1, 1], [0, 0]]] }, /latitude/],
    ['a Point', { type: 'Point', coordinates: [0, 0] }, /./],
    ['an open ring inside a MultiPolygon', { type: 'MultiPolygon', coordinates: [square().coordinates, [[[0, 0], [1, 0], [1, 1], [0, 2]]]] }, /polygon 1, ring 0 is not closed/],
  ])('rejects %s with 400', async (_what, geometry, message) => {
    const c = await setup();
    const r = await req(c.s, 'POST', `${c.base}/features`, { body: { name: 'x', geometry } });
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('bad_request');
    expect(r.json.error).toMatch(message);
  });

  it('accepts a MultiPolygon with a hole', async () => {
    const c = await setup();
    const outer = [[0, 0], [10, 0], [10, 10], [0, 10], [0, 0]];
    const hole = [[2, 2], [3, 2], [3, 3], [2, 2]];
    const r = await req(c.s, 'POST', `${c.base}/features`, { body: { name: 'm', geometry: { type: 'MultiPolygon', coordinates: [[outer, hole], square(20, 20).coordinates] } } });
    expect(r.status).toBe(201);
  });

  it('needs features:write to author and features:read to read', async () => {
    const c = await setup();
    const body = { name: 'x', geometry: square() };
    expect((await req(c.s, 'POST', `${c.base}/features`, { body, key: c.s.only['features:read'] })).status).toBe(403);
    const id = (await req(c.s, 'POST', `${c.base}/features`, { body, key: c.s.only['features:write'] })).json.featureId;
    expect((await req(c.s, 'GET', `${c.base}/features/${id}`, { key: c.s.only['features:write'] })).status).toBe(403);
    expect((await req(c.s, 'GET', `${c.base}/features/${id}`, { key: c.s.only['features:read'] })).status).toBe(200);
    // Another fleet's path does not see it.
    expect((await req(c.s, 'GET', `/v1/orgs/${c.s.orgId}/fleets/${c.s.otherFleetId}/features/${id}`)).status).toBe(404);
  });

  it('refuses to delete a feature while a template uses it (409)', async () => {
    const c = await setup();
    const featureId = await c.feature();
    const t = await c.template({ featureId });
    expect(t.status).toBe(201);
    const del = await req(c.s, 'DELETE', `${c.base}/features/${featureId}`);
    expect(del.status).toBe(409);
    expect(del.json).toMatchObject({ code: 'conflict', error: expect.stringContaining(t.json.missionId) });
    expect((await req(c.s, 'DELETE', `${c.base}/mission-templates/${t.json.missionId}`)).status).toBe(200);
    expect((await req(c.s, 'DELETE', `${c.base}/features/${featureId}`)).status).toBe(204);
  });
});

describe('control-feature', () => {
  const ctl = (c: Catalog, body: Record<string, unknown>, key?: string) =>
    req(c.s, 'POST', '/v1/agent/control-feature', { body: { org_id: c.s.orgId, fleet_id: c.s.fleetId, ...body }, ...(key ? { key } : {}) });

  it('locks with a reason, unlocks and resets', async () => {
    const c = await setup();
    const id = await c.feature();
    const locked = await ctl(c, { action: 'lock', feature_id: id, lock_reason: 'wet grass' });
    expect(locked.status).toBe(200);
    expect(locked.json.feature).toMatchObject({ locked: true, lockReason: 'wet grass' });
    expect(isFeatureLocked(c.s.store, id)).toBe(true);
    const unlocked = await ctl(c, { action: 'unlock', feature_id: id });
    expect(unlocked.json.feature).toMatchObject({ locked: false, lockReason: null });
    expect(isFeatureLocked(c.s.store, id)).toBe(false);

    await holdFeature(c.s.store, c.s.events, c.s.fleetId, id, c.s.robots.active[0]!, Date.now());
    expect((await req(c.s, 'GET', `${c.base}/features/${id}`)).json.holders).toEqual([c.s.robots.active[0]]);
    const reset = await ctl(c, { action: 'reset', feature_id: id });
    expect(reset.json.feature).toMatchObject({ holders: [], decompositionEpoch: 1 });
  });

  it('validates: feature_id required, lock_reason only on lock, field rule actions take directive_id only, features:write needed', async () => {
    const c = await setup();
    const id = await c.feature();
    expect((await ctl(c, { action: 'lock' })).status).toBe(400);
    expect((await ctl(c, { action: 'unlock', feature_id: id, lock_reason: 'x' })).status).toBe(400);
    // A feature id is no field rule (404); field rule actions take no feature_id (400); lock takes no directive_id (400).
    expect((await ctl(c, { action: 'enable_field_rule', directive_id: id })).status).toBe(404);
    expect((await ctl(c, { action: 'enable_field_rule', directive_id: id, feature_id: id })).status).toBe(400);
    expect((await ctl(c, { action: 'lock', feature_id: id, directive_id: id })).status).toBe(400);
    expect((await ctl(c, { action: 'lock', feature_id: id, extra: 1 })).status).toBe(400);
    expect((await ctl(c, { action: 'lock', feature_id: id }, c.s.only['features:read'])).status).toBe(403);
    expect((await ctl(c, { action: 'lock', feature_id: id }, c.s.only['features:write'])).status).toBe(200);
    expect((await ctl(c, { action: 'lock', feature_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
  });
});
