// The shared `index` and `meta` in a module's write scope: a keyed write goes to the real handle only
// for a key under one of the module's claimed prefixes (the key's first '/'-separated part, matched as
// StorageOwnership matches it); any other key, and a write of the whole database, throws naming the
// database, the key's prefix, its owner and the module. Reads are never checked. The claims are the
// real plugins' (gatewayPlugins).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../src/gateway/parts.js';
import { gatewayPlugins } from '../../src/gateway/plugins/index.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { keyOwnerPart, keyPartIn, StorageOwnership, type StorageClaim } from '../../src/store/ownership.js';
import { ForeignKeyWriteError, ForeignWriteError, writeScope } from '../../src/store/write-scope.js';

let dir: string;
let store: Store;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'fleetgw-prefix-scope-'));
  store = openStore(dir);
});

afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const plugins = gatewayPlugins({ opts: {} } as unknown as GatewayContext);
const ownership = new StorageOwnership();
for (const p of plugins) ownership.claim(p.name, p.storage);
const claimOf = (name: string): StorageClaim => plugins.find((p) => p.name === name)!.storage;

/** `name`'s write scope, by the real plugins' claims. */
const scopeOf = (name: string): Store => writeScope(store, name, claimOf(name), ownership);

/** What `write` did: 'written', or the refusal's fields. */
function attempt(write: () => unknown): string {
  try {
    write();
    return 'written';
  } catch (e) {
    if (e instanceof ForeignKeyWriteError) return `refused ${e.db} ${e.prefix ?? '-'} ${e.owner ?? '-'} ${e.module}`;
    return `threw ${String(e)}`;
  }
}

describe('a module\'s own prefixes of a shared database', () => {
  it('are written through the real handle, by every keyed write method', async () => {
    const commands = scopeOf('commands');
    commands.meta.putSync('commandSeq/r1', 7);
    await commands.meta.put('commandSeq/r2', 8);
    expect(store.meta.get('commandSeq/r1')).toBe(7);
    expect(store.meta.get('commandSeq/r2')).toBe(8);
    commands.meta.removeSync('commandSeq/r1');
    await commands.meta.remove('commandSeq/r2');
    expect(store.meta.get('commandSeq/r1')).toBeUndefined();
    expect(store.meta.get('commandSeq/r2')).toBeUndefined();

    const missions = scopeOf('missions');
    missions.index.putSync('runsByFleet/f1/0000/run1', true);
    await missions.index.ifNoExists('activeRuns/run1', () => store.index.putSync('activeRuns/run1', true));
    expect(store.index.get('runsByFleet/f1/0000/run1')).toBe(true);
    expect(store.index.get('activeRuns/run1')).toBe(true);
  });

  it('match a key exactly as StorageOwnership does: by its whole first part, a key without \'/\' being its own part', () => {
    const events = scopeOf('events');
    expect(attempt(() => events.meta.putSync('eventSeq', 1))).toBe('written');
    expect(attempt(() => events.meta.putSync('eventSeq/x', 1))).toBe('written');
    expect(attempt(() => events.meta.putSync('eventSeqX', 1))).toBe('refused meta eventSeqX - events');
    expect(attempt(() => events.meta.putSync('eventSe/q', 1))).toBe('refused meta eventSe - events');
    expect(attempt(() => events.meta.putSync('/eventSeq', 1))).toBe('refused meta  - events');
    for (const key of ['eventSeq', 'eventSeq/', 'eventSeq/a/b', 'eventSeqX', 'eventSe', 'x/eventSeq', '', '/', 'commandSeq/r']) {
      expect(keyPartIn(['commandSeq', 'eventSeq'], key), key).toBe(['commandSeq', 'eventSeq'].includes(keyOwnerPart(key)));
    }
  });
});

