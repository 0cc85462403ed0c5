/** LMDB key shapes of the event log (`events` db, `eventSeq` in `meta`). Private to src/events. */
import type { EventRecord } from './record.js';
import { keyPrefix, sortableNumber } from '../store/keys.js';

/** The `meta` key of the log's seq high-water mark. */
export const SEQ_META_KEY = 'eventSeq';

/** `<fleetId>/<correlationId>/` — the key prefix of one timeline. */
export function timelinePrefix(fleetId: string, correlationId: string): string {
  return keyPrefix(fleetId, correlationId);
}

/** `<fleetId>/<correlationId>/<seq>` in the `events` db. */
export function eventKey(e: Pick<EventRecord, 'fleetId' | 'correlationId' | 'seq'>): string {
  return `${timelinePrefix(e.fleetId, e.correlationId)}${sortableNumber(e.seq)}`;
}
