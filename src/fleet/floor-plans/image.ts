/**
 * Checks an uploaded floor plan by its bytes, not its name or declared type: a PNG by its signature
 * and IHDR chunk, an SVG by an `<svg` root element near the start. The SVG is served only as an image
 * with a CSP that runs nothing (routes/floor-plan.ts), so a script inside it never executes.
 */
import type { FloorPlanType } from './records.js';

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Where an SVG's root element must start: after an XML declaration, comments and a doctype. */
const SVG_ROOT_WITHIN = 4096;

export interface CheckedImage {
  widthPx: number | null;
  heightPx: number | null;
}

/**
 * The image's size, when `bytes` really are of `type`.
 * @returns null when the bytes are not a PNG (or SVG) as declared
 */
export function checkImage(type: FloorPlanType, bytes: Uint8Array): CheckedImage | null {
  return type === 'image/png' ? checkPng(bytes) : checkSvg(bytes);
}

function checkPng(b: Uint8Array): CheckedImage | null {
  if (b.length < 33 || PNG_SIGNATURE.some((v, i) => b[i] !== v)) return null;
  // The first chunk is IHDR: length 13, then width and height, big-endian.
  if (String.fromCharCode(b[12]!, b[13]!, b[14]!, b[15]!) !== 'IHDR') return null;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  const w = view.getUint32(16);
  const h = view.getUint32(20);
  return w > 0 && h > 0 ? { widthPx: w, heightPx: h } : null;
}

function checkSvg(b: Uint8Array): CheckedImage | null {
  const head = new TextDecoder('utf-8', { fatal: false }).decode(b.subarray(0, SVG_ROOT_WITHIN));
  // Only a prolog may stand before the root: an XML declaration, comments, a doctype, white space.
  const root = /^\uFEFF?\s*(?:<\?xml[^>]*\?>\s*)?(?:<!--[\s\S]*?-->\s*|<!DOCTYPE[^>]*>\s*)*<svg[\s>]/i.exec(head);
  if (root === null) return null;
  const tag = /<svg[^>]*>/i.exec(head.slice(root[0].length - 5))?.[0] ?? '';
  const attr = (name: string): number | null => {
    const m = new RegExp(`\\s${name}\\s*=\\s*["']\\s*([0-9.]+)\\s*(px)?\\s*["']`, 'i').exec(tag);
    const v = m === null ? NaN : Number(m[1]);
    return Number.isFinite(v) && v > 0 ? v : null;
  };
  let widthPx = attr('width');
  let heightPx = attr('height');
  const vb = /\sviewBox\s*=\s*["']\s*[-0-9.]+[\s,]+[-0-9.]+[\s,]+([0-9.]+)[\s,]+([0-9.]+)\s*["']/i.exec(tag);
  if ((widthPx === null || heightPx === null) && vb !== null) {
    widthPx = Number(vb[1]);
    heightPx = Number(vb[2]);
  }
  return { widthPx: widthPx !== null && widthPx > 0 ? widthPx : null, heightPx: heightPx !== null && heightPx > 0 ? heightPx : null };
}
