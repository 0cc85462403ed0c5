// Core behaviour of the command service on a real LMDB, with the robot side played by a test double
// of the RobotLink interface (the real gRPC link + agent: real-link.test.ts).
import { afterEach, describe, expect, it, vi } from 'vitest';
import { outboxKey } from '../../src/commands/keys.js';
import { CommandService, type SubmitRequest } from '../../src/commands/service.js';
import type { CommandRecord } from '../../src/commands/types.js';
import { ApiError } from '../../src/errors/catalog.js';
import { openStore } from '../../src/store/lmdb.js';
import { makeFixture, until, type Fixture } from './fixtures.js';
import { TestDoubleLink } from './test-double-link.js';

const open: { svc: CommandService; fx: Fixture }[] = [];
afterEach(async () => {
  const all = open.splice(0);
  // Every service first (they flush their queued writes), then the stores they share.
  for (const { svc } of all) await svc.close();
  for (const fx of new Set(all.map((o) => o.fx))) await fx.cleanup();
});

/** Counts the runs of the service's retry loop from now on (what a check that nothing is resent waits for). */
function retryTicks(svc: CommandService): () => number {
  const spy = vi.spyOn(svc as unknown as { retryTick(): void }, 'retryTick');
  return () => spy.mock.calls.length;
}

function setup(opts: Partial<ConstructorParameters<typeof CommandService>[0]> = {}) {
  const fx = makeFixture(2);
  const link = new TestDoubleLink();
  const svc = new CommandService({ store: fx.store, link, ...opts });
  open.push({ svc, fx });
  const [a, b] = fx.robots.map((r) => r.record);
  if (!a || !b) throw new Error('fixture');
  const stop = (robotId: string, reason = 'test'): SubmitRequest<'stop'> => ({
    robotId,
    fleetId: fx.fleet.fleetId,
    orgId: fx.org.orgId,
    action: 'stop',
    args: { reason },
    requestedBy: { actorType: 'api_key' as const, apiKeyId: '00000000-0000-4000-8000-000000000001' },
  });
  // Not urgent: the retry budget and the backlog bounds apply to it (a stop is never given up).
  const start = (robotId: string): SubmitRequest<'start'> => ({
    robotId,
    fleetId: fx.fleet.fleetId,
    orgId: fx.org.orgId,
    action: 'start',
    args: {},
    requestedBy: { actorType: 'api_key' as const, apiKeyId: '00000000-0000-4000-8000-000000000001' },
  });
  return { fx, link, svc, a, b, stop, start };
}

const stored = (fx: Fixture, id: string) => fx.store.commands.get(id) as CommandRecord | undefined;