describe('another module\'s prefix of a shared database', () => {
  it('refuses the write naming the database, the prefix, its owner and the module; nothing is written', () => {
    const events = scopeOf('events');
    const err: unknown = (() => {
      try {
        events.meta.putSync('commandSeq/robot-1', 99);
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ForeignKeyWriteError);
    expect(err).toBeInstanceOf(ForeignWriteError);
    expect((err as Error).message).toBe("key prefix 'commandSeq' of LMDB database 'meta' is owned by commands: events may not write it (putSync); call commands's functions instead");
    expect(store.meta.get('commandSeq/robot-1')).toBeUndefined();
  });

  it('refuses every keyed write method, async ones included, before anything is queued', () => {
    const alerts = scopeOf('alerts');
    const noop = (): void => {};
    expect([
      attempt(() => alerts.index.put('runsByFleet/f1/x', true)),
      attempt(() => alerts.index.putSync('robotsByFleet/f1/r1', true)),
      attempt(() => alerts.index.remove('faultsByFleet/f1/x')),
      attempt(() => alerts.index.removeSync('sessionsByUser/u1/secret-session-id')),
      attempt(() => alerts.index.ifNoExists('idemExpiry/x', noop)),
      attempt(() => alerts.index.ifVersion('objectsByFleet/x', 1, noop)),
      attempt(() => alerts.meta.putSync('eventSeq', 1)),
    ]).toEqual([
      'refused index runsByFleet missions alerts',
      'refused index robotsByFleet registry alerts',
      'refused index faultsByFleet faults alerts',
      'refused index sessionsByUser auth alerts',
      'refused index idemExpiry idempotency alerts',
      'refused index objectsByFleet objects alerts',
      'refused meta eventSeq events alerts',
    ]);
  });

  it('names the prefix only, never the rest of the key (session ids are filed under it)', () => {
    const alerts = scopeOf('alerts');
    let message = '';
    try {
      alerts.index.putSync('sessionsByUser/u1/secret-session-id', true);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toContain("'sessionsByUser'");
    expect(message).not.toContain('secret-session-id');
  });
});

describe('a prefix nobody claims, or the whole shared database', () => {
  it('refuses an unclaimed prefix, naming it and saying no module claims it', () => {
    const catalog = scopeOf('catalog');
    expect(attempt(() => catalog.index.putSync('templatesByColour/blue/m1', true))).toBe('refused index templatesByColour - catalog');
    expect(() => catalog.index.putSync('templatesByColour/blue/m1', true)).toThrow(
      "key prefix 'templatesByColour' of LMDB database 'index' is claimed by no module: catalog may not write it (putSync); claim it in the owning plugin's storage.prefixes",
    );
    expect(store.index.get('templatesByColour/blue/m1')).toBeUndefined();
  });

  it('refuses a plugin without prefixes any key, and anyone a clear or drop of the whole database', () => {
    const telemetry = scopeOf('telemetry');
    expect(attempt(() => telemetry.meta.putSync('anything', 1))).toBe('refused meta anything - telemetry');
    const registry = scopeOf('registry');
    store.index.putSync('robotsByFleet/f1/r1', true);
    expect(attempt(() => registry.index.clearSync())).toBe('refused index - - registry');
    expect(attempt(() => registry.meta.drop())).toBe('refused meta - - registry');
    expect(() => registry.index.clearSync()).toThrow("LMDB database 'index' is shared by key prefix: registry may not write it whole (clearSync)");
    expect(store.index.get('robotsByFleet/f1/r1')).toBe(true);
  });
});

describe('reads of a shared database', () => {
  it('are unchanged: every prefix, whoever owns it, as the real handle reads it', () => {
    store.index.putSync('robotsByFleet/f1/r1', true);
    store.index.putSync('runsByFleet/f1/0000/run1', true);
    store.meta.putSync('commandSeq/r1', 3);
    store.meta.putSync('eventSeq', 12);
    const telemetry = scopeOf('telemetry');
    expect([...telemetry.index.getKeys()]).toEqual([...store.index.getKeys()]);
    expect([...telemetry.index.getRange({ start: 'runsByFleet/', end: 'runsByFleet/\uffff' })].map((e) => e.key)).toEqual(['runsByFleet/f1/0000/run1']);
    expect(telemetry.meta.get('commandSeq/r1')).toBe(3);
    expect(telemetry.meta.get('eventSeq')).toBe(12);
    expect(telemetry.index.doesExist('robotsByFleet/f1/r1')).toBe(true);
    expect(telemetry.meta.getKeysCount()).toBe(2);
    expect(Buffer.from(telemetry.meta.getBinary('eventSeq')!)).toEqual(Buffer.from(store.meta.getBinary('eventSeq')!));
  });
});

describe('writes through the view in a transaction', () => {
  it('commit with the transaction (sync and async), together with the module\'s own databases', async () => {
    const commands = scopeOf('commands');
    store.root.transactionSync(() => {
      commands.meta.putSync('commandSeq/r1', 1);
      commands.outbox.putSync('r1/0000000000000001', 'c1');
    });
    await store.root.transaction(() => {
      commands.meta.putSync('commandSeq/r2', 2);
      void commands.meta.put('commandSeq/r3', 3);
    });
    expect(store.meta.get('commandSeq/r1')).toBe(1);
    expect(store.outbox.get('r1/0000000000000001')).toBe('c1');
    expect(store.meta.get('commandSeq/r2')).toBe(2);
    expect(store.meta.get('commandSeq/r3')).toBe(3);
  });

  it('a refused write aborts a synchronous transaction: its own writes before it are not committed', () => {
    const commands = scopeOf('commands');
    expect(() =>
      store.root.transactionSync(() => {
        commands.meta.putSync('commandSeq/r1', 1);
        commands.meta.putSync('eventSeq', 5);
      }),
    ).toThrow(ForeignKeyWriteError);
    expect(store.meta.get('commandSeq/r1')).toBeUndefined();
    expect(store.meta.get('eventSeq')).toBeUndefined();
  });
});
