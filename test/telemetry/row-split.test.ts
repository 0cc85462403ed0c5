import { describe, expect, it } from 'vitest';
import { splitByShard } from '../../src/telemetry/store/row-split.js';
import { rowList, rowsFor } from './cluster-rows.js';

function concat(parts: readonly Uint8Array[]): Buffer {
  return Buffer.concat(parts.map((p) => Buffer.from(p.buffer, p.byteOffset, p.length)));
}

describe('row-split (cluster writes: rows to the shard that owns the robot)', () => {
  const owner = (id: string): number => Number(id.slice(-1)) % 3;
  const robots = ['r0', 'r1', 'r2', 'r3', 'r4', 'r5', 'r7'];

  it('every row goes to its robot\'s shard, in order, as views into the block', () => {
    const block = rowsFor(robots, 4);
    const { parts, bytes } = splitByShard([block], 3, owner);
    const rows = rowList(robots, 4);
    for (let shard = 0; shard < 3; shard++) {
      const expected = Buffer.concat(rows.filter((r) => owner(r.robotId) === shard).map((r) => r.row));
      expect(concat(parts[shard]!)).toEqual(expected);
      expect(bytes[shard]).toBe(expected.length);
    }
    // Views, not copies; one per run of a shard's robots.
    expect(parts.flat().every((v) => v.buffer === block.buffer)).toBe(true);
    expect(parts[0]).toHaveLength(2);
  });

  it('the same rows give the same per-shard bytes however they are chunked (a retry is byte-identical)', () => {
    const one = rowsFor(robots, 3);
    const chunked = [rowsFor(robots.slice(0, 2), 3), rowsFor(robots.slice(2, 5), 3), rowsFor(robots.slice(5), 3)];
    const a = splitByShard([one], 3, owner).parts.map((p) => concat(p));
    const b = splitByShard(chunked, 3, owner).parts.map((p) => concat(p));
    expect(b).toEqual(a);
  });

  it('asks for the owner once per run of one robot\'s rows', () => {
    const asked: string[] = [];
    splitByShard([rowsFor(['x1', 'x2'], 10)], 2, (id) => {
      asked.push(id);
      return 0;
    });
    expect(asked).toEqual(['x1', 'x2']);
  });

  it('refuses torn rows', () => {
    const block = rowsFor(['t1'], 2);
    expect(() => splitByShard([block.subarray(0, block.length - 3)], 2, () => 0)).toThrow(/torn/);
  });
});
