// Issue 8 item 3 at the command service (real LMDB, robot side played by the test double): an
// answer about a command waits until its record and audit keys are stored, also after an ack; a
// reconnecting robot's last applied seq settles every pending command it covers (applied-seq.ts)
// instead of resending it. The kill -9 test through the real process: test/e2e/ack-durability.test.ts.
import { afterEach, describe, expect, it } from 'vitest';
import { CommandService, type SubmitRequest } from '../../src/commands/service.js';
import type { CommandAction, CommandArgsByAction, CommandRecord } from '../../src/commands/types.js';
import { makeFixture, type Fixture } from './fixtures.js';
import { TestDoubleLink } from './test-double-link.js';

const open: { svc: CommandService; fx: Fixture }[] = [];
afterEach(async () => {
  for (const { svc, fx } of open.splice(0)) {
    await svc.close();
    await fx.cleanup();
  }
});

function setup() {
  const fx = makeFixture(1);
  const link = new TestDoubleLink();
  const svc = new CommandService({ store: fx.store, link });
  open.push({ svc, fx });
  const robotId = fx.robots[0]?.record.robotId ?? '';
  const req = <A extends CommandAction>(action: A, args: CommandArgsByAction[A], awaitingAck = false): SubmitRequest<A> => ({
    robotId, fleetId: fx.fleet.fleetId, orgId: fx.org.orgId, action, args, requestedBy: { actorType: 'api_key' as const, apiKeyId: '00000000-0000-4000-8000-000000000001' }, awaitingAck,
  });
  const stop = (awaitingAck = false): SubmitRequest<'stop'> => req('stop', { reason: 'test' }, awaitingAck);
  const start = (): SubmitRequest<'start'> => req('start', {});
  const cancel = (): SubmitRequest<'mission_control'> => req('mission_control', { runId: 'run-1', action: 'cancel' });
  const stored = (id: string): CommandRecord | undefined => fx.store.commands.get(id) as CommandRecord | undefined;
  const sentIds = (): string[] => link.sentTo(robotId).map((c) => c.commandId);
  return { fx, link, svc, robotId, stop, start, cancel, stored, sentIds };
}

describe('answers wait for the stored record, also after an ack', () => {
  it('an ack inside the held-write window: the answer waits for the one merged write (record + audit keys)', async () => {
    const { fx, link, svc, robotId, stop, stored } = setup();
    link.connect(robotId);
    const s = svc.submit(stop(true));
    const wait = svc.waitForAck(s.commandId, 5000);
    await new Promise((r) => setImmediate(r));
    link.ack(robotId, s.commandId); // the robot acks before the held first write went out
    expect((await wait).state).toBe('agent_received');
    expect(stored(s.commandId)).toBeUndefined(); // an answer now would promise a record a crash can erase
    await s.persisted;
    // One write, in the settled state: no outbox entry was ever added and removed.
    expect(stored(s.commandId)).toMatchObject({ state: 'agent_received', ackSource: 'agent', attempts: 1 });
    expect([...fx.store.outbox.getKeys({})]).toEqual([]);
    expect([...fx.store.audit.getKeys({})].filter((k) => String(k).endsWith(s.commandId))).toHaveLength(3);
  });

  it('a bulk wait sends the held writes out once every target answered, and each answer waits for them', async () => {
    const { link, svc, robotId, stop, stored } = setup();
    link.connect(robotId);
    const subs = [svc.submit(stop(true)), svc.submit(stop(true))];
    const waits = svc.waitForAcks(subs.map((s) => s.commandId), 5000);
    await new Promise((r) => setImmediate(r));
    for (const s of subs) link.ack(robotId, s.commandId);
    expect((await waits).map((d) => d.state)).toEqual(['agent_received', 'agent_received']);
    await Promise.all(subs.map((s) => s.persisted));
    for (const s of subs) expect(stored(s.commandId)?.state).toBe('agent_received');
  });
});

