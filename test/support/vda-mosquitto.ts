/**
 * A private mosquitto set up for a gateway's VDA 5050 robots the way docs/vda5050.md documents it: a
 * password file with master control's user and each robot (user name = robot id, password = robot
 * token) and the ACL `fleetgw admin vda5050-acl` writes (master control on every topic of the
 * interface; each robot on its own topics only), plus the `fleetgw serve` arguments that point the
 * gateway's link at it.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { fleetgw } from './cli.js';
import { startMosquitto, type MosquittoTls, type RunningMosquitto } from './mosquitto.js';

export interface MosquittoForGateway extends RunningMosquitto {
  /** Arguments for `fleetgw serve`: the external broker and master control's login. */
  readonly serveArgs: string[];
}

export interface BrokerRobot {
  robotId: string;
  robotToken: string;
  manufacturer: string;
  serialNumber: string;
}

const MASTER = 'fleetgw-master';

/**
 * An ACL in the documented form for robots that are not in a data dir (the simulator's own test);
 * a gateway's robots get theirs from `fleetgw admin vda5050-acl` ({@link startMosquittoFor}).
 */
export function mosquittoAcl(robots: BrokerRobot[], interfaceName = 'uagv'): string {
  const root = `${interfaceName}/v2`;
  const lines = [`user ${MASTER}`, `topic readwrite ${root}/#`, ''];
  for (const r of robots) {
    const base = `${root}/${r.manufacturer}/${r.serialNumber}`;
    lines.push(`user ${r.robotId}`);
    for (const t of ['connection', 'state', 'visualization', 'factsheet']) lines.push(`topic write ${base}/${t}`);
    for (const t of ['order', 'instantActions']) lines.push(`topic read ${base}/${t}`);
    lines.push('');
  }
  return lines.join('\n');
}

/**
 * Starts mosquitto for the robots of `dataDir`: the ACL is what `fleetgw admin vda5050-acl` writes
 * (docs/vda5050.md, "mosquitto"), the password file holds master control and each of `robots`; master
 * control's password goes to a mode-0600 file in `dataDir`. With `tls`, the listener speaks MQTT over
 * TLS and the serve arguments name its CA (`--vda5050-mqtt-ca`).
 */
export async function startMosquittoFor(dataDir: string, robots: BrokerRobot[], tls?: MosquittoTls): Promise<MosquittoForGateway> {
  const masterPassword = randomBytes(24).toString('base64url');
  const passwordFile = join(dataDir, 'vda5050-broker-password');
  writeFileSync(passwordFile, `${masterPassword}\n`, { mode: 0o600 });
  const aclFile = join(dataDir, 'mosquitto.acl');
  const made = fleetgw(['admin', 'vda5050-acl', '--data-dir', dataDir, '--master-username', MASTER, '--out', aclFile]);
  if (made.status !== 0) throw new Error(`fleetgw admin vda5050-acl exited ${String(made.status)}: ${made.stderr}`);
  const broker = await startMosquitto({
    users: [{ username: MASTER, password: masterPassword }, ...robots.map((r) => ({ username: r.robotId, password: r.robotToken }))],
    acl: readFileSync(aclFile, 'utf8'),
  }, tls);
  return Object.assign(broker, {
    serveArgs: [
      '--vda5050-mqtt-url', broker.url, '--vda5050-mqtt-username', MASTER, '--vda5050-mqtt-password-file', passwordFile,
      ...(tls !== undefined ? ['--vda5050-mqtt-ca', tls.caFile] : []),
    ],
  });
}
