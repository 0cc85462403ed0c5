/**
 * Authenticates a robot stream from its call metadata: `x-robot-id` and `authorization: Bearer <token>`.
 *
 * The robot record is read from LMDB on every connect (no cache), so a robot registered by
 * `fleetgw admin add-robot` in another process can connect at once and a re-minted token takes effect
 * on the next connect. Failures are reported with one reason, never saying which part was wrong.
 */
import type { Metadata } from '@grpc/grpc-js';
import type { Store } from '../store/lmdb.js';
import type { RobotRecord } from '../store/records.js';
import { hashSecret, secretMatches } from '../store/secrets.js';
import { ROBOT_ID_METADATA } from '../protocol/service.js';
import { robotRecord } from '../store/identity-reads.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const BEARER = /^Bearer ([\x21-\x7e]{1,512})$/;
// Compared against when the robot is unknown, so an unknown id costs the same hash + compare as a
// wrong token and response timing does not reveal which robot ids exist.
const DECOY_HASH = hashSecret('fleetgw-decoy-robot-token');

function single(md: Metadata, key: string): string | null {
  const values = md.get(key);
  if (values.length !== 1) return null;
  const v = values[0];
  return typeof v === 'string' ? v : null;
}

/** The robot's record when the metadata carries a registered robot id and its token; otherwise null. */
export function authenticateRobot(store: Store, md: Metadata): RobotRecord | null {
  const robotId = single(md, ROBOT_ID_METADATA);
  const auth = single(md, 'authorization');
  const token = auth === null ? null : BEARER.exec(auth)?.[1];
  if (robotId === null || token === undefined || token === null) return null;
  const record = UUID.test(robotId) ? robotRecord(store, robotId) : undefined;
  const ok = secretMatches(token, record?.tokenHash ?? DECOY_HASH);
  return ok && record !== undefined ? record : null;
}
