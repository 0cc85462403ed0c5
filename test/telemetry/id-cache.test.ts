/** RowBinary id encodings per batch: runs of equal ids share one lookup, the result is the same as one lookup each. */
import { describe, expect, it } from 'vitest';
import { rowBinaryId, rowBinaryIds } from '../../src/telemetry/decode/id-cache.js';

describe('rowBinaryIds', () => {
  it('gives each id its encoding, in order, for runs of equal (but distinct) strings and for changes', () => {
    // Equal content, different string objects, as when each robot record is decoded on its own.
    const f1 = ['fleet', 'a'].join('-');
    const f1again = ['fle', 'et-a'].join('');
    const ids = [f1, f1again, 'fleet-b', f1, '', 'ロボ'];
    const got = rowBinaryIds(ids);
    expect(got).toHaveLength(ids.length);
    got.forEach((b, i) => expect([...b]).toEqual([...rowBinaryId(ids[i]!)]));
    expect([...got[0]!]).toEqual([7, ...new TextEncoder().encode('fleet-a')]);
    expect(rowBinaryIds([])).toEqual([]);
  });
});
