/**
 * Features (work areas) in LMDB: `features` db by id, `featuresByFleet/<fleet>/<feature>` in `index`.
 * Templates that use a feature are indexed as `templatesByFeature/<feature>/<missionId>`, which is
 * what makes delete refuse (409) while a template uses it — checked inside the delete transaction,
 * so a template created at the same moment cannot slip between check and delete.
 *
 * Every change appends an event on the feature's timeline (correlation id = featureId).
 */
import { randomUUID } from 'node:crypto';
import { ApiError, apiError } from '../../errors/catalog.js';
import type { EventLog } from '../../events/index.js';
import { firstIndexed, indexRange, keyPrefix, lastSegment } from '../../store/keys.js';
import { keysetOver, type Keyset } from '../../store/keyset.js';
import type { Store } from '../../store/lmdb.js';
import type { FleetRecord } from '../../store/records.js';
import { validateGeometry } from './geometry.js';
import { FEATURES_BY_FLEET, featureIndexKey } from './keys.js';
import type { FeatureRecord, Geometry } from './records.js';


function featureEvent(events: EventLog, f: FeatureRecord, atMs: number, kind: string, data: Record<string, unknown> = {}): void {
  events.append({ fleetId: f.fleetId, correlationId: f.featureId, atMs, kind, subject: { type: 'feature', id: f.featureId }, data });
}

/** A feature of `fleetId`, or undefined (also when it belongs to another fleet). */
export function getFeature(store: Store, fleetId: string, featureId: string): FeatureRecord | undefined {
  const f = store.features.get(featureId);
  return f !== undefined && f.fleetId === fleetId ? f : undefined;
}

/**
 * A feature of `fleetId`.
 * @throws ApiError 404 `feature_not_found`
 */
export function requireFeature(store: Store, fleetId: string, featureId: string): FeatureRecord {
  const f = getFeature(store, fleetId, featureId);
  if (f === undefined) throw apiError('feature_not_found', { featureId });
  return f;
}

/** The fleet's features, ordered by id. */
export function listFeatures(store: Store, fleetId: string): FeatureRecord[] {
  const out: FeatureRecord[] = [];
  for (const id of indexRange(store, `${FEATURES_BY_FLEET}/${fleetId}`)) {
    const f = store.features.get(id);
    if (f) out.push(f);
  }
  return out;
}

/**
 * The fleet's features, ordered by id, as a keyset (`GET …/features` pages it); `where` skips the
 * features a list's filters refuse.
 */
export function featuresOf(store: Store, fleetId: string, where?: (f: FeatureRecord) => boolean): Keyset<FeatureRecord> {
  return keysetOver(store.index, { prefix: keyPrefix(FEATURES_BY_FLEET, fleetId) }, (key) => {
    const f = store.features.get(lastSegment(key));
    return f && f.fleetId === fleetId && (where === undefined || where(f)) ? f : undefined;
  });
}

/** True when the feature is locked: the mission dispatcher's gate dispatches no run on a locked feature. */
export function isFeatureLocked(store: Store, featureId: string): boolean {
  return store.features.get(featureId)?.locked === true;
}

/**
 * Creates a feature (geometry validated).
 * @throws ApiError 400 `invalid_geometry`
 */
export async function createFeature(store: Store, events: EventLog, fleet: FleetRecord, input: { name: string; geometry: Geometry }, nowMs: number): Promise<FeatureRecord> {
  validateGeometry(input.geometry);
  const f: FeatureRecord = {
    featureId: randomUUID(),
    orgId: fleet.orgId,
    fleetId: fleet.fleetId,
    name: input.name,
    geometry: input.geometry,
    locked: false,
    lockReason: null,
    holders: [],
    decompositionEpoch: 0,
    createdAtMs: nowMs,
    updatedAtMs: nowMs,
  };
  await store.root.transaction(() => {
    store.features.putSync(f.featureId, f);
    store.index.putSync(featureIndexKey(f.fleetId, f.featureId), true);
    featureEvent(events, f, nowMs, 'feature.created', { name: f.name });
  });
  return f;
}

/**
 * Applies `change` to the stored feature atomically; `change` returns the new record, the same
 * record for no change (nothing is written), or an error to refuse (it must not write).
 */
