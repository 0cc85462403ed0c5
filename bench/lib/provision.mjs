// Creates an org, a fleet and N robots straight in a fresh LMDB data dir (what `fleetgw admin` does,
// without N process starts), for the telemetry benchmarks. Uses the built dist/.
import { openStore } from '../../dist/store/lmdb.js';
import { addRobot, createFleet, createOrg } from '../../dist/store/identity.js';

/** @returns {Promise<{fleetId: string, robots: {robotId: string, robotToken: string}[]}>} */
export async function provisionRobots(dataDir, count) {
  const store = openStore(dataDir);
  try {
    const org = createOrg(store, 'bench');
    const fleet = createFleet(store, org.orgId, 'bench');
    const robots = [];
    for (let i = 0; i < count; i++) {
      const r = addRobot(store, { fleetId: fleet.fleetId, name: `bench-${i}`, capabilities: ['stop'], active: true });
      robots.push({ robotId: r.record.robotId, robotToken: r.robotToken });
    }
    return { fleetId: fleet.fleetId, robots };
  } finally {
    await store.close();
  }
}
