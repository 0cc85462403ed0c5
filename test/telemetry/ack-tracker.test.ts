/** AckTracker entries held by the ingest: an empty entry answers as no entry, and restore() keeps entries in place. */
import { describe, expect, it } from 'vitest';
import { AckTracker } from '../../src/telemetry/store/ack-tracker.js';

describe('AckTracker entries', () => {
  it('an entry taken before any batch changes nothing; restore() updates the same entry the caller holds', () => {
    const acks = new AckTracker();
    const seen: string[] = [];
    acks.onDurable((robot, epoch, seq) => seen.push(`${robot}:${epoch}:${seq}`));
    const held = acks.entry('r1');
    expect(acks.durableOf('r1')).toBeUndefined();
    expect(acks.snapshot().size).toBe(0);
    acks.markDurable(new Map([['r1', { epoch: 5, seq: 1 }]]));
    expect(seen).toEqual([]);

    acks.restore(new Map([['r1', { epoch: 5, seq: 3 }]]));
    expect(acks.entry('r1')).toBe(held);
    expect(acks.durableOf('r1')).toEqual({ epoch: 5, seq: 3 });
    expect(acks.admitEntry(held, 'r1', 5, 3)).toBe(false); // a resend of a durable batch
    expect(seen).toEqual(['r1:5:3']); // re-announced
    expect(acks.admitEntry(held, 'r1', 5, 4)).toBe(true);
    expect(acks.admit('r1', 5, 4)).toBe(false);
    expect(acks.admitEntry(held, 'r1', 6, 1)).toBe(true); // a new epoch starts over
    expect(acks.durableOf('r1')).toBeUndefined();
    expect(acks.duplicateBatches).toBe(2);
  });
});
