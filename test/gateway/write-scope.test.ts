// The runtime write guard: every plugin reaches the store through its write scope, so a write to a
// database another module owns throws where it is made, naming the database, its owner and the plugin,
// while the plugin's own databases (and its own key prefixes of the shared ones) stay writable and
// every database stays readable. Composed with the real store and registry plugins.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_TUNABLES } from '../../src/config.js';
import { PluginStartError, startPlugins, type RunningPlugins } from '../../src/gateway/compose.js';
import { Parts, type GatewayContext } from '../../src/gateway/parts.js';
import type { GatewayPlugin } from '../../src/gateway/plugin.js';
import { registryPlugin } from '../../src/gateway/plugins/registry.js';
import { storePlugin } from '../../src/gateway/plugins/store.js';
import { withWriteScopes, type PluginFactory } from '../../src/gateway/plugins/index.js';
import { DeclaredRoutes } from '../../src/gateway/route-groups.js';
import { createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import type { StorageClaim } from '../../src/store/ownership.js';
import { StorageOwnership } from '../../src/store/ownership.js';
import { ForeignKeyWriteError, ForeignWriteError, writeScope } from '../../src/store/write-scope.js';

const quiet = pino({ enabled: false });

let dir: string;
let store: Store;
let running: RunningPlugins | undefined;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-write-scope-'));
  store = openStore(dir);
  running = undefined;
});

afterEach(async () => {
  await running?.stop();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

function context(): GatewayContext {
  return {
    opts: { dataDir: dir, host: '127.0.0.1', httpPort: 0, grpcPort: 0, clickhouseUrl: null, tls: 'insecure', overrides: { store } },
    tunables: DEFAULT_TUNABLES,
    parts: new Parts(),
    routes: new DeclaredRoutes(),
    logFor: () => quiet,
    tls: { files: null, grpc: null, pem: null },
  };
}

/** A plugin that runs `body` over the store it is handed at start. */
const plugin =
  (name: string, storage: StorageClaim, body: (store: Store) => void): PluginFactory =>
  (ctx): GatewayPlugin => ({
    name,
    dependsOn: ['registry'],
    storage,
    start: () => {
      body(ctx.parts.get('store'));
      return Promise.resolve();
    },
    routes: () => [],
    quiesce: () => Promise.resolve(),
    stop: () => Promise.resolve(),
  });

const compose = (...extra: PluginFactory[]): Promise<RunningPlugins> =>
  startPlugins(withWriteScopes(context(), [storePlugin, registryPlugin, ...extra]), { log: quiet, ownership: new StorageOwnership(), routes: new DeclaredRoutes(), beforeStart: () => {} });

describe('a plugin writing another module\'s database', () => {
  it('is refused at start, naming the database, its owner and the plugin; nothing is written', async () => {
    const org = createOrg(store, 'Acme');
    const fleet = createFleet(store, org.orgId, 'Line 1');
    const rogue = plugin('rogue', { databases: ['floorPlans'], prefixes: {} }, (s) => s.fleets.putSync(fleet.fleetId, { ...fleet, name: 'renamed' }));
    const err: unknown = await compose(rogue).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PluginStartError);
    expect((err as PluginStartError).step).toBe('start.rogue');
    const cause = (err as Error).cause;
    expect(cause).toBeInstanceOf(ForeignWriteError);
    expect((cause as Error).message).toBe("LMDB database 'fleets' is owned by registry: rogue may not write it (putSync); call registry's functions instead");
    expect(store.fleets.get(fleet.fleetId)?.name).toBe('Line 1');
  });

  it('is refused at start for a key prefix of a shared database another plugin claims, naming the prefix and its owner', async () => {
    const org = createOrg(store, 'Acme');
    const fleet = createFleet(store, org.orgId, 'Line 1');
    const rogue = plugin('rogue', { databases: ['floorPlans'], prefixes: { index: ['plansByFleet'] } }, (s) => {
      s.index.putSync(`plansByFleet/${fleet.fleetId}/p1`, true);
      s.index.putSync(`robotsByFleet/${fleet.fleetId}/ghost`, true);
    });
    const err: unknown = await compose(rogue).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PluginStartError);
    expect((err as PluginStartError).step).toBe('start.rogue');
    const cause = (err as Error).cause;
    expect(cause).toBeInstanceOf(ForeignKeyWriteError);
    expect((cause as Error).message).toBe("key prefix 'robotsByFleet' of LMDB database 'index' is owned by registry: rogue may not write it (putSync); call registry's functions instead");
    expect(store.index.get(`robotsByFleet/${fleet.fleetId}/ghost`)).toBeUndefined();
  });

  it('refuses every write method, async ones included, and a plugin without storage too', async () => {
    const seen: string[] = [];
    const tryAll = (s: Store): void => {
      const attempts: [string, () => unknown][] = [
        ['put', () => s.robots.put('r', {} as never)],
        ['remove', () => s.robots.remove('r')],
        ['removeSync', () => s.snapshots.removeSync('r')],
        ['ifNoExists', () => s.commands.ifNoExists('c', () => {})],
        ['clearSync', () => s.apikeys.clearSync()],
        ['drop', () => s.runs.drop()],
      ];
      for (const [method, write] of attempts) {
        try {
          write();
          seen.push(`${method}: written`);
        } catch (e) {
          seen.push(e instanceof ForeignWriteError ? `${method}: ${e.db} ${e.owner ?? '-'} ${e.module}` : `${method}: ${String(e)}`);
        }
      }
    };
    running = await compose(plugin('nothing-owned', { databases: [], prefixes: {} }, tryAll));
    expect(seen).toEqual([
      'put: robots registry nothing-owned',
      'remove: robots registry nothing-owned',
      'removeSync: snapshots - nothing-owned',
      'ifNoExists: commands - nothing-owned',
      'clearSync: apikeys - nothing-owned',
      'drop: runs - nothing-owned',
    ]);
  });

  it('writes its own databases and its own prefixes of the shared ones, and reads every database', async () => {
    const org = createOrg(store, 'Acme');
    let read: string | undefined;
    running = await compose(
      plugin('plans', { databases: ['floorPlans'], prefixes: { meta: ['plansTest'] } }, (s) => {
        s.floorPlans.putSync('p1', { ok: true } as never);
        s.meta.putSync('plansTest/x', 1);
        read = s.orgs.get(org.orgId)?.name;
      }),
    );
    expect(store.floorPlans.get('p1')).toEqual({ ok: true });
    expect(store.meta.get('plansTest/x')).toBe(1);
    expect(read).toBe('Acme');
  });
});

