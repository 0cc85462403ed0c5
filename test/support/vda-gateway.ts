/**
 * `fleetgw serve` with its VDA 5050 link for tests: the embedded broker or an external one (a private
 * mosquitto with the ACL docs/vda5050.md documents), robots registered with a VDA 5050 identity, and
 * virtual AGVs logged in with their robot tokens (test/support/vda-agv.ts).
 */
import type { ReadyLine } from './gateway.js';
import { adminJson } from './cli.js';

/** `fleetgw serve` arguments that start the embedded broker on a free loopback port. */
export const EMBEDDED_BROKER_ARGS = ['--vda5050-port', '0'];

/** The ready line of a gateway serving VDA 5050: the broker robots connect to. */
export type VdaReadyLine = ReadyLine & { vda5050?: { url: string } };

/** The broker URL robots of this gateway connect to (from its ready line). */
export function brokerUrlOf(ready: ReadyLine): string {
  const url = (ready as VdaReadyLine).vda5050?.url;
  if (typeof url !== 'string') throw new Error(`the ready line names no VDA 5050 broker: ${JSON.stringify(ready)}`);
  return url;
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