describe("a reconnecting robot's last applied seq", () => {
  it('settles every sent stop at or below it (marked as inferred from the Hello) and resends none', () => {
    const { link, svc, robotId, stop, sentIds } = setup();
    link.connect(robotId);
    const ids = [svc.submit(stop()), svc.submit(stop()), svc.submit(stop()), svc.submit(stop())].map((s) => s.commandId);
    link.disconnect(robotId); // acks lost with the stream (or the settled states with a crashed gateway)
    link.connect(robotId, 3n);
    expect(ids.slice(0, 3).map((id) => [svc.get(id)?.state, svc.get(id)?.ackSource])).toEqual(Array(3).fill(['agent_received', 'hello']));
    expect(svc.get(ids[3] ?? '')?.state).toBe('dispatched');
    // Sent once each; only seq 4, which the agent has not applied, goes again.
    expect(sentIds()).toEqual([...ids, ids[3]]);
  });

  it('settles older non-urgent commands when the applied one is non-urgent: the agent cannot apply them any more', () => {
    const { link, svc, robotId, stop, start, sentIds } = setup();
    link.connect(robotId);
    const ids = [svc.submit(start()), svc.submit(stop()), svc.submit(start())].map((s) => s.commandId);
    link.disconnect(robotId);
    link.connect(robotId, 3n);
    for (const id of ids) expect(svc.get(id)?.state).toBe('agent_received');
    expect(sentIds()).toEqual(ids);
  });

  it('resends an older non-urgent command when the applied one is a stop, which may have overtaken it in a flush', () => {
    const { link, svc, robotId, stop, cancel, sentIds } = setup();
    link.connect(robotId);
    const c = svc.submit(cancel());
    const s = svc.submit(stop());
    link.disconnect(robotId);
    link.connect(robotId, 2n);
    expect(svc.get(s.commandId)?.state).toBe('agent_received');
    expect(svc.get(c.commandId)?.state).toBe('dispatched');
    expect(sentIds()).toEqual([c.commandId, s.commandId, c.commandId]);
  });

  it('leaves alone a command never sent (seq reuse after an OS crash) and one whose applied command is not pending', () => {
    const { link, svc, robotId, stop, start, sentIds } = setup();
    const deferred = svc.submit(stop()); // seq 1, robot offline: never sent
    link.connect(robotId, 1n); // the agent applied a seq 1 of another command
    expect(svc.get(deferred.commandId)?.state).toBe('dispatched');
    expect(sentIds()).toEqual([deferred.commandId]);
    link.ack(robotId, deferred.commandId);
    const older = svc.submit(start());
    const newer = svc.submit(start());
    link.ack(robotId, newer.commandId); // settled: the gateway no longer holds it as pending
    link.disconnect(robotId);
    link.connect(robotId, BigInt(svc.get(newer.commandId)?.seq ?? 0));
    // Which kind the applied command was is not known here: the older one goes to the agent again.
    expect(svc.get(older.commandId)?.state).toBe('dispatched');
    expect(sentIds().at(-1)).toBe(older.commandId);
  });

  it("an ack that arrives after all replaces the inferred state, keeping the history's bound", () => {
    const { link, svc, robotId, stop } = setup();
    link.connect(robotId);
    const first = svc.submit(stop());
    const second = svc.submit(stop());
    link.disconnect(robotId);
    link.connect(robotId, 2n);
    expect(svc.get(first.commandId)).toMatchObject({ state: 'agent_received', ackSource: 'hello' });
    link.ack(robotId, first.commandId, 'rejected', 'agent_busy'); // it was still queued on the robot
    expect(svc.get(first.commandId)).toMatchObject({ state: 'agent_rejected', rejectReason: 'agent_busy', ackSource: 'agent' });
    expect(svc.get(first.commandId)?.history.map((h) => h.state)).toEqual(['dispatched', 'agent_rejected']);
    link.ack(robotId, second.commandId);
    link.ack(robotId, second.commandId, 'rejected', 'late'); // a duplicate of an agent ack changes nothing
    expect(svc.get(second.commandId)).toMatchObject({ state: 'agent_received', ackSource: 'agent', rejectReason: null });
  });
});
