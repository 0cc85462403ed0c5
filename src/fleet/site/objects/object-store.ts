/**
 * Tracked objects in LMDB: the `objects` db by id, and in `index`:
 *   `objectsByFleet/<fleet>/<firstSeenMs 16 hex>/<object>`  list order (newest first), never rewritten
 *   `objectsByTrack/<robot>/<track id, URI-encoded>/<object>` a robot's track bound to its object
 *   `objectExpiry/<expiresAtMs 16 hex>/<object>`             robot objects, for the expiry sweep
 * This module is the only one to build these keys. Writers call the `…Sync` functions inside a
 * write transaction.
 */
import { firstIndexed, keyPrefix, lastSegment, prefixRange, sortableNumber } from '../../../store/keys.js';
import { BY_FLEET, EXPIRY, expiryKey, fleetKey, trackPrefix } from './keys.js';
import { keysetOver, type Keyset } from '../../../store/keyset.js';
import type { Store } from '../../../store/lmdb.js';
import type { ObjectRecord, ObjectSource } from './records.js';

/** An object of `fleetId`, or undefined (also when it belongs to another fleet). */
export function getObject(store: Store, fleetId: string, objectId: string): ObjectRecord | undefined {
  const o = store.objects.get(objectId);
  return o !== undefined && o.fleetId === fleetId ? o : undefined;
}

/** The object a robot's track is bound to, if any. */
export function objectOfTrack(store: Store, robotId: string, trackId: string): string | undefined {
  return firstIndexed(store, trackPrefix(robotId, trackId).slice(0, -1));
}

/** Filters of the object list (exact matches; all optional). */
export interface ObjectFilters {
  objectClass?: string;
  source?: ObjectSource;
  /** Only objects last reported by this robot. */
  robotId?: string;
}

/**
 * The fleet's objects, newest first (by first sighting, then id), as a keyset: what
 * `GET …/objects` and the Agent read tools page. Filters are applied while reading.
 */
export function objectsOf(store: Store, fleetId: string, f: ObjectFilters = {}): Keyset<ObjectRecord> {
  return keysetOver(store.index, { prefix: keyPrefix(BY_FLEET, fleetId), reverse: true }, (key) => {
    const o = store.objects.get(lastSegment(key));
    if (!o || o.fleetId !== fleetId) return undefined;
    if (f.objectClass !== undefined && o.objectClass !== f.objectClass) return undefined;
    if (f.source !== undefined && o.source !== f.source) return undefined;
    if (f.robotId !== undefined && o.lastReportedBy?.robotId !== f.robotId) return undefined;
    return o;
  });
}

/** How many objects the fleet holds (counted by key). */
export function countObjects(store: Store, fleetId: string): number {
  return store.index.getKeysCount(prefixRange(keyPrefix(BY_FLEET, fleetId)));
}

/** Every stored object (start-up load of the tracker's in-memory match grid). */
export function* allObjects(store: Store): Iterable<ObjectRecord> {
  for (const { value } of store.objects.getRange({})) yield value;
}

/**
 * Inside a write transaction: stores `next` (a new record when `prev` is undefined), moving its
 * expiry key and binding `bindTrack` (robot, track) to it.
 */
export function putObjectSync(store: Store, prev: ObjectRecord | undefined, next: ObjectRecord, bindTrack?: { robotId: string; trackId: string }): void {
  store.objects.putSync(next.objectId, next);
  if (prev === undefined) store.index.putSync(fleetKey(next), true);
  if (prev?.expiresAtMs != null && prev.expiresAtMs !== next.expiresAtMs) store.index.removeSync(expiryKey(prev.expiresAtMs, prev.objectId));
  if (next.expiresAtMs !== null && prev?.expiresAtMs !== next.expiresAtMs) store.index.putSync(expiryKey(next.expiresAtMs, next.objectId), true);
  if (bindTrack !== undefined && bindTrack.trackId !== '') {
    const prefix = trackPrefix(bindTrack.robotId, bindTrack.trackId);
    // One object per track: an older binding of the same track (an object since expired or deleted) goes.
    for (const key of store.index.getKeys(prefixRange(prefix))) if (!key.endsWith(`/${next.objectId}`)) store.index.removeSync(key);
    store.index.putSync(`${prefix}${next.objectId}`, true);
  }
}

/**
 * Inside a write transaction: removes an object with its index keys. `tracks` are the
 * (robot, track) bindings the caller knows of (the tracker keeps them); a binding left behind points at
 * a missing record and is ignored and replaced on the next sighting.
 */
export function removeObjectSync(store: Store, o: ObjectRecord, tracks: readonly { robotId: string; trackId: string }[] = []): void {
  store.objects.removeSync(o.objectId);
  store.index.removeSync(fleetKey(o));
  if (o.expiresAtMs !== null) store.index.removeSync(expiryKey(o.expiresAtMs, o.objectId));
  for (const t of tracks) unbindTrackSync(store, t, o.objectId);
}

/** Inside a write transaction: removes one (robot, track) binding of an object. */
export function unbindTrackSync(store: Store, t: { robotId: string; trackId: string }, objectId: string): void {
  store.index.removeSync(`${trackPrefix(t.robotId, t.trackId)}${objectId}`);
}

/** Expiry keys at or before `nowMs` with their object ids, oldest first, at most `limit`. */
export function expiredObjects(store: Store, nowMs: number, limit: number): { key: string; objectId: string }[] {
  const out: { key: string; objectId: string }[] = [];
  const prefix = keyPrefix(EXPIRY);
  for (const key of store.index.getKeys({ start: prefix, end: `${prefix}${sortableNumber(nowMs + 1)}`, limit })) out.push({ key, objectId: lastSegment(key) });
  return out;
}

/** Inside a write transaction: drops an expiry key whose object is gone or expires later. */
export function dropExpiryKeySync(store: Store, key: string): void {
  store.index.removeSync(key);
}
