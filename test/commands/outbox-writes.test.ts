// How the outbox writes to LMDB (src/commands/outbox.ts + write-behind.ts): a command acknowledged
// before its first write is stored once, in its settled state, without an outbox entry; one that is
// not is stored with its entry within LAZY_MS; seq numbers are reserved in blocks and never reused.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { outboxKey, seqMetaKey } from '../../src/commands/keys.js';
import { SEQ_BLOCK } from '../../src/commands/outbox.js';
import { CommandService, type SubmitRequest } from '../../src/commands/service.js';
import type { CommandRecord } from '../../src/commands/types.js';
import { LAZY_MS } from '../../src/commands/write-behind.js';
import { addRobot } from '../../src/store/identity.js';
import { openStore } from '../../src/store/lmdb.js';
import { makeFixture, until, type Fixture } from './fixtures.js';
import { TestDoubleLink } from './test-double-link.js';

const open: { svc: CommandService; fx: Fixture }[] = [];
afterEach(async () => {
  const all = open.splice(0);
  for (const { svc } of all) await svc.close();
  for (const fx of new Set(all.map((o) => o.fx))) await fx.cleanup();
  vi.restoreAllMocks();
});

function setup() {
  const fx = makeFixture(1);
  const link = new TestDoubleLink();
  const svc = new CommandService({ store: fx.store, link });
  open.push({ svc, fx });
  const robotId = fx.robots[0]?.record.robotId ?? '';
  const stop = (awaitingAck: boolean): SubmitRequest<'stop'> => ({
    robotId, fleetId: fx.fleet.fleetId, orgId: fx.org.orgId, action: 'stop', args: { reason: 't' },
    requestedBy: { actorType: 'api_key' as const, apiKeyId: 'k' }, awaitingAck,
  });
  return { fx, link, svc, robotId, stop };
}

const stored = (fx: Fixture, id: string) => fx.store.commands.get(id) as CommandRecord | undefined;

