/** Temp LMDB stores with an org, a fleet and robots, for the command tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import type { FleetRecord, OrgRecord, RobotRecord } from '../../src/store/records.js';

export interface Fixture {
  dir: string;
  store: Store;
  org: OrgRecord;
  fleet: FleetRecord;
  robots: { record: RobotRecord; robotToken: string }[];
  /** Closes the store and deletes the directory. */
  cleanup(): Promise<void>;
}

/** A fresh data dir with one org, one fleet and `robotCount` active robots. */
export function makeFixture(robotCount = 2): Fixture {
  const dir = mkdtempSync(join(os.tmpdir(), 'fleetgw-commands-'));
  const store = openStore(dir);
  const org = createOrg(store, 'org');
  const fleet = createFleet(store, org.orgId, 'fleet');
  const robots = Array.from({ length: robotCount }, (_, i) => addRobot(store, { fleetId: fleet.fleetId, name: `r${i}`, capabilities: [], active: true }));
  let cleaned = false;
  const fx: Fixture = {
    dir,
    store,
    org,
    fleet,
    robots,
    cleanup: async () => {
      if (cleaned) return;
      cleaned = true;
      await fx.store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return fx;
}

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` every 5 ms until true or `ms` elapse. */
export async function until(cond: () => boolean, ms = 2000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(5);
  }
}
