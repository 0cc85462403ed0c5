// The command hold a robot transfer takes (src/fleet/robots/admin, docs/robot-admin.md): while held,
// every new command for that robot (a stop too) is refused with nothing stored or sent; other robots
// are unaffected; the release lifts it; `undeliveredCount` counts deferred and unacknowledged commands.
import { afterEach, describe, expect, it } from 'vitest';
import { CommandService, type SubmitRequest } from '../../src/commands/service.js';
import { makeFixture, type Fixture } from './fixtures.js';
import { TestDoubleLink } from './test-double-link.js';

const open: { svc: CommandService; fx: Fixture }[] = [];
afterEach(async () => {
  for (const { svc, fx } of open.splice(0)) {
    await svc.close();
    await fx.cleanup();
  }
});

describe('CommandService.hold', () => {
  it('refuses every command for a held robot, only that robot, until released', () => {
    const fx = makeFixture(2);
    const link = new TestDoubleLink();
    const svc = new CommandService({ store: fx.store, link });
    open.push({ svc, fx });
    const [a, b] = fx.robots.map((r) => r.record.robotId) as [string, string];
    const stop = (robotId: string): SubmitRequest<'stop'> => ({
      robotId, fleetId: fx.fleet.fleetId, orgId: fx.org.orgId, action: 'stop', args: { reason: 't' }, requestedBy: { actorType: 'api_key' as const, apiKeyId: '00000000-0000-4000-8000-000000000001' },
    });
    const release = svc.hold(a);
    expect(() => svc.submit(stop(a))).toThrow(expect.objectContaining({ status: 409, code: 'conflict' }));
    expect(svc.undeliveredCount(a)).toBe(0);
    // b is offline: its stop is kept (deferred) and counts as undelivered.
    expect(svc.submit(stop(b)).delivery.state).toBe('deferred');
    expect(svc.undeliveredCount(b)).toBe(1);
    release();
    release(); // idempotent
    expect(svc.submit(stop(a)).delivery.state).toBe('deferred');
    expect(svc.undeliveredCount(a)).toBe(1);
  });
});