describe('outbox writes', () => {
  it('stores a command acknowledged before its first write once, settled, with no outbox entry', async () => {
    const { fx, link, svc, robotId, stop } = setup();
    const outboxPuts = vi.spyOn(fx.store.outbox, 'put');
    const recordPuts = vi.spyOn(fx.store.commands, 'put');
    link.connect(robotId);
    // The hold is LAZY_MS of wall time; on a loaded machine three turns can take longer than that, so
    // the hold's timer is driven by hand: the ack lands inside it, as it does on an idle machine.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const s = svc.submit(stop(true));
    // The ack arrives a few turns later (the robot hop), as it does over gRPC.
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    link.ack(robotId, s.commandId);
    await vi.advanceTimersByTimeAsync(LAZY_MS);
    vi.useRealTimers();
    await until(() => stored(fx, s.commandId)?.state === 'agent_received', 2000);
    expect(outboxPuts).not.toHaveBeenCalled();
    expect(recordPuts.mock.calls.filter(([id]) => id === s.commandId)).toHaveLength(1);
    expect(stored(fx, s.commandId)?.history.map((h) => h.state)).toEqual(['dispatched', 'agent_received']);
    // The audit index has it as well.
    expect(svc.audit.commandIds({ fleetId: fx.fleet.fleetId }, 10)).toEqual([s.commandId]);
  });

  it('stores an unacknowledged command with its outbox entry within LAZY_MS, and removes the entry on the ack', async () => {
    const { fx, link, svc, robotId, stop } = setup();
    link.connect(robotId);
    const s = svc.submit(stop(true));
    const t0 = Date.now();
    await s.persisted;
    expect(Date.now() - t0).toBeLessThan(LAZY_MS + 500);
    expect(fx.store.outbox.get(outboxKey(robotId, 1))).toBe(s.commandId);
    expect(stored(fx, s.commandId)?.state).toBe('dispatched');
    link.ack(robotId, s.commandId);
    await until(() => fx.store.outbox.get(outboxKey(robotId, 1)) === undefined && stored(fx, s.commandId)?.state === 'agent_received', 2000);
  });

  it('issues the first write of a command whose caller waits, in the turn its ack arrives', async () => {
    const { fx, link, svc, robotId, stop } = setup();
    const recordPuts = vi.spyOn(fx.store.commands, 'put');
    link.connect(robotId);
    // The first write's LAZY_MS hold on a clock driven by hand, so that it is still held at the ack.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const s = svc.submit(stop(true));
    const answer = svc.waitForAcks([s.commandId], 10_000);
    try {
      for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
      expect(recordPuts.mock.calls.filter(([id]) => id === s.commandId)).toHaveLength(0);
      link.ack(robotId, s.commandId);
      // Not at the end of the turn: its answer waits for this commit, which then starts an iteration sooner.
      expect(recordPuts.mock.calls.filter(([id]) => id === s.commandId)).toHaveLength(1);
    } finally {
      vi.useRealTimers();
    }
    expect((await answer)[0]?.state).toBe('agent_received');
    await s.persisted;
    expect(stored(fx, s.commandId)?.state).toBe('agent_received');
  });

  it('writes a command nobody waits an ack for at the end of its turn', async () => {
    const { fx, link, svc, robotId, stop } = setup();
    const outboxPuts = vi.spyOn(fx.store.outbox, 'put');
    link.connect(robotId);
    const s = svc.submit(stop(false));
    expect(outboxPuts).not.toHaveBeenCalled(); // not during the turn that sent it
    await new Promise((r) => setImmediate(r));
    expect(outboxPuts).toHaveBeenCalledTimes(1); // issued at its end, not held for LAZY_MS
    await s.persisted;
    expect(fx.store.outbox.get(outboxKey(robotId, 1))).toBe(s.commandId);
  });

  it('reserves seq numbers in blocks and continues past the reservation after a restart', async () => {
    const { fx, link, svc, robotId, stop } = setup();
    link.connect(robotId);
    const a = svc.submit(stop(false));
    const b = svc.submit(stop(false));
    await Promise.all([a.persisted, b.persisted]);
    expect(link.sentTo(robotId).map((c) => c.seq)).toEqual([1n, 2n]);
    expect(fx.store.meta.get(seqMetaKey(robotId))).toBe(SEQ_BLOCK);
    await svc.close();

    const link2 = new TestDoubleLink();
    const svc2 = new CommandService({ store: fx.store, link: link2 });
    open.push({ svc: svc2, fx });
    link2.connect(robotId);
    const c = svc2.submit(stop(false));
    await c.persisted;
    expect(link2.sentTo(robotId).find((m) => m.commandId === c.commandId)?.seq).toBe(BigInt(SEQ_BLOCK + 1));
    expect(fx.store.meta.get(seqMetaKey(robotId))).toBe(2 * SEQ_BLOCK);
  });

  it('reads a counter written by an older version (the last seq used) as a reservation', async () => {
    const fx = makeFixture(1);
    const robotId = fx.robots[0]?.record.robotId ?? '';
    await fx.store.meta.put(seqMetaKey(robotId), 7);
    await fx.store.close();
    fx.store = openStore(fx.dir);
    const link = new TestDoubleLink();
    const svc = new CommandService({ store: fx.store, link });
    open.push({ svc, fx });
    link.connect(robotId);
    const s = svc.submit({ robotId, fleetId: fx.fleet.fleetId, orgId: fx.org.orgId, action: 'stop', args: { reason: 'x' }, requestedBy: { actorType: 'api_key' as const, apiKeyId: 'k' } });
    await s.persisted;
    expect(link.sentTo(robotId)[0]?.seq).toBe(8n);
    expect(fx.store.meta.get(seqMetaKey(robotId))).toBe(8 + SEQ_BLOCK - 1);
  });

  it('sends a seq only once a reservation covering it has committed', () => {
    const { fx, link, svc, robotId, stop } = setup();
    const seen: [bigint, unknown][] = [];
    const send = link.send.bind(link);
    link.send = (id, cmd) => {
      seen.push([cmd.seq, fx.store.meta.get(seqMetaKey(id))]);
      return send(id, cmd);
    };
    link.connect(robotId);
    for (let i = 0; i < 5; i++) svc.submit(stop(true));
    expect(seen.length).toBe(5);
    for (const [seq, reserved] of seen) expect(Number(seq)).toBeLessThanOrEqual(reserved as number);
  });

  it('after a crash inside the lazy window, numbering does not reuse the lost seq and the Hello settles nothing unsent', async () => {
    const { fx, link, svc, robotId, stop } = setup();
    link.connect(robotId);
    const s = svc.submit(stop(true));
    await new Promise((r) => setImmediate(r));
    link.ack(robotId, s.commandId); // applied by the robot; its record is not written yet
    // The data dir as a crash now would leave it.
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-crash-'));
    cpSync(fx.dir, dir, { recursive: true });
    const store2 = openStore(dir);
    try {
      const link2 = new TestDoubleLink();
      const svc2 = new CommandService({ store: store2, link: link2 });
      const d = svc2.submit(stop(false));
      await d.persisted;
      expect(svc2.get(d.commandId)?.seq).toBeGreaterThan(1);
      link2.connect(robotId, 1n); // the agent applied seq 1
      expect(link2.sentTo(robotId).map((c) => c.commandId)).toEqual([d.commandId]);
      expect(svc2.get(d.commandId)?.state).toBe('dispatched');
      await svc2.close();
    } finally {
      await store2.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('answers a folded stop only after the command it was folded into has committed', async () => {
    const fx = makeFixture(1);
    const link = new TestDoubleLink();
    const svc = new CommandService({ store: fx.store, link, outbox: { maxUrgentPerRobot: 2 } });
    open.push({ svc, fx });
    const robotId = fx.robots[0]?.record.robotId ?? '';
    const req = { robotId, fleetId: fx.fleet.fleetId, orgId: fx.org.orgId, action: 'stop' as const, args: { reason: 'x' }, requestedBy: { actorType: 'api_key' as const, apiKeyId: 'k' } };
    svc.submit(req);
    const second = svc.submit(req);
    const folded = svc.submit(req); // same turn: folded into `second`, whose write is still queued
    expect(folded.commandId).toBe(second.commandId);
    await folded.persisted;
    expect(stored(fx, second.commandId)?.state).toBe('deferred');
  });

  it('keeps a record readable and writes it again when its write fails', async () => {
    const { fx, link, svc, robotId, stop } = setup();
    const put = fx.store.commands.put.bind(fx.store.commands);
    let failed = 0;
    vi.spyOn(fx.store.commands, 'put').mockImplementation((key, value) => {
      if (failed === 0) {
        failed++;
        return Promise.reject(new Error('disk full'));
      }
      return put(key, value);
    });
    link.connect(robotId);
    const s = svc.submit(stop(true));
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
    link.ack(robotId, s.commandId);
    await expect(s.persisted).rejects.toThrow('disk full');
    expect(svc.get(s.commandId)?.state).toBe('agent_received');
    await until(() => stored(fx, s.commandId)?.state === 'agent_received', 2000);
    expect(svc.stats().writeErrors).toBeGreaterThan(0);
  });

  it('a Hello reporting a seq settles only a command that was actually sent with it', () => {
    // E.g. an OS crash lost the last reservation and the agent remembers more than the gateway.
    const { link, svc, robotId, stop } = setup();
    const d = svc.submit(stop(false)); // robot offline: deferred, seq 1, never sent
    expect(svc.get(d.commandId)?.seq).toBe(1);
    link.connect(robotId, 1n);
    expect(link.sentTo(robotId).map((c) => c.commandId)).toEqual([d.commandId]);
    expect(svc.get(d.commandId)?.state).toBe('dispatched');
  });

  it('refuses a command (nothing sent) when its seq reservation cannot be written', () => {
    const { fx, link, svc, robotId, stop } = setup();
    vi.spyOn(fx.store.meta, 'putSync').mockImplementation(() => {
      throw new Error('MDB_MAP_FULL');
    });
    link.connect(robotId);
    expect(() => svc.submit(stop(true))).toThrow(expect.objectContaining({ id: 'unavailable', status: 503 }) as Error);
    expect(link.sentTo(robotId)).toEqual([]);
    expect(svc.stats().pending).toBe(0);
  });

  it('reserves seqs ahead at start, and in one commit for the targets of a bulk request', async () => {
    const fx = makeFixture(3);
    const link = new TestDoubleLink();
    // The start-up reservations are one lazy write: keep its commit promise to wait on it.
    const transaction = fx.store.root.transaction.bind(fx.store.root);
    const started: Promise<unknown>[] = [];
    vi.spyOn(fx.store.root, 'transaction').mockImplementation((fn) => {
      const p = transaction(fn);
      started.push(p);
      return p;
    });
    const svc = new CommandService({ store: fx.store, link });
    open.push({ svc, fx });
    const sync = vi.spyOn(fx.store.root, 'transactionSync');
    const stopFor = (robotId: string) => ({ robotId, fleetId: fx.fleet.fleetId, orgId: fx.org.orgId, action: 'stop' as const, args: { reason: 'x' }, requestedBy: { actorType: 'api_key' as const, apiKeyId: 'k' } });
    // The start-up reservations (one lazy write) have committed: offline robots need no commit of their own.
    const known = fx.robots.map((r) => r.record.robotId);
    await until(() => known.every((id) => fx.store.meta.get(seqMetaKey(id)) !== undefined), 2000);
    // Stored is not yet known: the service learns of the commit when its promise settles, and a
    // loaded machine can read the stored value in between. Every callback chained on the commit
    // has run once a macrotask turn follows it.
    await Promise.allSettled(started);
    await new Promise((r) => setImmediate(r));
    svc.prepareTargets(known);
    await Promise.all(known.map((id) => svc.submit(stopFor(id)).persisted));
    expect(sync).not.toHaveBeenCalled();
    // Robots registered while serving: one synchronous commit for all of them, none per submit.
    const added = [0, 1, 2, 3].map((i) => addRobot(fx.store, { fleetId: fx.fleet.fleetId, name: `late${i}`, capabilities: [], active: true }).record.robotId);
    sync.mockClear(); // registering them used transactions of its own
    svc.prepareTargets(added);
    for (const id of added) svc.submit(stopFor(id));
    expect(sync).toHaveBeenCalledTimes(1);
  });
});
