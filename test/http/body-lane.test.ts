/**
 * Large request bodies are parsed one per event-loop turn, after the requests read before them, and
 * the lane is bounded (src/http/body-lane.ts).
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/errors/catalog.js';
import { BodyLane, ClientGone } from '../../src/http/body-lane.js';

describe('BodyLane', () => {
  it('runs one task per event-loop turn, in order, with other work in between', async () => {
    const lane = new BodyLane();
    const order: string[] = [];
    const runs = [1, 2, 3].map((i) => lane.run(10, () => {
      order.push(`body ${i}`);
      // Work queued by a task (a request read in that turn) comes before the next task.
      setImmediate(() => order.push(`after ${i}`));
      return i;
    }));
    order.push('small');
    expect(await Promise.all(runs)).toEqual([1, 2, 3]);
    await new Promise((r) => setImmediate(r));
    expect(order).toEqual(['small', 'body 1', 'after 1', 'body 2', 'after 2', 'body 3', 'after 3']);
    expect(lane.bytesWaiting).toBe(0);
  });

  it('refuses a body past its byte bound with 503 and Retry-After, and passes a task\'s error on', async () => {
    const lane = new BodyLane(100);
    const first = lane.run(60, () => 'ok');
    let refused: unknown;
    try {
      void lane.run(60, () => 'never');
    } catch (err: unknown) {
      refused = err;
    }
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).status).toBe(503);
    expect((refused as ApiError).headers).toEqual({ 'retry-after': '1' });
    expect(await first).toBe('ok');
    await expect(lane.run(60, () => { throw new Error('bad body'); })).rejects.toThrow('bad body');
  });

  it('drops a task whose client went away while it waited, unparsed', async () => {
    const lane = new BodyLane();
    const gone = new AbortController();
    let ran = false;
    const dropped = lane.run(10, () => { ran = true; }, gone);
    const kept = lane.run(10, () => 'ok', new AbortController());
    gone.abort();
    await expect(dropped).rejects.toBeInstanceOf(ClientGone);
    expect(await kept).toBe('ok');
    expect(ran).toBe(false);
    expect(lane.bytesWaiting).toBe(0);
  });
});
