// Stop and pause jump ahead of everything queued for a robot, and can never be undone by an older
// motion command: the gateway side (reconnect flush order, with a real LMDB and the RobotLink test
// double) and the agent side (CommandProcessor, the real robot-side code).
import { create, type MessageInitShape } from '@bufbuild/protobuf';
import { afterEach, describe, expect, it } from 'vitest';
import { CommandProcessor } from '../../src/agent/command-processor.js';
import type { Decision } from '../../src/agent/command-ledger.js';
import { CommandService, type SubmitRequest } from '../../src/commands/service.js';
import { CommandAck_Status, CommandSchema, MissionControl_Action, type Command } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { simPolicy } from '../../src/sim/index.js';
import { makeFixture, type Fixture } from './fixtures.js';
import { TestDoubleLink } from './test-double-link.js';
import { until } from '../support/until.js';

const open: { svc: CommandService; fx: Fixture }[] = [];
afterEach(async () => {
  for (const { svc, fx } of open.splice(0)) {
    await svc.close();
    await fx.cleanup();
  }
});

describe('gateway: urgent commands first on reconnect', () => {
  it('sends a deferred stop and mission pause before older unacknowledged commands, then those in seq order', () => {
    const fx = makeFixture(1);
    const link = new TestDoubleLink();
    const svc = new CommandService({ store: fx.store, link });
    open.push({ svc, fx });
    const robotId = fx.robots[0]!.record.robotId;
    const req = <R extends Pick<SubmitRequest, 'action' | 'args'>>(c: R): SubmitRequest =>
      ({ robotId, fleetId: fx.fleet.fleetId, orgId: fx.org.orgId, requestedBy: { actorType: 'api_key' as const, apiKeyId: 'k' }, ...c });
    link.connect(robotId, 0n, simPolicy());
    const mode = svc.submit(req({ action: 'mode', args: { mode: 'manual' } }));
    const settings = svc.submit(req({ action: 'update_settings', args: { values: { lights_enabled: true } } }));
    link.disconnect(robotId);
    const stop = svc.submit(req({ action: 'stop', args: { reason: 'r' } }));
    const pause = svc.submit(req({ action: 'mission_control', args: { runId: 'run-1', action: 'pause' } }));
    const cancel = svc.submit(req({ action: 'mission_control', args: { runId: 'run-1', action: 'cancel' } }));
    expect([stop, pause, cancel].map((s) => s.delivery.state)).toEqual(['deferred', 'deferred', 'deferred']);
    // Resume is not kept for an offline robot (spec: 503).
    expect(() => svc.submit(req({ action: 'mission_control', args: { runId: 'run-1', action: 'resume' } }))).toThrow(/offline/);
    const before = link.sentTo(robotId).length;
    link.connect(robotId, 0n, simPolicy());
    const flushed = link.sentTo(robotId).slice(before).map((c) => c.commandId);
    expect(flushed).toEqual([stop.commandId, pause.commandId, mode.commandId, settings.commandId, cancel.commandId]);
    // Wire seqs stay the creation order: what lets the agent see the mode as older than the stop.
    expect(link.sentTo(robotId).slice(before).map((c) => c.seq)).toEqual([3n, 4n, 1n, 2n, 5n]);
  });
});

function cmd(commandId: string, seq: bigint, action: MessageInitShape<typeof CommandSchema>['action']): Command {
  return create(CommandSchema, { commandId, seq, issuedAtMs: 1n, action });
}

function processor(handler: (c: Command) => Promise<{ accept: true }> | { accept: true }) {
  const acks: { id: string; d: Decision }[] = [];
  const p = new CommandProcessor(handler, (id, d) => acks.push({ id, d }), () => {}, { memory: 64, maxPending: 16, lastAppliedSeq: 0n });
  return { p, acks };
}

/** Waits until the processor has acknowledged `n` commands in all (each decision ends in an ack). */
const acked = (acks: unknown[], n: number): Promise<number> => until(() => acks.length >= n, 5000, `${n} acks`);

describe('agent: urgent lane and superseded motion', () => {
  it('applies an older non-motion command after a stop that overtook it (no stale_seq), but never an older start', async () => {
    const applied: string[] = [];
    const { p, acks } = processor((c) => (applied.push(c.commandId), { accept: true }));
    p.handle(cmd('stop', 3n, { case: 'stop', value: { reason: 'x' } }));
    p.handle(cmd('start', 1n, { case: 'start', value: {} }));
    p.handle(cmd('settings', 2n, { case: 'updateSettings', value: { valuesJson: '{}' } }));
    p.handle(cmd('start-after', 4n, { case: 'start', value: {} }));
    await acked(acks, 4);
    expect(applied).toEqual(['stop', 'settings', 'start-after']);
    const byId = new Map(acks.map((a) => [a.id, a.d]));
    expect(byId.get('start')).toEqual({ status: CommandAck_Status.REJECTED, reason: 'superseded_by_stop' });
    expect(byId.get('settings')?.status).toBe(CommandAck_Status.RECEIVED);
    expect(p.lastAppliedSeq).toBe(4n);
  });

  it('runs a stop while a slow ordinary command is still being handled, and rejects a queued resume behind it', async () => {
    const order: string[] = [];
    let release: () => void = () => {};
    const { p, acks } = processor(async (c) => {
      order.push(`begin ${c.commandId}`);
      if (c.commandId === 'slow') await new Promise<void>((r) => (release = r));
      order.push(`end ${c.commandId}`);
      return { accept: true };
    });
    // A settings update: not a motion command, so the stop does not supersede it.
    p.handle(cmd('slow', 1n, { case: 'updateSettings', value: { valuesJson: '{}' } }));
    p.handle(cmd('resume', 2n, { case: 'missionControl', value: { runId: 'r', action: MissionControl_Action.RESUME } }));
    p.handle(cmd('pause', 3n, { case: 'missionControl', value: { runId: 'r', action: MissionControl_Action.PAUSE } }));
    await acked(acks, 1);
    expect(order).toEqual(['begin slow', 'begin pause', 'end pause']);
    release();
    await acked(acks, 3);
    expect(order).toEqual(['begin slow', 'begin pause', 'end pause', 'end slow']);
    expect(acks.find((a) => a.id === 'resume')?.d.reason).toBe('superseded_by_stop');
  });

  it('reports an applied stop as the last applied seq (the gateway settles it from the Hello)', async () => {
    const { p, acks } = processor(() => ({ accept: true }));
    p.handle(cmd('m', 1n, { case: 'setMode', value: { mode: 'manual' } }));
    await acked(acks, 1);
    p.handle(cmd('s', 2n, { case: 'stop', value: { reason: '' } }));
    await acked(acks, 2);
    expect(p.lastAppliedSeq).toBe(2n);
  });

  it('still applies a duplicate stop at most once', async () => {
    let n = 0;
    const { p, acks } = processor(() => (n++, { accept: true }));
    const stop = cmd('s', 1n, { case: 'stop', value: { reason: '' } });
    p.handle(stop);
    await acked(acks, 1);
    p.handle(stop);
    await acked(acks, 2);
    expect(n).toBe(1);
    expect(acks).toHaveLength(2);
  });
});
