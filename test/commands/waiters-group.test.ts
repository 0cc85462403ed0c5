import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/catalog.js';
import { Waiters } from '../../src/commands/waiters.js';

describe('Waiters.addMany (one wait for a bulk request)', () => {
  it('answers each command in the order given, settled ones with their outcome and the rest when the shared time elapses', async () => {
    const w = new Waiters<string>(10);
    const p = w.addMany(['a', 'b', 'c'], 30, undefined, (id) => `expired ${id}`);
    expect(w.size).toBe(3);
    w.settle('c', 'acked c');
    w.settle('a', 'acked a');
    expect(w.size).toBe(1);
    expect(await p).toEqual(['acked a', 'expired b', 'acked c']);
    expect(w.size).toBe(0);
  });

  it('resolves as soon as the last command is settled, long before its time', async () => {
    const w = new Waiters<string>(10);
    const t0 = Date.now();
    const p = w.addMany(['a', 'b'], 10_000, undefined, () => 'expired');
    w.settle('b', 'ok b');
    w.settle('a', 'ok a');
    expect(await p).toEqual(['ok a', 'ok b']);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(w.size).toBe(0);
  });

  it('ends the open waits on abort (also when already aborted) and ignores later settles', async () => {
    const w = new Waiters<string>(10);
    const ac = new AbortController();
    const p = w.addMany(['a', 'b'], 10_000, ac.signal, (id) => `aborted ${id}`);
    w.settle('a', 'ok a');
    ac.abort();
    w.settle('b', 'late b');
    expect(await p).toEqual(['ok a', 'aborted b']);
    expect(await w.addMany(['x'], 10_000, ac.signal, () => 'aborted')).toEqual(['aborted']);
    expect(w.size).toBe(0);
  });

  it('counts each command against the bound and refuses a group that does not fit, registering nothing', async () => {
    const w = new Waiters<string>(3);
    const one = w.add('z', 10_000, undefined, () => 'expired');
    expect(() => w.addMany(['a', 'b', 'c'], 10_000, undefined, () => 'expired')).toThrow(ApiError);
    expect(w.size).toBe(1);
    const two = w.addMany(['a', 'b'], 10_000, undefined, () => 'expired');
    expect(w.room()).toBe(0);
    w.expireAll();
    expect(await one).toBe('expired');
    expect(await two).toEqual(['expired', 'expired']);
    expect(w.room()).toBe(3);
  });

  it('shares one command between a single wait and a group wait', async () => {
    const w = new Waiters<string>(10);
    const single = w.add('a', 10_000, undefined, () => 'expired');
    const group = w.addMany(['a', 'b'], 10_000, undefined, () => 'expired');
    w.settle('a', 'ok a');
    w.settle('b', 'ok b');
    expect(await single).toBe('ok a');
    expect(await group).toEqual(['ok a', 'ok b']);
  });
});
