/**
 * `fleetgw serve` with its VDA 5050 link for tests: the embedded broker or an external one (a private
 * mosquitto with the ACL docs/vda5050.md documents), robots registered with a VDA 5050 identity, and
 * virtual AGVs logged in with their robot tokens (test/support/vda-agv.ts).
 */
import { adminJson } from './cli.js';
import { freePort } from './net.js';

/** The embedded broker on a free loopback port: `fleetgw serve` arguments and the URL robots connect to. */
export async function embeddedBroker(): Promise<{ args: string[]; url: string; port: number }> {
  const port = await freePort();
  return { args: ['--vda5050-mqtt-port', String(port)], url: `mqtt://127.0.0.1:${port}`, port };
}

export interface VdaRobot {
  robotId: string;
  robotToken: string;
  manufacturer: string;
  serialNumber: string;
}

/** `fleetgw admin add-robot --vda5050 MANUFACTURER/SERIAL`: a robot bound to its VDA 5050 identity. */
export function addVdaRobot(dataDir: string, fleetId: string, name: string, manufacturer: string, serialNumber: string): VdaRobot {
  const r = adminJson<{ robotId: string; robotToken: string; vda5050: { manufacturer: string; serialNumber: string } }>(
    ['add-robot', '--data-dir', dataDir, '--fleet', fleetId, '--name', name, '--vda5050', `${manufacturer}/${serialNumber}`],
  );
  return { robotId: r.robotId, robotToken: r.robotToken, manufacturer: r.vda5050.manufacturer, serialNumber: r.vda5050.serialNumber };
}
