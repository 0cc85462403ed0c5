// CommandService.submitOnce (issue 8 item 12): a caller-chosen, deterministic command id is created
// once; submitting it again, also from a new service on the same store (a restart), finds the
// existing command and sends nothing new.
import { afterEach, describe, expect, it } from 'vitest';
import { CommandService, type SubmitRequest } from '../../src/commands/service.js';
import { derivedCommandId } from '../../src/missions/scheduling/derived-command-id.js';
import { makeFixture, type Fixture } from './fixtures.js';
import { TestDoubleLink } from './test-double-link.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function stop(fx: Fixture, robotId: string): SubmitRequest<'stop'> {
  return { robotId, fleetId: fx.fleet.fleetId, orgId: fx.org.orgId, action: 'stop', args: { reason: 'scheduled' }, requestedBy: { actorType: 'api_key' as const, apiKeyId: '00000000-0000-4000-8000-000000000001' } };
}

describe('CommandService.submitOnce', () => {
  it('creates the command under the chosen id once; again (also after a restart) returns it and sends nothing', async () => {
    const fx = makeFixture(1);
    cleanups.push(() => fx.cleanup());
    const robotId = fx.robots[0]!.record.robotId;
    const id = derivedCommandId('scheduled_command', 'schedule/0000000000000001', robotId);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(derivedCommandId('scheduled_command', 'schedule/0000000000000001', robotId)).toBe(id);
    expect(derivedCommandId('scheduled_command', 'schedule/0000000000000002', robotId)).not.toBe(id);

    const link = new TestDoubleLink();
    const svc = new CommandService({ store: fx.store, link });
    link.connect(robotId);
    const first = svc.submitOnce(id, stop(fx, robotId));
    expect(first.commandId).toBe(id);
    await first.persisted;
    const again = svc.submitOnce(id, stop(fx, robotId));
    expect(again).toMatchObject({ commandId: id, delivery: { state: 'dispatched' } });
    expect(link.sentTo(robotId).map((c) => c.commandId)).toEqual([id]);
    await svc.close();

    const link2 = new TestDoubleLink();
    const svc2 = new CommandService({ store: fx.store, link: link2 });
    cleanups.push(() => svc2.close());
    const afterRestart = svc2.submitOnce(id, stop(fx, robotId));
    expect(afterRestart.commandId).toBe(id);
    await afterRestart.persisted;
    expect(link2.sentTo(robotId)).toHaveLength(0);
    // The one command is still owed to the robot: its reconnect delivers it, under the same id.
    link2.connect(robotId);
    expect(link2.sentTo(robotId).map((c) => c.commandId)).toEqual([id]);
  });
});
