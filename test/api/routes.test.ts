import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TelemetrySnapshot } from '../../src/telemetry/sample/snapshot.js';
import { call, startFixture, type Fixture } from './fixture.js';

let fx: Fixture;
beforeAll(async () => {
  fx = await startFixture();
});
afterAll(async () => {
  await fx.close();
});

function snapshot(robotId: string, fleetId: string): TelemetrySnapshot {
  return {
    robotId,
    fleetId,
    tsMs: 1_700_000_000_000,
    receivedAtMs: 1_700_000_000_250,
    latitude: 48.1,
    longitude: 11.5,
    elevationM: 520.5,
    pose: { xM: 1, yM: 2, zM: 0, headingDeg: 90 },
    velocity: { linearMps: 1.5, angularDps: -3 },
    gpsFix: 4,
    mode: 'autonomous',
    estop: false,
    battery: { percent: 77, voltageV: 48.2, charging: false },
    mission: { runId: 'run-1', missionState: 'running', progressPct: 40, stepIndex: 2, remainingDistanceM: 120, etaS: 90 },
    health: { level: 'warn', faults: ['lidar_dirty'], cpuTempC: 61 },
    mapId: 'hall-2',
    loads: { count: 1, ids: ['pallet-7'], types: ['EPAL'], weightKg: 412.5 },
  };
}

describe('GET /v1/me', () => {
  it('returns the key identity with every permission it carries', async () => {
    const r = await call(fx, 'GET', '/v1/me', { key: fx.keys.fleetScopedA1 });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toBe('application/json');
    const me = r.json as Record<string, unknown>;
    expect(me).toMatchObject({ actorType: 'api_key', orgId: fx.ids.orgA, fleetId: fx.ids.fleetA1 });
    expect(Object.keys(me).sort()).toEqual(['actorType', 'apiKeyId', 'fleetId', 'orgId', 'permissions']);
    const full = (await call(fx, 'GET', '/v1/me', { key: fx.keys.full })).json as Record<string, unknown>;
    expect(full).toMatchObject({ apiKeyId: fx.keys.fullId, fleetId: null });
    expect(full.permissions).toContain('robots:read');
  });
});

describe('GET /v1/orgs/{org_id}/fleets', () => {
  it('lists the fleets an org-wide key can use, and only the bound fleet for a fleet-scoped key', async () => {
    const all = await call(fx, 'GET', `/v1/orgs/${fx.ids.orgA}/fleets`, { key: fx.keys.full });
    expect(all.status).toBe(200);
    const items = (all.json as { items: { fleetId: string; name: string }[] }).items;
    expect(items.map((f) => f.fleetId).sort()).toEqual([fx.ids.fleetA1, fx.ids.fleetA2].sort());
    expect(items.find((f) => f.fleetId === fx.ids.fleetA1)).toEqual({ fleetId: fx.ids.fleetA1, name: 'A1' });
    const scoped = await call(fx, 'GET', `/v1/orgs/${fx.ids.orgA}/fleets`, { key: fx.keys.fleetScopedA1 });
    expect(scoped.json).toEqual({ items: [{ fleetId: fx.ids.fleetA1, name: 'A1' }], next_cursor: null });
  });

  it('a malformed org id is 400 bad_request', async () => {
    for (const bad of ['not-a-uuid', `urn:uuid:${fx.ids.orgA}`, `{${fx.ids.orgA}}`, `${fx.ids.orgA}0`]) {
      const r = await call(fx, 'GET', `/v1/orgs/${encodeURIComponent(bad)}/fleets`, { key: fx.keys.full });
      expect({ bad, status: r.status }).toEqual({ bad, status: 400 });
      expect((r.json as { code: string }).code).toBe('bad_request');
    }
  });

  it('an upper-case org id is the same org (UUIDs are accepted in any letter case)', async () => {
    const r = await call(fx, 'GET', `/v1/orgs/${fx.ids.orgA.toUpperCase()}/fleets`, { key: fx.keys.full });
    expect(r.status).toBe(200);
  });
});

