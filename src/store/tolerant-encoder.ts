/**
 * The msgpack encoder lmdb-js uses, made tolerant of values nested too deeply to encode.
 *
 * msgpackr encodes recursively, two stack frames per level, so a value nested ~1,200 levels deep
 * overflows the stack (a template stored deeper than that would answer 500 to every PUT after a
 * restart, because re-encoding the unchanged record overflows). Request bodies are now bounded
 * far below that (src/http/json-scan.ts, the `x-free-form` schema keyword), but records written before
 * the bound must stay readable and updatable. Reading them is fine (decoding uses less stack than
 * encoding, so whatever was written decodes); writing them back is what failed. So when encoding
 * overflows, the record is stored as msgpack of `{[JSON_WRAPPED]: JSON text}`: V8's JSON.stringify has
 * its own deeper C++ limit (~4,000 levels) and JSON.parse is iterative, and decoding unwraps it. Only
 * records that survive the JSON round trip unchanged are wrapped (no binary, dates, undefined members,
 * non-finite numbers, class instances); anything else rethrows the original error, as before.
 */

/** The member name of a wrapped record: a NUL byte first, so no API field can ever collide with it. */
export const JSON_WRAPPED = '\u0000fleetgw.json';

/** What lmdb-js needs of its encoder (msgpackr's Packr). */
interface LmdbEncoder {
  // Function-typed properties: msgpackr assigns them per instance (closures), they are not methods.
  encode: (value: unknown, mode?: number) => Uint8Array;
  pack: (value: unknown, mode?: number) => Uint8Array;
  decode(bytes: Uint8Array, options?: unknown): unknown;
  structures?: { uninitialized?: boolean } | undefined;
  /** Present when lmdb-js shares structures across records (not the gateway's setting). */
  getStructures?: unknown;
}

export type EncoderClass = new (options: object) => LmdbEncoder;

/**
 * Subclasses lmdb-js's encoder class (taken from an open database, so it is exactly the msgpackr
 * lmdb-js was built with) into one that falls back to the JSON wrapper on a stack overflow.
 * Pass the result as `encoder: { Encoder }` to `openDB`: lmdb-js then constructs it with its usual
 * options (shared structures included).
 */
export function tolerantEncoder(Base: EncoderClass): EncoderClass {
  return class TolerantEncoder extends Base {
    constructor(options: object) {
      super(options);
      // msgpackr assigns pack/encode per instance (a closure over its buffers), not on the prototype.
      const encode = this.encode;
      const guarded = (value: unknown, mode?: number): Uint8Array => {
        try {
          return encode.call(this, value, mode);
        } catch (err: unknown) {
          if (!(err instanceof RangeError)) throw err;
          const text = losslessJson(value);
          if (text === null) throw err;
          // With shared structures, the failed pass may have minted some it never saved: have msgpackr
          // reload the durable ones first (its own recovery when a structure save is declined).
          if (this.structures !== undefined && typeof this.getStructures === 'function') this.structures.uninitialized = true;
          return encode.call(this, { [JSON_WRAPPED]: text }, mode);
        }
      };
      this.encode = guarded;
      this.pack = guarded;
    }

    override decode(bytes: Uint8Array, options?: unknown): unknown {
      const value = super.decode(bytes, options);
      if (value !== null && typeof value === 'object' && JSON_WRAPPED in value) {
        return JSON.parse((value as Record<string, string>)[JSON_WRAPPED]!) as unknown;
      }
      return value;
    }
  };
}

/** JSON text of `value` when parsing it back gives an equal value, else null. */
function losslessJson(value: unknown): string | null {
  let lossy = false;
  let text: string | undefined;
  try {
    text = JSON.stringify(value, function (this: Record<string, unknown>, key: string, v: unknown): unknown {
      // `this[key]` is the value before toJSON (a Date arrives here as a string already).
      const raw = key === '' ? v : this[key];
      if (!isJsonSafe(raw)) lossy = true;
      return v;
    });
  } catch {
    // Not representable as JSON either (a cycle, a BigInt): null makes the caller rethrow the
    // encoder's original error to the writer, so nothing is lost silently.
    return null;
  }
  return lossy || text === undefined ? null : text;
}

function isJsonSafe(v: unknown): boolean {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'object': {
      if (v === null || Array.isArray(v)) return true;
      const proto = Object.getPrototypeOf(v) as unknown;
      return proto === Object.prototype || proto === null;
    }
    default:
      // undefined (dropped by JSON), bigint, symbol, function
      return false;
  }
}
