// The outbox under races and failed writes (found in review): the stored seq reservation never goes
// down, a stop folded into a record that could not be stored is not answered as durable, and close()
// waits for the retry of a failed write.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { seqMetaKey } from '../../src/commands/keys.js';
import type { OutboxLimits } from '../../src/commands/outbox.js';
import { CommandService, type SubmitRequest } from '../../src/commands/service.js';
import { makeFixture, until } from './fixtures.js';
import { TestDoubleLink } from './test-double-link.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const c of cleanups.splice(0)) await c();
});

function setup(outbox?: Partial<OutboxLimits>) {
  const fx = makeFixture(1);
  const link = new TestDoubleLink();
  const svc = new CommandService({ store: fx.store, link, ...(outbox ? { outbox } : {}) });
  cleanups.push(async () => {
    await svc.close();
    await fx.cleanup();
  });
  const robotId = fx.robots[0]?.record.robotId ?? '';
  const stop = (): SubmitRequest<'stop'> => ({ robotId, fleetId: fx.fleet.fleetId, orgId: fx.org.orgId, action: 'stop', args: { reason: 't' }, requestedBy: { actorType: 'api_key' as const, apiKeyId: 'k' } });
  return { fx, link, svc, robotId, stop };
}

describe('outbox races and failures', () => {
  it('never lowers the stored seq reservation when a synchronous one commits before a queued one', async () => {
    const { fx, link, svc, robotId, stop } = setup();
    // The start-up reservation ahead is a queued async transaction. Between it being issued and
    // lmdb-js running it, a Hello with a higher applied seq and a stop arrive (synchronous reservation).
    const transaction = fx.store.root.transaction.bind(fx.store.root);
    let fired = false;
    vi.spyOn(fx.store.root, 'transaction').mockImplementation((cb) => {
      const p = transaction(cb);
      if (!fired) {
        fired = true;
        queueMicrotask(() => {
          link.connect(robotId, 5000n);
          svc.submit(stop());
        });
      }
      return p;
    });
    await until(() => fired, 2000);
    await until(() => link.sentTo(robotId).at(-1)?.seq === 5001n && (fx.store.meta.get(seqMetaKey(robotId)) as number) >= 5001, 2000);
    expect(link.sentTo(robotId).at(-1)?.seq).toBe(5001n);
    expect(fx.store.meta.get(seqMetaKey(robotId)) as number).toBeGreaterThanOrEqual(5001);
  });

  it('does not answer a stop folded into an unstored record as persisted', async () => {
    const { fx, svc, stop } = setup({ maxUrgentPerRobot: 1 });
    const put = vi.spyOn(fx.store.commands, 'put').mockImplementation(() => Promise.reject(new Error('disk')));
    const first = svc.submit(stop());
    await expect(first.persisted).rejects.toThrow('disk');
    // Past any bounded number of rewrites (a pending stop is rewritten until it is stored).
    await until(() => put.mock.calls.length > 5, 2000);
    const folded = svc.submit(stop());
    expect(folded.commandId).toBe(first.commandId);
    await expect(folded.persisted).rejects.toThrow('disk');
    put.mockRestore();
    // The disk is back: the pending stop is stored after all.
    await until(() => fx.store.commands.get(first.commandId) !== undefined, 2000);
  });

  it('close() waits for the retry of a failed record write', async () => {
    const { fx, svc, stop } = setup();
    const put = fx.store.commands.put.bind(fx.store.commands);
    let calls = 0;
    vi.spyOn(fx.store.commands, 'put').mockImplementation((key, value) => {
      calls++;
      return calls === 1 ? Promise.reject(new Error('disk')) : put(key, value);
    });
    const s = svc.submit(stop());
    s.persisted.catch(() => undefined);
    await svc.close();
    expect(calls).toBe(2);
    expect(fx.store.commands.get(s.commandId)).toBeDefined();
  });
});
