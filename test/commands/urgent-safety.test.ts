// Safety rules for stops: never refused by a full backlog, never given up, bounded when repeated;
// and stale motion commands are not delivered after a long absence. Real LMDB, test-double link.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CommandService, STALE_AFTER_MS, type SubmitRequest } from '../../src/commands/service.js';
import { ApiError } from '../../src/errors/catalog.js';
import { makeFixture, until, type Fixture } from './fixtures.js';
import { TestDoubleLink } from './test-double-link.js';

const open: { svc: CommandService; fx: Fixture }[] = [];
afterEach(async () => {
  for (const { svc, fx } of open.splice(0)) {
    await svc.close();
    await fx.cleanup();
  }
});

function setup(opts: Partial<ConstructorParameters<typeof CommandService>[0]> = {}) {
  const fx = makeFixture(1);
  const link = new TestDoubleLink();
  let clock = 1_000_000;
  const svc = new CommandService({ store: fx.store, link, now: () => clock, ...opts });
  open.push({ svc, fx });
  const robot = fx.robots[0]!.record;
  const base = { robotId: robot.robotId, fleetId: fx.fleet.fleetId, orgId: fx.org.orgId, requestedBy: { actorType: 'api_key' as const, apiKeyId: '00000000-0000-4000-8000-000000000001' } };
  const stop = (reason = 'test'): SubmitRequest<'stop'> => ({ ...base, action: 'stop', args: { reason } });
  const start = (): SubmitRequest => ({ ...base, action: 'start', args: {} });
  return { fx, link, svc, robot, stop, start, tick: (ms: number) => (clock += ms), now: () => clock };
}

describe('stops and the outbox bounds', () => {
  it('a full backlog refuses a start but never a stop', () => {
    const { link, svc, robot, stop, start } = setup({ outbox: { maxPerRobot: 2, maxTotal: 10 } });
    link.connect(robot.robotId);
    svc.submit(start());
    svc.submit(start());
    expect(() => svc.submit(start())).toThrow(ApiError);
    const s = svc.submit(stop());
    expect(s.delivery.state).toBe('dispatched');
  });

  it('repeated stops to an offline robot stay bounded: past the bound they fold into a pending one', () => {
    const { svc, robot, stop } = setup({ outbox: { maxUrgentPerRobot: 3 } });
    const ids = Array.from({ length: 10 }, () => svc.submit(stop()).commandId);
    expect(new Set(ids).size).toBe(3);
    expect(svc.stats().pending).toBe(3);
    expect(svc.get(ids[9]!)?.robotId).toBe(robot.robotId);
  });
});

describe('retries', () => {
  it('a stop is never given up: it keeps being resent until acknowledged; a start is', async () => {
    const { link, svc, robot, stop, start, tick } = setup({ retry: { ackTimeoutMs: 10, maxIntervalMs: 10, maxAttempts: 2, tickMs: 5 } });
    link.connect(robot.robotId);
    const st = svc.submit(start());
    const s = svc.submit(stop());
    // The service's clock moves 20 ms, then its retry loop runs (every 5 ms of real time) once more.
    const ticks = vi.spyOn(svc as unknown as { retryTick(): void }, 'retryTick');
    for (let i = 0; i < 8; i++) {
      tick(20);
      const ran = ticks.mock.calls.length;
      await until(() => ticks.mock.calls.length > ran, 2000);
    }
    const sends = link.sentTo(robot.robotId).filter((c) => c.commandId === s.commandId).length;
    expect(sends).toBeGreaterThan(3);
    expect(svc.get(s.commandId)?.retryBudgetExhausted).toBe(false);
    expect(svc.get(st.commandId)?.retryBudgetExhausted).toBe(true);
    link.ack(robot.robotId, s.commandId);
    expect(svc.get(s.commandId)?.state).toBe('agent_received');
  });
});

describe('stale motion commands', () => {
  it('a start sent but unacknowledged is not resent after a long absence; a stop is', () => {
    const { link, svc, robot, stop, start, tick } = setup({ retry: { ackTimeoutMs: 600_000 } });
    link.connect(robot.robotId);
    const st = svc.submit(start());
    const s = svc.submit(stop());
    link.disconnect(robot.robotId);
    tick(STALE_AFTER_MS + 1);
    const before = link.sentTo(robot.robotId).length;
    link.connect(robot.robotId);
    const resent = link.sentTo(robot.robotId).slice(before).map((c) => c.commandId);
    expect(resent).toEqual([s.commandId]);
    expect(svc.get(st.commandId)?.retryBudgetExhausted).toBe(true);
  });

  it('a start still fresh is resent on reconnect', () => {
    const { link, svc, robot, start, tick } = setup({ retry: { ackTimeoutMs: 600_000 } });
    link.connect(robot.robotId);
    const st = svc.submit(start());
    link.disconnect(robot.robotId);
    tick(1000);
    const before = link.sentTo(robot.robotId).length;
    link.connect(robot.robotId);
    expect(link.sentTo(robot.robotId).slice(before).map((c) => c.commandId)).toEqual([st.commandId]);
  });
});