describe('CommandService', () => {
  it('dispatches a stop to an online robot and persists record + outbox entry', async () => {
    const { fx, link, svc, a, stop } = setup();
    link.connect(a.robotId);
    const s = svc.submit(stop(a.robotId, 'halt now'));
    expect(s.delivery).toEqual({ state: 'dispatched', commandId: s.commandId, retryBudgetExhausted: false });
    const wire = link.sentTo(a.robotId);
    expect(wire).toHaveLength(1);
    expect(wire[0]?.commandId).toBe(s.commandId);
    expect(wire[0]?.seq).toBe(1n);
    expect(wire[0]?.action).toEqual(expect.objectContaining({ case: 'stop', value: expect.objectContaining({ reason: 'halt now' }) }));
    await s.persisted;
    const rec = stored(fx, s.commandId);
    expect(rec?.state).toBe('dispatched');
    expect(rec?.attempts).toBe(1);
    expect(rec?.history.map((h) => h.state)).toEqual(['dispatched']);
    expect(rec?.requestedBy).toEqual({ actorType: 'api_key', apiKeyId: '00000000-0000-4000-8000-000000000001' });
    expect(fx.store.outbox.get(outboxKey(a.robotId, 1))).toBe(s.commandId);
  });

  it('defers while offline and sends the backlog in seq order on reconnect', async () => {
    const { link, svc, a, b, stop } = setup();
    const ids = [svc.submit(stop(a.robotId, '1')), svc.submit(stop(a.robotId, '2')), svc.submit(stop(a.robotId, '3'))];
    expect(ids.map((s) => s.delivery.state)).toEqual(['deferred', 'deferred', 'deferred']);
    expect(link.sentTo(a.robotId)).toHaveLength(0);
    await Promise.all(ids.map((s) => s.persisted));
    link.connect(b.robotId);
    expect(link.sentTo(b.robotId)).toHaveLength(0);
    link.connect(a.robotId);
    const wire = link.sentTo(a.robotId);
    expect(wire.map((c) => c.commandId)).toEqual(ids.map((s) => s.commandId));
    expect(wire.map((c) => c.seq)).toEqual([1n, 2n, 3n]);
    const rec = svc.get(ids[0]?.commandId ?? '');
    expect(rec?.state).toBe('dispatched');
    expect(rec?.history.map((h) => h.state)).toEqual(['deferred', 'dispatched']);
  });

  it('keeps deferred commands across a gateway restart and delivers them on reconnect', async () => {
    const { fx, link, svc, a, stop } = setup();
    const first = svc.submit(stop(a.robotId, 'one'));
    const second = svc.submit(stop(a.robotId, 'two'));
    await Promise.all([first.persisted, second.persisted]);
    await svc.close();
    await fx.store.close();
    expect(link.sentTo(a.robotId)).toHaveLength(0);

    // A new process: new store handle, new link, new service over the same data dir.
    fx.store = openStore(fx.dir);
    const link2 = new TestDoubleLink();
    const svc2 = new CommandService({ store: fx.store, link: link2 });
    open.push({ svc: svc2, fx });
    expect(svc2.stats().pending).toBe(2);
    link2.connect(a.robotId);
    expect(link2.sentTo(a.robotId).map((c) => c.commandId)).toEqual([first.commandId, second.commandId]);
    // The seq counter survived too: a new command continues after the old ones.
    const third = svc2.submit(stop(a.robotId, 'three'));
    expect(link2.sentTo(a.robotId)[2]?.seq).toBeGreaterThan(2n);
    link2.ack(a.robotId, first.commandId);
    link2.ack(a.robotId, second.commandId);
    link2.ack(a.robotId, third.commandId);
    await svc2.close();
    expect(stored(fx, first.commandId)?.state).toBe('agent_received');
    expect([...fx.store.outbox.getKeys({})]).toEqual([]);
  });

  it('sends at once to a robot that is already online when the service starts', () => {
    const fx = makeFixture(1);
    const link = new TestDoubleLink();
    const a = fx.robots[0]?.record.robotId ?? '';
    const svc = new CommandService({ store: fx.store, link });
    open.push({ svc, fx });
    const s = svc.submit({ robotId: a, fleetId: fx.fleet.fleetId, orgId: fx.org.orgId, action: 'stop', args: { reason: 'x' }, requestedBy: { actorType: 'api_key' as const, apiKeyId: 'k' } });
    return s.persisted.then(async () => {
      await svc.close();
      link.connect(a); // robot already connected when the next service starts
      const svc2 = new CommandService({ store: fx.store, link });
      open.push({ svc: svc2, fx });
      expect(link.sentTo(a).map((c) => c.commandId)).toEqual([s.commandId]);
    });
  });

  it('reports agent_received and agent_rejected (with the reason) to waiters and removes the outbox entry', async () => {
    const { fx, link, svc, a, b, stop } = setup();
    link.connect(a.robotId);
    link.connect(b.robotId);
    const ok = svc.submit(stop(a.robotId));
    const no = svc.submit(stop(b.robotId));
    const waits = [svc.waitForAck(ok.commandId, 5000), svc.waitForAck(no.commandId, 5000)];
    link.ack(a.robotId, ok.commandId, 'received');
    link.ack(b.robotId, no.commandId, 'rejected', 'e-stop engaged');
    const [d1, d2] = await Promise.all(waits);
    expect(d1).toEqual({ state: 'agent_received', commandId: ok.commandId, retryBudgetExhausted: false });
    expect(d2).toEqual({ state: 'agent_rejected', commandId: no.commandId, retryBudgetExhausted: false, rejectReason: 'e-stop engaged' });
    await svc.close();
    expect(stored(fx, no.commandId)?.rejectReason).toBe('e-stop engaged');
    expect(stored(fx, no.commandId)?.history.map((h) => h.state)).toEqual(['dispatched', 'agent_rejected']);
    expect([...fx.store.outbox.getKeys({})]).toEqual([]);
    // An ack that already happened answers a later wait at once.
    expect((await svc.waitForAck(ok.commandId, 10)).state).toBe('agent_received');
  });

  it('waits for a group of acks with one wait: outcomes in order, an offline robot deferred, one commit', async () => {
    const { fx, link, svc, a, b, stop } = setup({ retry: { ackTimeoutMs: 60_000 } });
    link.connect(a.robotId);
    const first = svc.submit(stop(a.robotId, 'first'));
    link.ack(a.robotId, first.commandId, 'received');
    const ok = svc.submit(stop(a.robotId, 'ok'));
    const quiet = svc.submit(stop(a.robotId, 'quiet'));
    const away = svc.submit(stop(b.robotId, 'away'));
    // Submitted in one turn: one LMDB transaction (each caller still gets its own promise).
    const commits = vi.spyOn(fx.store.commands, 'put');
    await Promise.all([ok.persisted, quiet.persisted, away.persisted]);
    expect(new Set(commits.mock.results.map((r) => r.value as unknown)).size).toBe(1);
    const wait = svc.waitForAcks([first.commandId, ok.commandId, quiet.commandId, away.commandId], 80);
    expect(svc.stats().waiters).toBe(3);
    link.ack(a.robotId, ok.commandId, 'rejected', 'busy');
    const d = await wait;
    expect(d.map((x) => x.state)).toEqual(['agent_received', 'agent_rejected', 'timed_out', 'deferred']);
    expect(d.map((x) => x.commandId)).toEqual([first.commandId, ok.commandId, quiet.commandId, away.commandId]);
    expect(svc.stats().waiters).toBe(0);
    await svc.close();
    expect(stored(fx, ok.commandId)?.history.map((h) => h.state)).toEqual(['dispatched', 'agent_rejected']);
    expect(stored(fx, quiet.commandId)?.state).toBe('dispatched');
    expect(stored(fx, away.commandId)?.state).toBe('deferred');
    expect(svc.stats().writeErrors).toBe(0);
  });

  it('times out a wait when the robot never acks; the record stays readable and pending', async () => {
    const { fx, link, svc, a, stop } = setup({ retry: { ackTimeoutMs: 60_000 } });
    link.connect(a.robotId);
    const s = svc.submit(stop(a.robotId));
    const t0 = Date.now();
    const d = await svc.waitForAck(s.commandId, 80);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(70);
    expect(d).toEqual({ state: 'timed_out', commandId: s.commandId, retryBudgetExhausted: false });
    expect(svc.get(s.commandId)?.state).toBe('dispatched');
    await s.persisted;
    expect(stored(fx, s.commandId)?.state).toBe('dispatched');
    expect(svc.stats().pending).toBe(1);
    expect(svc.stats().waiters).toBe(0);
  });

  it('ends a wait as timed_out when the request is aborted', async () => {
    const { link, svc, a, stop } = setup();
    link.connect(a.robotId);
    const s = svc.submit(stop(a.robotId));
    const ac = new AbortController();
    const w = svc.waitForAck(s.commandId, 30_000, ac.signal);
    ac.abort();
    expect((await w).state).toBe('timed_out');
    expect(svc.stats().waiters).toBe(0);
  });

  it('resends an unacknowledged (non-urgent) command until the retry budget is spent, then stops', async () => {
    const { fx, link, svc, a, start } = setup({ retry: { ackTimeoutMs: 20, backoffFactor: 1, maxIntervalMs: 20, maxAttempts: 3, tickMs: 5 } });
    link.connect(a.robotId);
    const s = svc.submit(start(a.robotId));
    // Sends at ~0, 20, 40 ms; budget spent at ~60 ms, so a 200 ms wait sees it.
    expect(await svc.waitForAck(s.commandId, 200)).toEqual({ state: 'timed_out', commandId: s.commandId, retryBudgetExhausted: true });
    await until(() => svc.get(s.commandId)?.retryBudgetExhausted === true);
    const sent = link.sentTo(a.robotId);
    expect(sent).toHaveLength(3);
    expect(new Set(sent.map((c) => c.commandId))).toEqual(new Set([s.commandId]));
    expect(new Set(sent.map((c) => c.seq))).toEqual(new Set([1n]));
    // No more sends after exhaustion: the retry loop runs ten more times (every 5 ms) and sends nothing.
    const ticks = retryTicks(svc);
    await until(() => ticks() >= 10, 5000);
    expect(link.sentTo(a.robotId)).toHaveLength(3);
    expect((await svc.waitForAck(s.commandId, 10)).retryBudgetExhausted).toBe(true);
    expect(svc.stats().pending).toBe(0);
    // A late ack is still the truth and is recorded.
    link.ack(a.robotId, s.commandId);
    expect(svc.get(s.commandId)?.state).toBe('agent_received');
    await svc.close();
    expect(stored(fx, s.commandId)).toMatchObject({ state: 'agent_received', retryBudgetExhausted: true, attempts: 3 });
    expect([...fx.store.outbox.getKeys({})]).toEqual([]);
  });

  it('does not spend the retry budget while the robot is offline', async () => {
    const { link, svc, a, stop } = setup({ retry: { ackTimeoutMs: 10, backoffFactor: 1, maxIntervalMs: 10, maxAttempts: 2, tickMs: 5 } });
    const s = svc.submit(stop(a.robotId));
    // Sixteen runs of the retry loop (every 5 ms): eight times the ack timeout, twice the budget.
    const ticks = retryTicks(svc);
    await until(() => ticks() >= 16, 5000);
    expect(svc.get(s.commandId)).toMatchObject({ state: 'deferred', attempts: 0, retryBudgetExhausted: false });
    link.connect(a.robotId);
    link.ack(a.robotId, s.commandId);
    expect(svc.get(s.commandId)?.state).toBe('agent_received');
  });

  it('settles the command the agent reports as last applied instead of resending it', () => {
    const { link, svc, a, stop } = setup();
    link.connect(a.robotId);
    const first = svc.submit(stop(a.robotId));
    const second = svc.submit(stop(a.robotId));
    link.disconnect(a.robotId);
    // The agent applied seq 1 but its ack was lost with the stream.
    link.connect(a.robotId, 1n);
    expect(svc.get(first.commandId)?.state).toBe('agent_received');
    expect(link.sentTo(a.robotId).map((c) => c.commandId)).toEqual([first.commandId, second.commandId, second.commandId]);
    // An agent ahead of the gateway's counter: new seqs continue after what it applied.
    link.disconnect(a.robotId);
    link.connect(a.robotId, 40n);
    svc.submit(stop(a.robotId));
    expect(link.sentTo(a.robotId).at(-1)?.seq).toBe(41n);
  });

  it('ignores an ack from a robot the command was not sent to', () => {
    const { link, svc, a, b, stop } = setup();
    link.connect(a.robotId);
    const s = svc.submit(stop(a.robotId));
    link.ack(b.robotId, s.commandId);
    expect(svc.get(s.commandId)?.state).toBe('dispatched');
    expect(svc.stats().foreignAcks).toBe(1);
  });

  it('bounds ack waiters and refuses the one over the bound', async () => {
    const { link, svc, a, stop } = setup({ maxWaiters: 2 });
    link.connect(a.robotId);
    const ids = [svc.submit(stop(a.robotId)), svc.submit(stop(a.robotId)), svc.submit(stop(a.robotId))].map((s) => s.commandId);
    const w1 = svc.waitForAck(ids[0] ?? '', 5000);
    const w2 = svc.waitForAck(ids[1] ?? '', 5000);
    expect(svc.waiterRoom()).toBe(0);
    let err: unknown;
    try {
      void svc.waitForAck(ids[2] ?? '', 5000);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).id).toBe('ack_waiters_full');
    expect((err as ApiError).status).toBe(503);
    link.ack(a.robotId, ids[0] ?? '');
    await w1;
    expect(svc.waiterRoom()).toBe(1);
    link.ack(a.robotId, ids[1] ?? '');
    await w2;
  });

  it('bounds the per-robot backlog and stores nothing for a refused (non-urgent) command', () => {
    const { fx, link, svc, a, b, start } = setup({ outbox: { maxPerRobot: 2 }, retry: { ackTimeoutMs: 60_000 } });
    link.connect(a.robotId);
    link.connect(b.robotId);
    svc.submit(start(a.robotId));
    svc.submit(start(a.robotId));
    expect(() => svc.submit(start(a.robotId))).toThrow(expect.objectContaining({ id: 'outbox_full' }) as Error);
    expect(svc.stats().pending).toBe(2);
    expect(svc.submit(start(b.robotId)).delivery.state).toBe('dispatched');
    void fx;
  });

  it('resolves open waits as timed_out on close', async () => {
    const { link, svc, a, stop } = setup();
    link.connect(a.robotId);
    const s = svc.submit(stop(a.robotId));
    const w = svc.waitForAck(s.commandId, 30_000);
    await svc.close();
    expect((await w).state).toBe('timed_out');
  });
});
