// Closing the decode pool ends its worker even when Node loses the first request to terminate it
// (a worker asked while still starting up went on to wait for tasks and held the process open).
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDecodePool } from '../../src/telemetry/decode/decode-pool.js';

describe('decode pool close', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('asks a terminated worker again until it exits', async () => {
    const pool = createDecodePool({ maxTasks: 2, threads: 1 });
    const asked = new Map<Worker, number>();
    // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its worker below
    const original = Worker.prototype.terminate;
    // The first request to each worker is lost, as Node loses one that reaches a starting worker.
    vi.spyOn(Worker.prototype, 'terminate').mockImplementation(function (this: Worker) {
      const n = (asked.get(this) ?? 0) + 1;
      asked.set(this, n);
      return n === 1 ? new Promise<number>(() => {}) : original.call(this);
    });
    await pool.close();
    expect([...asked.values()]).toEqual([2]);
  }, 20_000);

  it('closes a pool whose worker exits at the first request without asking again', async () => {
    const pool = createDecodePool({ maxTasks: 2, threads: 1 });
    const spy = vi.spyOn(Worker.prototype, 'terminate');
    await pool.close();
    expect(spy).toHaveBeenCalledTimes(1);
  });
});
