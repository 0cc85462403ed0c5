/**
 * The simulated depot: a square area around a fixed centre, with a local metric frame (x east,
 * y north, metres) converted to WGS84 with an equirectangular approximation (ample for a few
 * hundred metres).
 */

export const DEPOT = {
  latitude: 52.0,
  longitude: 5.0,
  elevationM: 2.0,
  /** Half the side of the square driving area, metres. */
  halfSizeM: 150,
  /** The map the robots' x/y are on (telemetry `map_id`). */
  mapId: 'depot',
} as const;

const METRES_PER_DEG_LAT = 111_320;
const METRES_PER_DEG_LON = METRES_PER_DEG_LAT * Math.cos((DEPOT.latitude * Math.PI) / 180);

/** Latitude/longitude of a point given in the depot frame. */
export function toLatLon(xM: number, yM: number): { latitude: number; longitude: number } {
  return { latitude: DEPOT.latitude + yM / METRES_PER_DEG_LAT, longitude: DEPOT.longitude + xM / METRES_PER_DEG_LON };
}

/** Heading (degrees clockwise from north, [0, 360)) of the vector (dx east, dy north). */
export function bearingDeg(dx: number, dy: number): number {
  const deg = (Math.atan2(dx, dy) * 180) / Math.PI;
  return deg < 0 ? deg + 360 : deg;
}

/** Signed smallest difference b - a between two headings, in (-180, 180]. */
export function headingDiff(a: number, b: number): number {
  let d = (b - a) % 360;
  if (d > 180) d -= 360;
  if (d <= -180) d += 360;
  return d;
}

/** A small deterministic PRNG (mulberry32), so a robot id always drives the same route. */
export function seededRandom(seedText: string): () => number {
  let seed = 2166136261;
  for (let i = 0; i < seedText.length; i++) seed = Math.imul(seed ^ seedText.charCodeAt(i), 16777619);
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The depot-frame point (x east, y north, metres) of a latitude/longitude (inverse of toLatLon). */
export function fromLatLon(latitude: number, longitude: number): { xM: number; yM: number } {
  return { xM: (longitude - DEPOT.longitude) * METRES_PER_DEG_LON, yM: (latitude - DEPOT.latitude) * METRES_PER_DEG_LAT };
}
