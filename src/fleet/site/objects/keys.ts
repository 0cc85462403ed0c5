/** LMDB key shapes of the tracked objects' `index` entries (layout in object-store.ts). Private to this module. */
import { keyPrefix, sortableNumber } from '../../../store/keys.js';
import type { ObjectRecord } from './records.js';

export const BY_FLEET = 'objectsByFleet';
const BY_TRACK = 'objectsByTrack';
export const EXPIRY = 'objectExpiry';

/** `objectsByFleet/<fleet>/<firstSeenMs>/<object>`: list order. */
export const fleetKey = (o: ObjectRecord): string => `${keyPrefix(BY_FLEET, o.fleetId)}${sortableNumber(o.firstSeenMs)}/${o.objectId}`;
/** `objectsByTrack/<robot>/<track id>/`: a robot's track bound to its object. */
export const trackPrefix = (robotId: string, trackId: string): string => keyPrefix(BY_TRACK, robotId, encodeURIComponent(trackId));
/** `objectExpiry/<expiresAtMs>/<object>`: the expiry sweep's order. */
export const expiryKey = (atMs: number, objectId: string): string => `${keyPrefix(EXPIRY)}${sortableNumber(atMs)}/${objectId}`;
