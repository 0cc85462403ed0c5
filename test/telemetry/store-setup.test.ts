// DeferredSetUp without a server: what the ClickHouse stores run at start and again until it succeeds.
import { describe, expect, it } from 'vitest';
import { DeferredSetUp } from '../../src/telemetry/store/store-setup.js';

describe('DeferredSetUp', () => {
  it('runs one attempt at a time, forgets a failure, keeps the first success', async () => {
    let runs = 0;
    let fail = true;
    let release: () => void = () => {};
    const setUp = new DeferredSetUp(async () => {
      runs++;
      await new Promise<void>((r) => (release = r));
      if (fail) throw new Error('connect ECONNREFUSED');
      return { version: '18.16.1' };
    });
    let done = false;
    void setUp.done.then(() => (done = true));
    const a = setUp.ensure();
    const b = setUp.ensure();
    expect(runs).toBe(1);
    release();
    await expect(a).rejects.toThrow('ECONNREFUSED');
    await expect(b).rejects.toThrow('ECONNREFUSED');
    expect(setUp.value).toBeNull();
    expect(setUp.error).toBe('connect ECONNREFUSED');

    fail = false;
    const c = setUp.ensure();
    expect(runs).toBe(2);
    release();
    expect(await c).toEqual({ version: '18.16.1' });
    expect(setUp.error).toBeNull();
    await setUp.done;
    expect(done).toBe(true);
    expect(await setUp.ensure()).toBe(setUp.value);
    expect(runs).toBe(2);
  });
});
