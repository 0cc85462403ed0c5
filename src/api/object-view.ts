/** The published view of a tracked object (schemas/objects.ts `TrackedObject`), shared by REST and the Agent read tools. */
import type { ObjectRecord } from '../fleet/site/objects/records.js';
import type { TrackedObjectView } from './schemas/objects.js';

/** A tracked object as the API returns it (the internal track bindings are left out). */
export function toObjectView(o: ObjectRecord): TrackedObjectView {
  return {
    objectId: o.objectId,
    objectClass: o.objectClass,
    position: { latitude: o.position.latitude, longitude: o.position.longitude, elevationM: o.position.elevationM },
    geometry: o.geometry,
    source: o.source,
    label: o.label,
    lastReportedBy: o.lastReportedBy,
    confidence: o.confidence,
    sightings: o.sightings,
    firstSeenMs: o.firstSeenMs,
    lastSeenMs: o.lastSeenMs,
    expiresAtMs: o.expiresAtMs,
    updatedAtMs: o.updatedAtMs,
  };
}
