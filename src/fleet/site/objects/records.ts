/**
 * Tracked objects (docs/objects.md): things in a fleet's area that robots see or
 * operators place (pallets, people, obstacles). One record per physical object, whatever reported it.
 * msgpack-safe only.
 */
import type { Geometry } from '../../../missions/catalog/records.js';

/** Who created the record: a robot's perception, or an operator through REST. */
export type ObjectSource = 'robot' | 'manual';

export interface ObjectPosition {
  latitude: number;
  longitude: number;
  /** Metres; null when unknown. */
  elevationM: number | null;
}

export interface ObjectRecord {
  objectId: string;
  orgId: string;
  fleetId: string;
  /** Lower-case class: `pallet`, `person`, `obstacle`, ... */
  objectClass: string;
  position: ObjectPosition;
  /** Footprint (GeoJSON Polygon or MultiPolygon), or null. */
  geometry: Geometry | null;
  source: ObjectSource;
  /** An operator's label (manual objects; may be set on robot ones too), or null. */
  label: string | null;
  /** The robot that saw it last, with the track id it used (null: never seen by a robot). */
  lastReportedBy: { robotId: string; trackId: string | null } | null;
  /** Detector confidence of the latest sighting (0..1), or null. */
  confidence: number | null;
  /** Times a robot saw it (detections matched to this record). */
  sightings: number;
  /** Gateway clock, Unix ms: created (first sighting or manual creation) and latest sighting or edit. */
  firstSeenMs: number;
  lastSeenMs: number;
  /** Robot objects only: removed at this time unless seen again (lastSeenMs + TTL); null: never expires. */
  expiresAtMs: number | null;
  /**
   * The (robot, track id) pairs bound to this object (newest last, at most 8): kept so their index
   * keys are removed with the object. Internal, not published.
   */
  tracks: { robotId: string; trackId: string }[];
  /** The API key or session that created a manual object; null for robot objects. */
  createdBy: { apiKeyId: string } | null;
  updatedAtMs: number;
}

// The database this module owns, typed on the store (see StoreDatabases in src/store/lmdb.ts).
declare module '../../../store/lmdb.js' {
  interface StoreDatabases {
    objects: ObjectRecord;
  }
}
