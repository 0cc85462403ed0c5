// Master control looks up the robot of every inbound message: the answers are remembered, but a
// binding written since (by this process or `fleetgw admin` in another) counts at the next lookup.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { addRobot, createFleet, createOrg, replaceRobotSync } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { IDENTITY_CACHE_MAX, RegistryVda5050Identities } from '../../src/vda5050/identity/identities.js';

describe('VDA 5050 identity lookups', () => {
  const open: { store: Store; dir: string }[] = [];
  afterEach(async () => {
    for (const { store, dir } of open.splice(0)) {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  function setup() {
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-vda-ids-'));
    const store = openStore(dir);
    open.push({ store, dir });
    const org = createOrg(store, 'o');
    const fleet = createFleet(store, org.orgId, 'f');
    return { store, fleet, identities: new RegistryVda5050Identities(store) };
  }

  it('reads the index once per identity while no binding changes', () => {
    const { store, fleet, identities } = setup();
    const a = addRobot(store, { fleetId: fleet.fleetId, name: 'a', capabilities: [], active: true, vda5050: { manufacturer: 'Acme', serialNumber: 'A1' } }).record;
    const ranges = vi.spyOn(store.index, 'getKeys');
    for (let i = 0; i < 5; i++) expect(identities.robotOf('Acme', 'A1')?.robotId).toBe(a.robotId);
    for (let i = 0; i < 5; i++) expect(identities.robotOf('Acme', 'Z9')).toBeUndefined();
    expect(ranges).toHaveBeenCalledTimes(2);
  });

  it('answers with a binding made, changed or removed since, at the next lookup', () => {
    const { store, fleet, identities } = setup();
    expect(identities.robotOf('Acme', 'B1')).toBeUndefined();
    const b = addRobot(store, { fleetId: fleet.fleetId, name: 'b', capabilities: [], active: true, vda5050: { manufacturer: 'Acme', serialNumber: 'B1' } }).record;
    expect(identities.robotOf('Acme', 'B1')?.robotId).toBe(b.robotId);
    replaceRobotSync(store, b, { ...b, vda5050: { manufacturer: 'Acme', serialNumber: 'B2' } });
    expect(identities.robotOf('Acme', 'B1')).toBeUndefined();
    expect(identities.robotOf('Acme', 'B2')?.robotId).toBe(b.robotId);
  });

  it('forgets everything when full rather than growing', () => {
    const { store, identities } = setup();
    const ranges = vi.spyOn(store.index, 'getKeys');
    for (let i = 0; i <= IDENTITY_CACHE_MAX; i++) identities.robotOf('Nobody', `S${i}`);
    expect(identities.robotOf('Nobody', 'S0')).toBeUndefined();
    // S0 was forgotten with the rest when the cache filled: read again.
    expect(ranges).toHaveBeenCalledTimes(IDENTITY_CACHE_MAX + 2);
  });
});
