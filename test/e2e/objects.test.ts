/**
 * Real process: tracked objects (issue 10 part 2) and the organization / fleet manifests (part 7)
 * against `fleetgw serve` with simulated robots reporting detections over the real robot link.
 * The TTL is shortened (FLEETGW_OBJECT_TTL_MS) so expiry is seen within the test.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSimFleet, type SimFleet } from '../../src/sim/fleet.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

interface Obj { objectId: string; objectClass: string; source: string; sightings: number; lastSeenMs: number; expiresAtMs: number | null; lastReportedBy: { robotId: string } | null; label: string | null; position: { latitude: number; longitude: number } }

describe('tracked objects and manifests over the real gateway process', () => {
  const d = makeDataDir('fleetgw-e2e-objects-');
  const fleetB = adminJson<{ fleetId: string }>(['create-fleet', '--data-dir', d.dataDir, '--org', d.orgId, '--name', 'B', '--json']).fleetId;
  const other = adminJson<{ orgId: string; fleetId: string; apiKey: string }>(['init', '--data-dir', d.dataDir, '--another-org', '--org', 'Other', '--fleet', 'X', '--json']);
  const creds = Array.from({ length: 2 }, (_, i) => adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `r${i}`, '--json']));
  const readOnly = adminJson<{ apiKey: string }>(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--permissions', 'robots:read,fleet:read', '--json']).apiKey;
  const base = `/v1/orgs/${d.orgId}/fleets/${d.fleetId}`;
  let gw: RunningGateway;
  let sim: SimFleet | null = null;
  const call = (path: string, init: RequestInit = {}, key = d.apiKey) => api(gw.ready.http, key, path, init);
  const send = (method: string, path: string, body: unknown, key = d.apiKey) => call(path, { method, body: JSON.stringify(body) }, key);
  const list = async (q = ''): Promise<Obj[]> => (await call(`${base}/objects?limit=500${q}`)).body.items;

  beforeAll(async () => {
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http'], { FLEETGW_OBJECT_TTL_MS: '4000' });
  });
  afterAll(async () => {
    await sim?.stop();
    await gw.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('manifests: the org with its fleets; a fleet carries operation null until its first template, then one object', async () => {
    const org = await call(`/v1/orgs/${d.orgId}`);
    expect(org.status).toBe(200);
    expect(org.body).toMatchObject({ orgId: d.orgId, name: 'Acme' });
    expect(org.body.fleets.map((f: { fleetId: string }) => f.fleetId).sort()).toEqual([d.fleetId, fleetB].sort());
    const before = await call(base);
    expect(before.body).toMatchObject({ fleetId: d.fleetId, name: 'Yard', operation: null, robots: { total: 2, active: 2 } });
    const feature = await send('POST', `${base}/features`, { name: 'yard', geometry: { type: 'Polygon', coordinates: [[[5, 52], [5.001, 52], [5.001, 52.001], [5, 52]]] } });
    expect(feature.status).toBe(201);
    const tpl = await call(`${base}/mission-templates`, { method: 'POST', body: JSON.stringify({ name: 'patrol', featureId: feature.body.featureId, steps: [{ kind: 'wait', config: { seconds: 1 } }] }), headers: { 'idempotency-key': randomUUID() } });
    expect(tpl.status, JSON.stringify(tpl.body)).toBe(201);
    const after = (await call(base)).body;
    expect(after.operation).toEqual({ operation_id: expect.any(String), name: expect.any(String) });
    expect((await call(`/v1/orgs/${d.orgId}/fleets/${fleetB}`)).body.operation).toBeNull();
    expect((await call(`/v1/orgs/${other.orgId}`)).status).toBe(403);
    expect((await call(`/v1/orgs/${d.orgId}/fleets/${other.fleetId}`)).status).toBe(404);
    expect((await call(`/v1/orgs/${d.orgId}/fleets/not-a-uuid`)).status).toBe(400);
  });

  it('robots report detections: objects appear with source robot, are re-seen rather than duplicated, and expire when not seen', async () => {
    sim = runSimFleet({ grpc: gw.ready.grpc, robots: creds, hz: 2 });
    await until(async () => (await list('&source=robot')).length > 0, 20_000, 'robot objects');
    const first = (await list('&source=robot'))[0]!;
    expect(first.lastReportedBy).not.toBeNull();
    expect(['pallet', 'obstacle', 'person']).toContain(first.objectClass);
    expect(first.expiresAtMs).toBe(first.lastSeenMs + 4000);
    // Seen again frame after frame: the same record (more sightings), not a new one per frame. Any
    // object will do: the first one listed may be a passer-by that leaves every robot's view and
    // expires (4 s) before its third sighting.
    await until(async () => (await list('&source=robot')).some((o) => o.sightings >= 3), 15_000, 'sightings');
    const objs = await list('&source=robot');
    const staticOnes = objs.filter((o) => o.objectClass !== 'person');
    // The simulated depot holds each static object once: no two records of one class within 1.5 m.
    // (Both axes: the depot's objects stand on a 40 m grid, so two of one row share a latitude.)
    const metres = (a: Obj, b: Obj): number => Math.hypot((b.position.latitude - a.position.latitude) * 111_320, (b.position.longitude - a.position.longitude) * 111_320 * Math.cos((a.position.latitude * Math.PI) / 180));
    const near = staticOnes.filter((a) => staticOnes.some((b) => b !== a && b.objectClass === a.objectClass && metres(a, b) < 1.5));
    expect(near).toEqual([]);
    const timeline = (await call(`/v1/events?fleet_id=${d.fleetId}&correlation_id=${first.objectId}`)).body.items as { kind: string }[];
    expect(timeline[0]!.kind).toBe('object.detected');

    // Robots gone: every robot object expires after the TTL, with an event.
    await sim.stop();
    sim = null;
    await until(async () => (await list('&source=robot')).length === 0, 20_000, 'robot objects expired');
    const after = (await call(`/v1/events?fleet_id=${d.fleetId}&correlation_id=${first.objectId}`)).body.items as { kind: string }[];
    expect(after.map((e) => e.kind)).toContain('object.expired');
    expect((await call(`${base}/objects/${first.objectId}`)).status).toBe(404);
  }, 60_000);

  it('operators create, read, update and delete manual objects; filters, paging, permissions, strict input; survives a restart', async () => {
    const mk = (objectClass: string, lat: number, label?: string) =>
      send('POST', `${base}/objects`, { objectClass, position: { latitude: lat, longitude: 5 }, ...(label ? { label } : {}) });
    const a = await mk('pallet', 52.0001, 'bay 3');
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ objectClass: 'pallet', source: 'manual', label: 'bay 3', expiresAtMs: null, sightings: 0, lastReportedBy: null, geometry: null });
    const b = await mk('obstacle', 52.0002);
    const c = await mk('pallet', 52.0003);
    expect((await list('&class=pallet')).map((o) => o.objectId)).toEqual([c.body.objectId, a.body.objectId]);
    expect((await list('&source=manual')).length).toBe(3);
    const p1 = await call(`${base}/objects?limit=2&source=manual`);
    expect(p1.body.items).toHaveLength(2);
    const p2 = await call(`${base}/objects?limit=2&source=manual&cursor=${encodeURIComponent(p1.body.next_cursor)}`);
    expect(p2.body.items.map((o: Obj) => o.objectId)).toEqual([a.body.objectId]);
    expect(p2.body.next_cursor).toBeNull();
    expect((await call(`${base}/objects?limit=2&source=robot&cursor=${encodeURIComponent(p1.body.next_cursor)}`)).status).toBe(400);

    const geometry = { type: 'Polygon', coordinates: [[[5, 52.0001], [5.00001, 52.0001], [5.00001, 52.00011], [5, 52.0001]]] };
    const upd = await send('PATCH', `${base}/objects/${a.body.objectId}`, { label: null, geometry });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ label: null, geometry, objectClass: 'pallet' });
    expect((await send('PATCH', `${base}/objects/${a.body.objectId}`, { colour: 'red' })).body.error).toContain('colour');
    expect((await send('PATCH', `${base}/objects/${a.body.objectId}`, {})).status).toBe(400);
    expect((await send('POST', `${base}/objects`, { objectClass: 'Pallet!', position: { latitude: 52, longitude: 5 } })).body.error).toContain('objectClass');
    expect((await send('POST', `${base}/objects`, { objectClass: 'pallet', position: { latitude: 95, longitude: 5 } })).status).toBe(400);

    // robots:read reads, but does not manage; another organization's key sees nothing.
    expect((await call(`${base}/objects/${b.body.objectId}`, {}, readOnly)).status).toBe(200);
    expect((await send('DELETE', `${base}/objects/${b.body.objectId}`, undefined, readOnly)).status).toBe(403);
    expect((await call(`/v1/orgs/${other.orgId}/fleets/${other.fleetId}/objects/${b.body.objectId}`, {}, other.apiKey)).status).toBe(404);
    expect((await call(`/v1/orgs/${d.orgId}/fleets/${fleetB}/objects/${b.body.objectId}`)).status).toBe(404);

    expect((await call(`${base}/objects/${b.body.objectId}`, { method: 'DELETE' })).status).toBe(204);
    expect((await call(`${base}/objects/${b.body.objectId}`)).status).toBe(404);
    const kinds = ((await call(`/v1/events?fleet_id=${d.fleetId}&correlation_id=${a.body.objectId}`)).body.items as { kind: string }[]).map((e) => e.kind);
    expect(kinds).toEqual(['object.created', 'object.updated']);

    await gw.stop();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http'], { FLEETGW_OBJECT_TTL_MS: '4000' });
    expect((await list('&source=manual')).map((o) => o.objectId)).toEqual([c.body.objectId, a.body.objectId]);
  }, 60_000);
});
