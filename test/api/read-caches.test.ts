/**
 * The request path's read caches (robot view JSON, decoded API-key records) never serve a stale answer:
 * every change to what a response is built from shows on the very next request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VERIFIED_TTL_MS } from '../../src/auth/authenticate.js';
import type { RobotRecord } from '../../src/store/records.js';
import type { TelemetrySnapshot } from '../../src/telemetry/sample/snapshot.js';
import { call, startFixture, type Fixture } from './fixture.js';

let fx: Fixture;
beforeAll(async () => {
  fx = await startFixture();
});
afterAll(async () => {
  await fx.close();
});

function snapshot(robotId: string, fleetId: string, tsMs: number, percent: number): TelemetrySnapshot {
  return {
    robotId, fleetId, tsMs, receivedAtMs: tsMs + 5, latitude: 48.1, longitude: 11.5, elevationM: 520.5,
    pose: { xM: 1, yM: 2, zM: 0, headingDeg: 90 }, velocity: { linearMps: 1.5, angularDps: -3 }, gpsFix: 4,
    mode: 'autonomous', estop: false, battery: { percent, voltageV: 48.2, charging: false }, mission: null,
    health: { level: 'ok', faults: [], cpuTempC: 61 },
    mapId: '', loads: { count: 0, ids: [], types: [], weightKg: 0 },
  };
}

const getRobot = async (id: string, key = fx.keys.full): Promise<{ status: number; json: Record<string, unknown> }> => {
  const r = await call(fx, 'GET', `/v1/robots/${id}`, { key });
  return { status: r.status, json: r.json as Record<string, unknown> };
};

describe('GET /v1/robots/{robot_id} served from the view cache', () => {
  it('follows every change of snapshot, online flag and robot record on the next request', async () => {
    const id = fx.ids.robotA2;
    const first = await getRobot(id);
    expect(first.status).toBe(200);
    expect(first.json.batteryPct).toBeNull();
    expect(await getRobot(id)).toEqual(first);

    fx.store.snapshots.putSync(id, snapshot(id, first.json.fleetId as string, 1_700_000_000_000, 50));
    expect((await getRobot(id)).json).toMatchObject({ batteryPct: 50, lastSeenMs: 1_700_000_000_005 });
    fx.store.snapshots.putSync(id, snapshot(id, first.json.fleetId as string, 1_700_000_000_100, 49));
    expect((await getRobot(id)).json).toMatchObject({ batteryPct: 49, lastSeenMs: 1_700_000_000_105 });

    fx.online.add(id);
    expect((await getRobot(id)).json.online).toBe(true);
    fx.online.delete(id);
    expect((await getRobot(id)).json.online).toBe(false);

    const rec = fx.store.robots.get(id)!;
    fx.store.robots.putSync(id, { ...rec, name: 'renamed' } satisfies RobotRecord);
    expect((await getRobot(id)).json).toMatchObject({ name: 'renamed', batteryPct: 49 });

    await fx.store.snapshots.remove(id);
    expect((await getRobot(id)).json).toMatchObject({ name: 'renamed', batteryPct: null, motionTelemetry: null });
  });

  it('checks access on every request, whoever filled the cache', async () => {
    const id = fx.ids.robotA2;
    expect((await getRobot(id, fx.keys.full)).status).toBe(200);
    expect((await getRobot(id, fx.keys.fleetScopedA1)).status).toBe(403);
    expect((await getRobot(id, fx.keys.orgB)).status).toBe(404);
  });

  it('a robot removed from the store is 404 on the next request', async () => {
    const id = fx.ids.robotA1Inactive;
    expect((await getRobot(id)).status).toBe(200);
    const rec = fx.store.robots.get(id)!;
    await fx.store.robots.remove(id);
    expect((await getRobot(id)).status).toBe(404);
    fx.store.robots.putSync(id, rec);
    expect((await getRobot(id)).status).toBe(200);
  });
});

describe('API keys through the decoded-record cache', () => {
  it('a permission removed in the store applies once the verified-credential TTL has passed', async () => {
    const id = fx.keys.fullId;
    expect((await call(fx, 'GET', `/v1/robots/${fx.ids.robotA1}`, { key: fx.keys.full })).status).toBe(200);
    const rec = fx.store.apikeys.get(id)!;
    fx.store.apikeys.putSync(id, { ...rec, permissions: rec.permissions.filter((p) => p !== 'robots:read') });
    // Time-based on purpose: the TTL itself is what is tested (longer on a loaded machine only helps).
    await new Promise((r) => setTimeout(r, VERIFIED_TTL_MS + 10));
    expect((await call(fx, 'GET', `/v1/robots/${fx.ids.robotA1}`, { key: fx.keys.full })).status).toBe(403);
    fx.store.apikeys.putSync(id, rec);
    // Time-based on purpose: the restored permission too applies only once the TTL has passed.
    await new Promise((r) => setTimeout(r, VERIFIED_TTL_MS + 10));
    expect((await call(fx, 'GET', `/v1/robots/${fx.ids.robotA1}`, { key: fx.keys.full })).status).toBe(200);
  });

  it('a wrong secret for a cached key id is still 401', async () => {
    const bad = `${fx.keys.full.slice(0, -4)}AAAA`;
    expect((await call(fx, 'GET', '/v1/me', { key: fx.keys.full })).status).toBe(200);
    expect((await call(fx, 'GET', '/v1/me', { key: bad })).status).toBe(401);
  });
});