export async function changeFeature(
  store: Store,
  events: EventLog,
  fleetId: string,
  featureId: string,
  change: (f: FeatureRecord) => FeatureRecord | ApiError,
  event: { kind: string; data?: (f: FeatureRecord) => Record<string, unknown> },
  nowMs: number,
): Promise<FeatureRecord> {
  const out = await store.root.transaction((): FeatureRecord | ApiError => {
    const cur = getFeature(store, fleetId, featureId);
    if (cur === undefined) return apiError('feature_not_found', { featureId });
    const next = change(cur);
    if (next instanceof ApiError) return next;
    if (next === cur) return cur; // no change: nothing written, no event
    const rec = { ...next, updatedAtMs: nowMs };
    store.features.putSync(featureId, rec);
    featureEvent(events, rec, nowMs, event.kind, event.data?.(rec) ?? {});
    return rec;
  });
  if (out instanceof ApiError) throw out;
  return out;
}

/**
 * Edits name and/or geometry.
 * @throws ApiError 404, 400 `invalid_geometry`
 */
export function updateFeature(store: Store, events: EventLog, fleetId: string, featureId: string, input: { name?: string; geometry?: Geometry }, nowMs: number): Promise<FeatureRecord> {
  if (input.geometry !== undefined) validateGeometry(input.geometry);
  return changeFeature(
    store,
    events,
    fleetId,
    featureId,
    (f) => ({ ...f, ...(input.name !== undefined ? { name: input.name } : {}), ...(input.geometry !== undefined ? { geometry: input.geometry } : {}) }),
    { kind: 'feature.updated', data: () => ({ fields: Object.keys(input).filter((k) => k === 'name' || k === 'geometry') }) },
    nowMs,
  );
}

/**
 * Deletes a feature that no template uses.
 * @throws ApiError 404; 409 `feature_in_use`
 */
export async function deleteFeature(store: Store, events: EventLog, fleetId: string, featureId: string, nowMs: number): Promise<void> {
  const err = await store.root.transaction((): ApiError | null => {
    const cur = getFeature(store, fleetId, featureId);
    if (cur === undefined) return apiError('feature_not_found', { featureId });
    const user = firstIndexed(store, `templatesByFeature/${featureId}`);
    if (user !== undefined) return apiError('feature_in_use', { featureId, missionId: user });
    store.features.removeSync(featureId);
    store.index.removeSync(featureIndexKey(fleetId, featureId));
    featureEvent(events, cur, nowMs, 'feature.deleted');
    return null;
  });
  if (err !== null) throw err;
}

/** Locks (or re-locks with a new reason) a feature. */
export function lockFeature(store: Store, events: EventLog, fleetId: string, featureId: string, reason: string | null, nowMs: number): Promise<FeatureRecord> {
  return changeFeature(store, events, fleetId, featureId, (f) => ({ ...f, locked: true, lockReason: reason }), { kind: 'feature.locked', data: (f) => ({ lockReason: f.lockReason }) }, nowMs);
}

/** Unlocks a feature (its lock reason is cleared). */
export function unlockFeature(store: Store, events: EventLog, fleetId: string, featureId: string, nowMs: number): Promise<FeatureRecord> {
  return changeFeature(store, events, fleetId, featureId, (f) => ({ ...f, locked: false, lockReason: null }), { kind: 'feature.unlocked' }, nowMs);
}

/** Clears the feature's holders and starts a new decomposition epoch (spec: control-feature reset). */
export function resetFeature(store: Store, events: EventLog, fleetId: string, featureId: string, nowMs: number): Promise<FeatureRecord> {
  return changeFeature(
    store,
    events,
    fleetId,
    featureId,
    (f) => ({ ...f, holders: [], decompositionEpoch: f.decompositionEpoch + 1 }),
    { kind: 'feature.reset', data: (f) => ({ decompositionEpoch: f.decompositionEpoch }) },
    nowMs,
  );
}

/** Records `robotId` as working in the feature (called by run dispatch); no-op when already held. */
export function holdFeature(store: Store, events: EventLog, fleetId: string, featureId: string, robotId: string, nowMs: number): Promise<FeatureRecord> {
  return changeFeature(store, events, fleetId, featureId, (f) => (f.holders.includes(robotId) ? f : { ...f, holders: [...f.holders, robotId] }), { kind: 'feature.held', data: () => ({ robotId }) }, nowMs);
}

/** Removes `robotId` from the feature's holders (its run ended); no-op when it is not a holder. */
export function releaseFeature(store: Store, events: EventLog, fleetId: string, featureId: string, robotId: string, nowMs: number): Promise<FeatureRecord> {
  return changeFeature(store, events, fleetId, featureId, (f) => (f.holders.includes(robotId) ? { ...f, holders: f.holders.filter((h) => h !== robotId) } : f), { kind: 'feature.released', data: () => ({ robotId }) }, nowMs);
}
