/**
 * GeoJSON Polygon / MultiPolygon checks the schema cannot express (RFC 7946 §3.1.6): every linear
 * ring is closed (first position equals last) and has at least 4 positions, and every position is a
 * WGS84 longitude in [-180, 180] and latitude in [-90, 90]. The schema already fixed the shapes.
 */
import { apiError } from '../../errors/catalog.js';
import type { Geometry } from './records.js';

/** Most positions one feature may hold: keeps a record (and every read of it) small. */
export const MAX_POSITIONS = 10_000;

/**
 * Validates a feature geometry.
 * @throws ApiError 400 `invalid_geometry` naming the first offending ring or position
 */
export function validateGeometry(g: Geometry): void {
  const polygons = g.type === 'Polygon' ? [g.coordinates] : g.coordinates;
  if (polygons.length === 0) throw apiError('invalid_geometry', { detail: 'a MultiPolygon needs at least one polygon' });
  let total = 0;
  polygons.forEach((rings, p) => {
    const where = g.type === 'Polygon' ? '' : `polygon ${p}, `;
    if (rings.length === 0) throw apiError('invalid_geometry', { detail: `${where}a polygon needs at least one ring` });
    rings.forEach((ring, r) => {
      if (ring.length < 4) throw apiError('invalid_geometry', { detail: `${where}ring ${r} has ${ring.length} positions; at least 4 are needed` });
      total += ring.length;
      ring.forEach((pos, i) => {
        const [lon, lat] = pos;
        if (pos.length < 2 || pos.length > 3 || lon === undefined || lat === undefined || !pos.every(Number.isFinite)) {
          throw apiError('invalid_geometry', { detail: `${where}ring ${r}, position ${i} must be [longitude, latitude] or [longitude, latitude, elevation]` });
        }
        if (lon < -180 || lon > 180) throw apiError('invalid_geometry', { detail: `${where}ring ${r}, position ${i}: longitude must be within [-180, 180]` });
        if (lat < -90 || lat > 90) throw apiError('invalid_geometry', { detail: `${where}ring ${r}, position ${i}: latitude must be within [-90, 90]` });
      });
      const first = ring[0] ?? [];
      const last = ring[ring.length - 1] ?? [];
      if (first.length !== last.length || first.some((v, k) => v !== last[k])) {
        throw apiError('invalid_geometry', { detail: `${where}ring ${r} is not closed (its first and last positions differ)` });
      }
    });
  });
  if (total > MAX_POSITIONS) throw apiError('invalid_geometry', { detail: `${total} positions; at most ${MAX_POSITIONS}` });
}