describe('GET /v1/robots and /v1/robots/{robot_id}', () => {
  it('lists every robot of the fleet, inactive ones included, with null telemetry before any report', async () => {
    const r = await call(fx, 'GET', `/v1/robots?fleet_id=${fx.ids.fleetA1}`, { key: fx.keys.full });
    expect(r.status).toBe(200);
    const list = r.json as Record<string, unknown>[];
    expect(Array.isArray(list)).toBe(true);
    expect(list.map((x) => x.id).sort()).toEqual([fx.ids.robotA1, fx.ids.robotA1Inactive].sort());
    const spare = list.find((x) => x.id === fx.ids.robotA1Inactive)!;
    expect(spare).toMatchObject({ name: 'a1-spare', active: false, online: false, fleetId: fx.ids.fleetA1, lastSeenMs: null });
    expect(spare.motionTelemetry).toBeNull();
    expect(spare.statusTelemetry).toBeNull();
    expect(spare.latitude).toBeNull();
    expect(spare.batteryPct).toBeNull();
  });

  it('shows the latest snapshot flattened and nested, and the live online flag', async () => {
    await fx.store.snapshots.put(fx.ids.robotA1, snapshot(fx.ids.robotA1, fx.ids.fleetA1));
    fx.online.add(fx.ids.robotA1);
    const r = await call(fx, 'GET', `/v1/robots/${fx.ids.robotA1}`, { key: fx.keys.full });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      id: fx.ids.robotA1,
      name: 'a1-bot',
      active: true,
      online: true,
      capabilities: ['drive', 'lights'],
      lastSeenMs: 1_700_000_000_250,
      latitude: 48.1,
      longitude: 11.5,
      elevationM: 520.5,
      headingDeg: 90,
      speedMps: 1.5,
      gpsFix: 4,
      mode: 'autonomous',
      estop: false,
      batteryPct: 77,
      missionState: 'running',
      healthLevel: 'warn',
      motionTelemetry: {
        tsMs: 1_700_000_000_000,
        position: { latitude: 48.1, longitude: 11.5, elevationM: 520.5 },
        pose: { xM: 1, yM: 2, zM: 0, headingDeg: 90 },
        velocity: { linearMps: 1.5, angularDps: -3 },
        gpsFix: 4,
        mapId: 'hall-2',
      },
      statusTelemetry: {
        tsMs: 1_700_000_000_000,
        mode: 'autonomous',
        estop: false,
        battery: { percent: 77, voltageV: 48.2, charging: false },
        mission: { runId: 'run-1', missionState: 'running', missionProgressPct: 40, currentStepIndex: 2, remainingDistanceM: 120, estimatedTimeRemainingS: 90 },
        health: { level: 'warn', faults: ['lidar_dirty'], cpuTempC: 61 },
        loads: { count: 1, ids: ['pallet-7'], types: ['EPAL'], weightKg: 412.5 },
      },
    });
    fx.online.delete(fx.ids.robotA1);
    const after = await call(fx, 'GET', `/v1/robots/${fx.ids.robotA1}`, { key: fx.keys.full });
    expect((after.json as { online: boolean }).online).toBe(false);
  });

  it('an unknown robot is 404 not_found; bad or missing fleet_id and unknown query fields are 400', async () => {
    const unknown = '00000000-0000-4000-8000-000000000000';
    const r = await call(fx, 'GET', `/v1/robots/${unknown}`, { key: fx.keys.full });
    expect(r.status).toBe(404);
    expect(r.json).toEqual({ error: `Robot ${unknown} was not found.`, code: 'not_found' });
    for (const q of ['', '?fleet_id=nope', `?fleet_id=${fx.ids.fleetA1}&extra=1`, `?fleet_id=${fx.ids.fleetA1}&fleet_id=${fx.ids.fleetA2}`]) {
      const b = await call(fx, 'GET', `/v1/robots${q}`, { key: fx.keys.full });
      expect({ q, status: b.status, code: (b.json as { code: string }).code }).toEqual({ q, status: 400, code: 'bad_request' });
    }
  });
});
