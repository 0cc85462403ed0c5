/**
 * Floor plans: an upload is checked by its bytes (PNG signature and IHDR size, an SVG root and its
 * size), and the dashboard places the image exactly through its reference points (two: a similarity,
 * three: an affine map).
 */
import { describe, expect, it } from 'vitest';
import { checkImage } from '../../src/fleet/floor-plans/image.js';
import { cornersOf, pixelToLatLon } from '../../web/dashboard/src/floor-plan-geo.js';

const PNG_HEAD = Buffer.from('89504e470d0a1a0a0000000d49484452000001f4000000c80802000000', 'hex');

describe('floor plan images', () => {
  it('a PNG by its signature and IHDR size; anything else declared PNG is refused', () => {
    const png = Buffer.concat([PNG_HEAD, Buffer.alloc(20)]);
    expect(checkImage('image/png', png)).toEqual({ widthPx: 500, heightPx: 200 });
    expect(checkImage('image/png', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'))).toBeNull();
    expect(checkImage('image/png', Buffer.concat([Buffer.from('GIF89a'), Buffer.alloc(40)]))).toBeNull();
  });

  it('an SVG by its root element (after a prolog), sized by width/height or the viewBox', () => {
    const svg = (s: string) => Buffer.from(s);
    expect(checkImage('image/svg+xml', svg('<?xml version="1.0"?>\n<!-- plan -->\n<svg xmlns="http://www.w3.org/2000/svg" width="40" height="20"></svg>'))).toEqual({ widthPx: 40, heightPx: 20 });
    expect(checkImage('image/svg+xml', svg('<svg viewBox="0 0 800 600" xmlns="http://www.w3.org/2000/svg"></svg>'))).toEqual({ widthPx: 800, heightPx: 600 });
    expect(checkImage('image/svg+xml', svg('<svg xmlns="http://www.w3.org/2000/svg"></svg>'))).toEqual({ widthPx: null, heightPx: null });
    expect(checkImage('image/svg+xml', svg('<html><svg></svg></html>'))).toBeNull();
    expect(checkImage('image/svg+xml', PNG_HEAD)).toBeNull();
  });
});

describe('floor plan placement', () => {
  const a = { x: 10, y: 20, lat: 52.0004, lon: 4.9994 };
  const b = { x: 310, y: 220, lat: 51.9996, lon: 5.0008 };
  const c = { x: 10, y: 220, lat: 51.9995, lon: 4.9990 };

  it('two points: each reference pixel lands on its spot; the image keeps its proportions (no shear)', () => {
    const f = pixelToLatLon([a, b])!;
    expect(f(a.x, a.y)[0]).toBeCloseTo(a.lat, 9);
    expect(f(a.x, a.y)[1]).toBeCloseTo(a.lon, 9);
    expect(f(b.x, b.y)[0]).toBeCloseTo(b.lat, 9);
    expect(f(b.x, b.y)[1]).toBeCloseTo(b.lon, 9);
    const k = corners(cornersOf([a, b], 400, 300)!);
    // Similar: the top edge and the left edge are at right angles, in the image's 400:300 ratio.
    const cosine = (k.top.x * k.left.x + k.top.y * k.left.y) / (Math.hypot(k.top.x, k.top.y) * Math.hypot(k.left.x, k.left.y));
    expect(cosine).toBeCloseTo(0, 5);
    expect(Math.hypot(k.top.x, k.top.y) / Math.hypot(k.left.x, k.left.y)).toBeCloseTo(400 / 300, 5);
  });

  it('three points: each reference pixel lands on its spot (an affine map)', () => {
    const f = pixelToLatLon([a, b, c])!;
    for (const p of [a, b, c]) {
      expect(f(p.x, p.y)[0]).toBeCloseTo(p.lat, 9);
      expect(f(p.x, p.y)[1]).toBeCloseTo(p.lon, 9);
    }
  });

  it('points that cannot place a plan give none', () => {
    expect(pixelToLatLon([a])).toBeNull();
    expect(pixelToLatLon([a, { ...b, x: a.x, y: a.y }])).toBeNull();
    expect(pixelToLatLon([a, b, { ...c, x: 160, y: 120 }])).toBeNull();
  });
});

/** The top and left edge vectors in metres (east, north) from the corners. */
function corners(k: { topLeft: [number, number]; topRight: [number, number]; bottomLeft: [number, number] }) {
  const m = (p: [number, number]) => ({ x: (p[1] - k.topLeft[1]) * 111_320 * Math.cos((k.topLeft[0] * Math.PI) / 180), y: (p[0] - k.topLeft[0]) * 111_320 });
  return { top: m(k.topRight), left: m(k.bottomLeft) };
}
