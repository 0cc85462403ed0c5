/**
 * A VDA 5050 map frame placed on the earth. Robots report and take positions in metres on a map
 * (`x`, `y`, `theta` in radians counter-clockwise from the x axis); the gateway's telemetry and its
 * go-to command use WGS 84. The frame has x east and y north from an origin, converted with an
 * equirectangular approximation (ample for a site a few kilometres across).
 */

const METRES_PER_DEG_LAT = 111_320;

export interface MapOrigin {
  latitude: number;
  longitude: number;
  /** Ground elevation of the site, metres. */
  elevationM: number;
  /** Half the side of the square around the origin that go-to targets must lie in, metres. */
  halfSizeM: number;
}

/** The default origin: the same depot the gateway's simulator drives in (src/sim/geo.ts). */
export const DEFAULT_MAP_ORIGIN: MapOrigin = { latitude: 52.0, longitude: 5.0, elevationM: 2.0, halfSizeM: 150 };

export class MapFrame {
  private readonly perDegLon: number;

  constructor(readonly origin: MapOrigin = DEFAULT_MAP_ORIGIN) {
    this.perDegLon = METRES_PER_DEG_LAT * Math.cos((origin.latitude * Math.PI) / 180);
  }

  /** WGS 84 of a map point. */
  toLatLon(x: number, y: number): { latitude: number; longitude: number } {
    return { latitude: this.origin.latitude + y / METRES_PER_DEG_LAT, longitude: this.origin.longitude + x / this.perDegLon };
  }

  /** The map point of a WGS 84 position. */
  fromLatLon(latitude: number, longitude: number): { x: number; y: number } {
    return { x: (longitude - this.origin.longitude) * this.perDegLon, y: (latitude - this.origin.latitude) * METRES_PER_DEG_LAT };
  }

  /** The square go-to area as a WGS 84 ring (the command policy's `go_to_area`). */
  goToRing(): Array<{ latitude: number; longitude: number }> {
    const h = this.origin.halfSizeM;
    return [this.toLatLon(-h, -h), this.toLatLon(h, -h), this.toLatLon(h, h), this.toLatLon(-h, h)];
  }
}

/** Heading in degrees clockwise from north, [0, 360), of a VDA 5050 theta. */
export function headingOfTheta(theta: number): number {
  const deg = 90 - (theta * 180) / Math.PI;
  const h = deg % 360;
  return h < 0 ? h + 360 : h;
}

/** VDA 5050 theta, (-π, π], of a heading in degrees clockwise from north. */
export function thetaOfHeading(headingDeg: number): number {
  let t = ((90 - headingDeg) * Math.PI) / 180;
  while (t > Math.PI) t -= 2 * Math.PI;
  while (t <= -Math.PI) t += 2 * Math.PI;
  return t;
}
