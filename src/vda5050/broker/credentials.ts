/**
 * Who may connect to the embedded broker. A robot: MQTT username = its robot id, password = its
 * robot token (verified against the registry's token digest in constant time, read on every
 * connect, so a robot registered or bound at run time connects at once). Master control: a fixed
 * username and a random password made at each gateway start, held only in memory.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { Store } from '../../store/lmdb.js';
import type { RobotRecord } from '../../store/records.js';
import { hashSecret, secretMatches } from '../../store/secrets.js';
import { cachedRobot } from '../../store/identity-reads.js';

/** Master control's MQTT username on the embedded broker (no robot id looks like it). */
export const MASTER_USERNAME = 'fleetgw-master-control';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
// Compared against when the robot is unknown or unbound, so timing does not tell which ids exist.
const DECOY_HASH = hashSecret('fleetgw-decoy-vda5050-token');

/** Master control's credential for this run of the gateway. */
export class MasterCredential {
  readonly password = randomBytes(32).toString('base64url');
  private readonly digest = hashSecret(this.password);

  /** Constant-time check of a presented password. */
  matches(presented: Buffer | undefined): boolean {
    const d = hashSecret(presented === undefined ? '' : presented.toString('utf8'));
    return timingSafeEqual(d, this.digest);
  }

  /** The password never appears in a log line or an inspected object. */
  toJSON(): string {
    return '[redacted]';
  }
}

/** Whether a username has the shape of a robot id (the UUID `add-robot` prints). */
export function isRobotIdShaped(username: string): boolean {
  return UUID.test(username);
}

/** The robot a username/password pair authenticates, when it has a VDA 5050 identity; else null. */
export function authenticateVdaRobot(store: Store, username: string | undefined, password: Buffer | undefined): Readonly<RobotRecord> | null {
  const record = username !== undefined && isRobotIdShaped(username) ? cachedRobot(store, username) : undefined;
  const ok = secretMatches(password === undefined ? '' : password.toString('utf8'), record?.tokenHash ?? DECOY_HASH);
  return ok && record?.vda5050 !== undefined ? record : null;
}
