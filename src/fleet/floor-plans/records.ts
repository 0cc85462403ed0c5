/**
 * A fleet's floor plan as kept in LMDB (`floorPlans`, keyed by fleet id): the image bytes (PNG or
 * SVG, bounded by {@link FLOOR_PLAN_MAX_BYTES}), its ETag, and where it lies on the map (two or three
 * reference points from image pixels to latitude/longitude). msgpack-safe only.
 */

/** Largest floor plan image accepted (decoded bytes): a detailed depot plan fits, and its base64 upload stays within the gateway-wide 1 MiB body bound. */
export const FLOOR_PLAN_MAX_BYTES = 760 * 1024;

export type FloorPlanType = 'image/png' | 'image/svg+xml';

/** One reference point: a pixel of the image (origin top left, y down) and where it is on the ground. */
export interface ReferencePoint {
  x: number;
  y: number;
  lat: number;
  lon: number;
}

export interface FloorPlanRecord {
  fleetId: string;
  orgId: string;
  contentType: FloorPlanType;
  bytes: Uint8Array;
  /** Strong validator of the bytes (`"sha256-…"`), also the image URL's version. */
  etag: string;
  /** Intrinsic size in pixels when the image states it (PNG always; SVG from width/height or viewBox). */
  widthPx: number | null;
  heightPx: number | null;
  /** Two points (scale, rotation, offset) or three (any affine placement); null: not placed yet. */
  placement: ReferencePoint[] | null;
  uploadedAtMs: number;
  uploadedBy: { userId: string; email: string };
}

// The database this module owns, typed on the store (see StoreDatabases in src/store/lmdb.ts).
declare module '../../store/lmdb.js' {
  interface StoreDatabases {
    floorPlans: FloorPlanRecord;
  }
}
