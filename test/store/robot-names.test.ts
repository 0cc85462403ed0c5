// The robot name index behind `resolve` (src/store/robot-names.ts) on a real temp LMDB: names match
// ignoring case, only in their fleet, names with '/' or longer than the key bound never yield a wrong
// robot, and stores from before the index are back-filled once.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { keyPrefix, prefixRange } from '../../src/store/keys.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { ensureRobotNameIndex, MAX_NAME_KEY, robotsNamed } from '../../src/store/robot-names.js';

const open: { store: Store; dir: string }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.store.close();
    rmSync(o.dir, { recursive: true, force: true });
  }
});

function temp(): { store: Store; fleetId: string; otherFleetId: string } {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-names-'));
  const store = openStore(dir);
  open.push({ store, dir });
  const org = createOrg(store, 'o');
  return { store, fleetId: createFleet(store, org.orgId, 'a').fleetId, otherFleetId: createFleet(store, org.orgId, 'b').fleetId };
}

const add = (store: Store, fleetId: string, name: string) => addRobot(store, { fleetId, name, capabilities: [], active: true }).record.robotId;
const ids = (store: Store, fleetId: string, name: string) => robotsNamed(store, fleetId, name).map((r) => r.robotId).sort();

describe('robot name index', () => {
  it('finds robots by name ignoring case, in their own fleet only', () => {
    const { store, fleetId, otherFleetId } = temp();
    const a = add(store, fleetId, 'Mower A');
    const b = add(store, fleetId, 'mower a');
    add(store, otherFleetId, 'Mower A');
    add(store, fleetId, 'Mower AB');
    expect(ids(store, fleetId, 'MOWER A')).toEqual([a, b].sort());
    expect(ids(store, fleetId, 'nobody')).toEqual([]);
  });

  it('never returns a robot whose name only shares a key prefix (a "/" in a name, a name past the key bound)', () => {
    const { store, fleetId } = temp();
    const slash = add(store, fleetId, 'a/b');
    const long1 = add(store, fleetId, `${'x'.repeat(MAX_NAME_KEY)}1`);
    const long2 = add(store, fleetId, `${'x'.repeat(MAX_NAME_KEY)}2`);
    expect(ids(store, fleetId, 'a')).toEqual([]);
    expect(ids(store, fleetId, 'A/B')).toEqual([slash]);
    expect(ids(store, fleetId, `${'X'.repeat(MAX_NAME_KEY)}2`)).toEqual([long2]);
    expect(ids(store, fleetId, `${'x'.repeat(MAX_NAME_KEY)}1`)).toEqual([long1]);
  });

  it('back-fills robots stored before the index, once', async () => {
    const { store, fleetId } = temp();
    const id = add(store, fleetId, 'Old');
    // As a store written before the index: no name keys.
    await store.root.transaction(() => {
      for (const key of store.index.getKeys(prefixRange(keyPrefix('robotsByName')))) store.index.removeSync(key);
    });
    expect(ids(store, fleetId, 'old')).toEqual([]);
    await ensureRobotNameIndex(store);
    expect(ids(store, fleetId, 'old')).toEqual([id]);
    await ensureRobotNameIndex(store); // idempotent
    expect(ids(store, fleetId, 'OLD')).toEqual([id]);
  });
});
