/**
 * RowBinary encodings (length prefix + UTF-8) of robot and fleet ids, kept per thread (the decode
 * workers, and the main thread's inline decodes) so a task does not re-encode the same ids each time.
 *
 * Bound: at most MAX_IDS entries; when full it is cleared and refills from the next tasks (ids are
 * registered robots and their fleets, so the bound is only reached by very large fleets).
 */
import { encodeRowBinaryString } from '../sample/index.js';

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

/**
 * {@link rowBinaryId} of each id in order. A run of equal ids (a batch's fleet ids: most robots
 * share a fleet) is looked up once: equal ids are usually different string objects (each robot
 * record is decoded on its own), and a Map lookup that finds an equal but different string compares
 * it in V8's runtime, a visible share of the main thread at 1,000 robots (bench/notes/telemetry-ingest.md).
 */
export function rowBinaryIds(ids: readonly string[]): Uint8Array[] {
  const out = new Array<Uint8Array>(ids.length);
  let last: string | undefined;
  let lastBytes: Uint8Array | undefined;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (id !== last || lastBytes === undefined) {
      last = id;
      lastBytes = rowBinaryId(id);
    }
    out[i] = lastBytes;
  }
  return out;
}
