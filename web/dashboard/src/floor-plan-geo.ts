/**
 * Where a floor plan image lies on the ground, from two or three reference points (image pixel to
 * latitude/longitude). Two points fix scale, rotation and offset (a similarity: the plan is never
 * sheared); three fix any affine placement. Worked in a local east/north frame in metres around the
 * first point, which is exact enough over a depot's few hundred metres.
 */

export interface RefPoint {
  x: number;
  y: number;
  lat: number;
  lon: number;
}

/** The image's top-left, top-right and bottom-left corners as [lat, lon]. */
export interface Corners {
  topLeft: [number, number];
  topRight: [number, number];
  bottomLeft: [number, number];
}

const M_PER_DEG = 111_320;

/**
 * The function from image pixels to [lat, lon] the points define, or null when they cannot place a
 * plan (fewer than two, coincident, or three on one line).
 */
export function pixelToLatLon(points: readonly RefPoint[]): ((x: number, y: number) => [number, number]) | null {
  if (points.length < 2) return null;
  const o = points[0]!;
  const cos = Math.cos((o.lat * Math.PI) / 180);
  const east = (p: RefPoint): number => (p.lon - o.lon) * M_PER_DEG * cos;
  const north = (p: RefPoint): number => (p.lat - o.lat) * M_PER_DEG;
  const back = (e: number, n: number): [number, number] => [o.lat + n / M_PER_DEG, o.lon + e / (M_PER_DEG * cos)];
  if (points.length === 2) {
    const p = points[1]!;
    // Complex numbers: image z = x - iy (y grows down), ground w = east + i north; w = a z + b.
    const zr = p.x - o.x;
    const zi = -(p.y - o.y);
    const wr = east(p);
    const wi = north(p);
    const den = zr * zr + zi * zi;
    if (den === 0 || (wr === 0 && wi === 0)) return null;
    const ar = (wr * zr + wi * zi) / den;
    const ai = (wi * zr - wr * zi) / den;
    return (x, y) => {
      const dr = x - o.x;
      const di = -(y - o.y);
      return back(ar * dr - ai * di, ar * di + ai * dr);
    };
  }
  const [a, b, c] = points as [RefPoint, RefPoint, RefPoint];
  // Solve east = p1 x + p2 y + p3 (and north likewise) through the three points (Cramer's rule).
  const det = a.x * (b.y - c.y) - a.y * (b.x - c.x) + (b.x * c.y - c.x * b.y);
  if (Math.abs(det) < 1e-9) return null;
  const solve = (va: number, vb: number, vc: number): [number, number, number] => [
    (va * (b.y - c.y) - a.y * (vb - vc) + (vb * c.y - vc * b.y)) / det,
    (a.x * (vb - vc) - va * (b.x - c.x) + (b.x * vc - c.x * vb)) / det,
    (a.x * (b.y * vc - c.y * vb) - a.y * (b.x * vc - c.x * vb) + va * (b.x * c.y - c.x * b.y)) / det,
  ];
  const pe = solve(east(a), east(b), east(c));
  const pn = solve(north(a), north(b), north(c));
  return (x, y) => back(pe[0] * x + pe[1] * y + pe[2], pn[0] * x + pn[1] * y + pn[2]);
}

/** The corners of a `width` x `height` image placed by `points`, or null (see {@link pixelToLatLon}). */
export function cornersOf(points: readonly RefPoint[], width: number, height: number): Corners | null {
  const f = pixelToLatLon(points);
  if (f === null || !(width > 0) || !(height > 0)) return null;
  return { topLeft: f(0, 0), topRight: f(width, 0), bottomLeft: f(0, height) };
}