describe('writeScope', () => {
  it('hands the owned databases over as the very handles, so the owner\'s writes cost nothing more', () => {
    const view = writeScope(store, 'commands', { databases: ['commands', 'outbox', 'audit'], prefixes: { meta: ['commandSeq'] } }, new StorageOwnership());
    expect(view.commands).toBe(store.commands);
    expect(view.outbox).toBe(store.outbox);
    expect(view.root).toBe(store.root);
    expect(view.records).toBe(store.records);
    expect(view.robots).not.toBe(store.robots);
  });

  it('reads a foreign database as the real handle does (values, ranges, keys, raw bytes)', () => {
    const org = createOrg(store, 'Acme');
    createFleet(store, org.orgId, 'B');
    const view = writeScope(store, 'usage', { databases: ['robotUsage'], prefixes: {} }, { ownerOf: () => 'registry', ownerOfKey: () => 'registry' });
    expect(view.orgs.get(org.orgId)).toEqual(store.orgs.get(org.orgId));
    expect([...view.fleets.getKeys()]).toEqual([...store.fleets.getKeys()]);
    expect([...view.orgs.getRange({ limit: 1 })].map((e) => e.key)).toEqual([org.orgId]);
    expect(Buffer.from(view.orgs.getBinary(org.orgId)!)).toEqual(Buffer.from(store.orgs.getBinary(org.orgId)!));
    expect(view.orgs.doesExist(org.orgId)).toBe(true);
  });
});
