// The outbox's write scheduling (src/commands/write-behind.ts): end-of-turn writes, lazy writes that
// wait for company, order across both kinds, and failures.
import { describe, expect, it, vi } from 'vitest';
import { FLUSH_NOW_MAX, LAZY_MS, WriteBehind } from '../../src/commands/write-behind.js';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('WriteBehind', () => {
  it('issues writes at the end of the turn, in order, and settles when they commit', async () => {
    const wb = new WriteBehind();
    const issued: string[] = [];
    const p1 = wb.defer(() => { issued.push('a'); return Promise.resolve(); });
    const p2 = wb.defer(() => { issued.push('b'); return [Promise.resolve(), Promise.resolve()]; });
    expect(issued).toEqual([]); // nothing during the turn that asked
    await tick();
    expect(issued).toEqual(['a', 'b']);
    await expect(p1).resolves.toBeUndefined();
    await expect(p2).resolves.toBeUndefined();
  });

  it('flushSoon issues a short queue at once and leaves a long one for the end of the turn', async () => {
    const wb = new WriteBehind();
    const issued: number[] = [];
    for (let i = 0; i < FLUSH_NOW_MAX; i++) void wb.defer(() => { issued.push(i); return []; }, true);
    wb.flushSoon();
    // In the caller's turn: lmdb-js closes its transaction in an immediate its first write queues.
    expect(issued).toHaveLength(FLUSH_NOW_MAX);
    for (let i = 0; i <= FLUSH_NOW_MAX; i++) void wb.defer(() => { issued.push(i); return []; }, true);
    wb.flushSoon();
    expect(issued).toHaveLength(FLUSH_NOW_MAX);
    await tick();
    expect(issued).toHaveLength(2 * FLUSH_NOW_MAX + 1);
    wb.flushSoon(); // nothing queued: nothing to do
  });

  it('holds lazy writes up to LAZY_MS after the turn, unless an end-of-turn write takes them along', async () => {
    // The LAZY_MS timer on a fake clock (setImmediate stays real: the end-of-turn flush).
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const wb = new WriteBehind();
      const issued: string[] = [];
      void wb.defer(() => { issued.push('lazy'); return []; }, true);
      await tick();
      await tick();
      vi.advanceTimersByTime(LAZY_MS - 1);
      expect(issued).toEqual([]);
      vi.advanceTimersByTime(1);
      expect(issued).toEqual(['lazy']);

      void wb.defer(() => { issued.push('lazy2'); return []; }, true);
      void wb.defer(() => { issued.push('now'); return []; });
      await tick();
      // Queued order is kept across kinds: the lazy write went out first, with the urgent one.
      expect(issued).toEqual(['lazy', 'lazy2', 'now']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('flush() issues everything at once (close must not wait)', () => {
    const wb = new WriteBehind();
    const issued: string[] = [];
    void wb.defer(() => { issued.push('lazy'); return []; }, true);
    void wb.defer(() => { issued.push('now'); return []; });
    wb.flush();
    expect(issued).toEqual(['lazy', 'now']);
  });

  it('a failed or throwing write rejects only its own caller; the other writes are still issued', async () => {
    const wb = new WriteBehind();
    const issued: string[] = [];
    const p = wb.defer(() => { throw new Error('cannot encode'); });
    const rejected = expect(p).rejects.toThrow('cannot encode');
    const other = wb.defer(() => { issued.push('after'); return Promise.resolve(); });
    await tick();
    expect(issued).toEqual(['after']);
    await rejected;
    await expect(other).resolves.toBeUndefined();

    const q = wb.defer(() => Promise.reject(new Error('disk full')));
    await expect(q).rejects.toThrow('disk full');
  });
});
