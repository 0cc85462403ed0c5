/**
 * Robot detections as the gateway accepts them: each field of an `ObjectDetection` checked (the robot
 * is untrusted input), its footprint turned into a GeoJSON Polygon. Pure.
 */
import type { ObjectDetection } from '../../../gen/fleetgw/v1/robot_link_pb.js';
import type { Geometry } from '../../../missions/catalog/records.js';

/** Detections read per message; the rest are ignored and counted. */
export const MAX_DETECTIONS_PER_FRAME = 256;
/** Longest track id accepted. */
export const MAX_TRACK_ID = 128;
/** A footprint side longer than this is ignored (the position is kept). */
export const MAX_FOOTPRINT_M = 100;
/** Object classes: lower-case words (a robot's upper-case class is lower-cased). */
export const OBJECT_CLASS_PATTERN = /^[a-z0-9_-]{1,64}$/;

/** One detection, checked. */
export interface Detection {
  trackId: string;
  objectClass: string;
  latitude: number;
  longitude: number;
  elevationM: number | null;
  confidence: number | null;
  geometry: Geometry | null;
}

const M_PER_DEG = 111_320;

/** The footprint rectangle (centre, length along the heading, width across it) as a closed ring. */
export function footprint(latitude: number, longitude: number, lengthM: number, widthM: number, headingDeg: number): Geometry {
  const h = (headingDeg * Math.PI) / 180;
  // Unit vectors of the heading (north = 0, clockwise) in east/north metres.
  const fwd = { e: Math.sin(h), n: Math.cos(h) };
  const side = { e: Math.cos(h), n: -Math.sin(h) };
  const mPerDegLon = M_PER_DEG * Math.max(Math.cos((latitude * Math.PI) / 180), 1e-6);
  const corner = (a: number, b: number): [number, number] => {
    const e = fwd.e * a + side.e * b;
    const n = fwd.n * a + side.n * b;
    return [longitude + e / mPerDegLon, latitude + n / M_PER_DEG];
  };
  const l = lengthM / 2;
  const w = widthM / 2;
  const ring = [corner(l, -w), corner(l, w), corner(-l, w), corner(-l, -w)];
  return { type: 'Polygon', coordinates: [[...ring, ring[0]!]] };
}

/** The detection checked, or null when it cannot be used (bad class, position or track id). */
export function checkDetection(d: ObjectDetection): Detection | null {
  const objectClass = d.objectClass.toLowerCase();
  if (!OBJECT_CLASS_PATTERN.test(objectClass)) return null;
  if (!Number.isFinite(d.latitude) || Math.abs(d.latitude) > 90 || !Number.isFinite(d.longitude) || Math.abs(d.longitude) > 180) return null;
  if (d.trackId.length > MAX_TRACK_ID) return null;
  const sized = Number.isFinite(d.lengthM) && Number.isFinite(d.widthM) && d.lengthM > 0 && d.widthM > 0 && d.lengthM <= MAX_FOOTPRINT_M && d.widthM <= MAX_FOOTPRINT_M;
  return {
    trackId: d.trackId,
    objectClass,
    latitude: d.latitude,
    longitude: d.longitude,
    elevationM: Number.isFinite(d.elevationM) && d.elevationM !== 0 ? d.elevationM : null,
    confidence: Number.isFinite(d.confidence) && d.confidence > 0 ? Math.min(1, d.confidence) : null,
    geometry: sized ? footprint(d.latitude, d.longitude, d.lengthM, d.widthM, Number.isFinite(d.headingDeg) ? d.headingDeg : 0) : null,
  };
}
