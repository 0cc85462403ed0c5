/**
 * RowBinary encodings (length prefix + UTF-8) of robot and fleet ids, kept per worker thread so a
 * task does not re-encode the same few hundred ids every 20 ms.
 *
 * Bound: at most MAX_IDS entries; when full it is cleared and refills from the next tasks (ids are
 * registered robots and their fleets, so the bound is only reached by very large fleets).
 */
import { encodeRowBinaryString } from '../row-rowbinary.js';

const MAX_IDS = 100_000;
const cache = new Map<string, Uint8Array>();

/** The RowBinary String encoding of `id` (shared: do not modify). */
export function rowBinaryId(id: string): Uint8Array {
  let b = cache.get(id);
  if (b === undefined) {
    if (cache.size >= MAX_IDS) cache.clear();
    b = encodeRowBinaryString(id);
    cache.set(id, b);
  }
  return b;
}
