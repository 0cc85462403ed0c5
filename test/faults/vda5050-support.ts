/**
 * Fault-test depots of VDA 5050 robots: `fleetgw admin init` (org, fleet, key), then the robots and
 * their VDA 5050 identities straight into LMDB (what `fleetgw admin add-robot --vda5050` does,
 * without 100 process starts).
 */
import { makeDataDir } from '../support/gateway.js';
import { openStore } from '../../src/store/lmdb.js';
import { addRobot } from '../../src/store/identity.js';
import type { VdaRobot } from '../support/vda-gateway.js';
import type { Depot } from './support.js';

export interface VdaDepot extends Depot {
  orgId: string;
  fleetId: string;
  apiKey: string;
  /** The robots in registration order (index i: serial `F-000i`). */
  readonly robotList: VdaRobot[];
}

/** A data dir with one fleet of `count` robots bound to VDA 5050 identities `Acme/F-0000` ... */
export async function provisionVda(count: number): Promise<VdaDepot> {
  const d = makeDataDir('fleetgw-faults-vda-');
  const store = openStore(d.dataDir);
  const list: VdaRobot[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const serialNumber = `F-${String(i).padStart(4, '0')}`;
      const r = addRobot(store, { fleetId: d.fleetId, name: `agv-${i}`, capabilities: ['stop'], active: true, vda5050: { manufacturer: 'Acme', serialNumber } });
      list.push({ robotId: r.record.robotId, robotToken: r.robotToken, manufacturer: 'Acme', serialNumber });
    }
  } finally {
    await store.close();
  }
  return { dataDir: d.dataDir, robotsFile: '', robots: count, orgId: d.orgId, fleetId: d.fleetId, apiKey: d.apiKey, robotList: list };
}
