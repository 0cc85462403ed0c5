/**
 * Minimal protobuf wire-format helpers for the few places that frame or peek at messages by hand
 * (the envelope peek on the gateway, batch framing in the agent). Everything else uses protobuf-es.
 */

/** Wire types of the protobuf binary format. */
export const WireType = { Varint: 0, Fixed64: 1, LengthDelimited: 2, StartGroup: 3, EndGroup: 4, Fixed32: 5 } as const;

/**
 * Reads an unsigned varint of at most 35 bits (tags and lengths) at `pos`.
 * Returns the value and the position after it; throws on truncated or over-long input.
 */
export function readVarint32(buf: Uint8Array, pos: number): { value: number; next: number } {
  let value = 0;
  let mul = 1;
  for (let i = 0; i < 5; i++) {
    const b = buf[pos + i];
    if (b === undefined) throw new Error('truncated varint');
    value += (b & 0x7f) * mul;
    if (b < 0x80) return { value, next: pos + i + 1 };
    mul *= 128;
  }
  throw new Error('varint too long for a tag or length');
}

/** Skips a varint of up to 10 bytes (any int64/uint64 value); returns the position after it. */
export function skipVarint64(buf: Uint8Array, pos: number): number {
  for (let i = 0; i < 10; i++) {
    const b = buf[pos + i];
    if (b === undefined) throw new Error('truncated varint');
    if (b < 0x80) return pos + i + 1;
  }
  throw new Error('varint longer than 10 bytes');
}

/** Bytes needed to encode a non-negative integer (< 2^53) as a varint. */
export function varintSize(value: number): number {
  let n = 1;
  while (value >= 128) {
    value = Math.floor(value / 128);
    n++;
  }
  return n;
}

/** Writes a non-negative integer (< 2^53) as a varint at `pos`; returns the position after it. */
export function writeVarint(buf: Uint8Array, pos: number, value: number): number {
  while (value >= 128) {
    buf[pos++] = (value % 128) | 0x80;
    value = Math.floor(value / 128);
  }
  buf[pos++] = value;
  return pos;
}
