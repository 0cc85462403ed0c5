// Writes nobody awaits still report their failure: to every sink the gateway added (its log line and
// the fleetgw_store_write_failures_total counter), or as a process warning when there is none.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { saveDeviceHealth } from '../../src/fleet/robots/health/device-health.js';
import { GatewayMetrics } from '../../src/metrics/gateway-metrics.js';
import { BackgroundWrites, type WriteFailure } from '../../src/store/background-writes.js';
import { openStore, type Store } from '../../src/store/lmdb.js';

let dir: string;
let store: Store;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-bgw-'));
  store = openStore(dir);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('BackgroundWrites', () => {
  it('reports a failed write to every sink with its owner and database; a removed sink hears nothing', async () => {
    const w = new BackgroundWrites();
    const a: WriteFailure[] = [];
    const b: WriteFailure[] = [];
    w.onFailure((f) => a.push(f));
    const off = w.onFailure((f) => b.push(f));
    w.watch(Promise.resolve(true), 'missions', 'runs');
    w.watch(Promise.reject(new Error('MDB_MAP_FULL')), 'missions', 'runs');
    await new Promise((r) => setImmediate(r));
    expect(a).toMatchObject([{ owner: 'missions', db: 'runs', err: { message: 'MDB_MAP_FULL' } }]);
    expect(b).toHaveLength(1);
    off();
    w.watch(Promise.reject(new Error('again')), 'faults', 'deviceHealth');
    await new Promise((r) => setImmediate(r));
    expect(a).toHaveLength(2);
    expect(b).toHaveLength(1);
    expect(w.failures).toBe(2);
  });

  it('a module write that fails is counted in fleetgw_store_write_failures_total by owner, not lost', async () => {
    const metrics = new GatewayMetrics({
      telemetry: () => { throw new Error('not scraped here'); },
      boundReasons: [],
      robotsOnline: () => 0,
      commandsPending: () => 0,
      stream: () => ({ sockets: 0, droppedSamples: 0 }),
      schedulesArmed: () => 0,
      readiness: () => ({}),
      alertsUnresolved: () => 0,
      storeUp: () => true,
    });
    store.writes.onFailure((f) => metrics.storeWriteFailed(f.owner));
    // The device-health database refusing the write (a full or failing disk).
    const failing = { ...store, deviceHealth: { put: () => Promise.reject(new Error('MDB_MAP_FULL: environment mapsize limit reached')) } } as unknown as Store;
    saveDeviceHealth(failing, { robotId: 'r1', reportedAtMs: 1, robotTsMs: 0, devices: [] });
    await new Promise((r) => setImmediate(r));
    const text = await metrics.registry.getSingleMetricAsString('fleetgw_store_write_failures_total');
    expect(text).toContain('fleetgw_store_write_failures_total{owner="faults"} 1');
  });
});
