// Ownership of the LMDB environment: one owner per named database and per key prefix of the shared
// ones, and every database of the gateway owned by exactly one of its plugins.
import { describe, expect, it } from 'vitest';
import type { GatewayContext } from '../../src/gateway/parts.js';
import { gatewayPlugins } from '../../src/gateway/plugins/index.js';
import { DATABASE_NAMES } from '../../src/store/lmdb.js';
import { StorageOwnership } from '../../src/store/ownership.js';

describe('StorageOwnership', () => {
  it('refuses a database or a prefix claimed twice, and a shared database claimed whole', () => {
    const o = new StorageOwnership();
    o.claim('runs', { databases: ['runs'], prefixes: { index: ['runsByFleet'] } });
    expect(() => o.claim('scheduling', { databases: ['runs'], prefixes: {} })).toThrow("LMDB database 'runs' is claimed by both runs and scheduling");
    expect(() => o.claim('scheduling', { databases: [], prefixes: { index: ['runsByFleet'] } })).toThrow("key prefix 'runsByFleet' of LMDB database 'index' is claimed by both runs and scheduling");
    expect(() => o.claim('x', { databases: ['index'], prefixes: {} })).toThrow("x claims the shared database 'index' whole");
    expect(() => o.claim('x', { databases: [], prefixes: { meta: ['a/b'] } })).toThrow('one non-empty key part');
    // A refused claim takes nothing.
    expect(o.ownerOf('schedules')).toBeUndefined();
    expect(o.ownerOfKey('index', 'runsByFleet/f1/0000/r1')).toBe('runs');
    expect(o.ownerOfKey('index', 'runsByRobot/x')).toBeUndefined();
  });

  it('the gateway plugins own every database of the environment, each exactly once', () => {
    const o = new StorageOwnership();
    for (const p of gatewayPlugins({ opts: {} } as unknown as GatewayContext)) o.claim(p.name, p.storage);
    expect(o.unclaimed(DATABASE_NAMES)).toEqual([]);
    expect(o.ownerOf('runs')).toBe('missions');
    expect(o.ownerOf('apikeys')).toBe('auth');
    expect(o.ownerOfKey('meta', 'commandSeq/robot-1')).toBe('commands');
    expect(o.ownerOfKey('meta', 'eventSeq')).toBe('events');
  });
});
