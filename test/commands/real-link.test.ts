// The command path end to end over the REAL robot link: grpc-js server (src/robotlink) on 127.0.0.1,
// the real RobotAgent (src/agent) as the robot, LMDB in a temp dir, and the control-robot route
// through the router core.
import { identityReads } from '../../src/store/identity-reads.js';
import type { Command } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { afterEach, describe, expect, it } from 'vitest';
import { RobotAgent, type CommandResult } from '../../src/agent/index.js';
import { controlRobotRoutes } from '../../src/api/routes/control-robot.js';
import type { ControlRobotResponse } from '../../src/api/schemas/control-robot.js';
import { CommandService, type SubmitRequest } from '../../src/commands/service.js';
import type { CommandRecord } from '../../src/commands/types.js';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { ApiKeyVerifier } from '../../src/auth/authenticate.js';
import { createRouter } from '../../src/http/router.js';
import { startRobotLinkServer, type RobotLinkServer } from '../../src/robotlink/index.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { openStore } from '../../src/store/lmdb.js';
import { makeFixture, until, type Fixture } from './fixtures.js';

interface Robot {
  agent: RobotAgent;
  /** Commands the robot's handler applied, in order. */
  applied: Command[];
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function gateway(fx: Fixture, retry?: ConstructorParameters<typeof CommandService>[0]['retry']): Promise<{ server: RobotLinkServer; svc: CommandService }> {
  const server = await startRobotLinkServer({ store: fx.store, host: '127.0.0.1', port: 0, tls: null });
  const svc = new CommandService({ store: fx.store, link: server.link, retry });
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await svc.close();
    await server.close();
  };
  cleanups.push(close);
  return { server, svc };
}

function robot(fx: Fixture, index: number, address: string, decide: (cmd: Command) => CommandResult | Promise<CommandResult> = () => ({ accept: true })): Robot {
  const r = fx.robots[index];
  if (!r) throw new Error('fixture');
  const applied: Command[] = [];
  const agent = new RobotAgent({
    address,
    robotId: r.record.robotId,
    robotToken: r.robotToken,
    dedicatedConnection: true,
    reconnect: { initialMs: 20, maxMs: 100 },
    onCommand: async (cmd) => {
      const d = await decide(cmd);
      if (d.accept) applied.push(cmd);
      return d;
    },
  });
  let stopped = false;
  cleanups.push(async () => {
    if (!stopped) await agent.stop();
    stopped = true;
  });
  return { agent, applied };
}

function stop(fx: Fixture, index: number): SubmitRequest<'stop'> {
  return {
    robotId: fx.robots[index]?.record.robotId ?? '',
    fleetId: fx.fleet.fleetId,
    orgId: fx.org.orgId,
    action: 'stop',
    args: { reason: 'real link test' },
    requestedBy: { actorType: 'api_key' as const, apiKeyId: '00000000-0000-4000-8000-000000000002' },
  };
}

function fixture(): Fixture {
  const fx = makeFixture(2);
  cleanups.push(() => fx.cleanup());
  return fx;
}

describe('commands over the real gRPC link and agent', () => {
  it('dispatches a stop and reports agent_received; the agent applied it once', async () => {
    const fx = fixture();
    const { server, svc } = await gateway(fx);
    const r = robot(fx, 0, server.address);
    r.agent.start();
    await until(() => server.link.isOnline(fx.robots[0]?.record.robotId ?? ''));
    const s = svc.submit(stop(fx, 0));
    expect(s.delivery.state).toBe('dispatched');
    const d = await svc.waitForAck(s.commandId, 5000);
    expect(d).toEqual({ state: 'agent_received', commandId: s.commandId, retryBudgetExhausted: false });
    expect(r.applied.map((c) => c.commandId)).toEqual([s.commandId]);
    expect(r.applied[0]?.action.case).toBe('stop');
  });

  it('defers while the robot is offline and delivers in order when it connects', async () => {
    const fx = fixture();
    const { server, svc } = await gateway(fx);
    const subs = [svc.submit(stop(fx, 0)), svc.submit(stop(fx, 0)), svc.submit(stop(fx, 0))];
    expect(subs.map((s) => s.delivery.state)).toEqual(['deferred', 'deferred', 'deferred']);
    const waits = subs.map((s) => svc.waitForAck(s.commandId, 5000));
    const r = robot(fx, 0, server.address);
    r.agent.start();
    const ds = await Promise.all(waits);
    expect(ds.map((d) => d.state)).toEqual(['agent_received', 'agent_received', 'agent_received']);
    expect(r.applied.map((c) => c.commandId)).toEqual(subs.map((s) => s.commandId));
    expect(r.applied.map((c) => c.seq)).toEqual([1n, 2n, 3n]);
  });

  it('delivers a deferred stop after a gateway restart', async () => {
    const fx = fixture();
    const first = await gateway(fx);
    const s = first.svc.submit(stop(fx, 0));
    await s.persisted;
    await first.svc.close();
    await first.server.close();
    await fx.store.close();

    fx.store = openStore(fx.dir);
    const second = await gateway(fx);
    const r = robot(fx, 0, second.server.address);
    const w = second.svc.waitForAck(s.commandId, 5000);
    r.agent.start();
    expect((await w).state).toBe('agent_received');
    expect(r.applied.map((c) => c.commandId)).toEqual([s.commandId]);
    await second.svc.close();
    expect((fx.store.commands.get(s.commandId) as CommandRecord).history.map((h) => h.state)).toEqual(['deferred', 'dispatched', 'agent_received']);
  });

  it('reports agent_rejected with the agent\'s reason', async () => {
    const fx = fixture();
    const { server, svc } = await gateway(fx);
    const r = robot(fx, 0, server.address, () => ({ accept: false, reason: 'manual override active' }));
    r.agent.start();
    await until(() => server.link.isOnline(fx.robots[0]?.record.robotId ?? ''));
    const s = svc.submit(stop(fx, 0));
    const d = await svc.waitForAck(s.commandId, 5000);
    expect(d).toEqual({ state: 'agent_rejected', commandId: s.commandId, retryBudgetExhausted: false, rejectReason: 'manual override active' });
    expect(r.applied).toHaveLength(0);
  });

  it('times out a wait on a slow robot, then records the late ack', async () => {
    const fx = fixture();
    const { server, svc } = await gateway(fx, { ackTimeoutMs: 10_000 });
    // The robot holds its answer until the caller's wait has timed out.
    let answer = (): void => {};
    const answered = new Promise<void>((resolve) => (answer = resolve));
    const r = robot(fx, 0, server.address, async () => {
      await answered;
      return { accept: true };
    });
    r.agent.start();
    await until(() => server.link.isOnline(fx.robots[0]?.record.robotId ?? ''));
    const s = svc.submit(stop(fx, 0));
    expect((await svc.waitForAck(s.commandId, 50)).state).toBe('timed_out');
    expect(svc.get(s.commandId)?.state).toBe('dispatched');
    answer();
    await until(() => svc.get(s.commandId)?.state === 'agent_received');
  });

  it('resends an unacknowledged command and the agent does not apply the duplicate', async () => {
    const fx = fixture();
    // Resend every 30 ms while the robot's handler holds its answer until a copy has arrived.
    const { server, svc } = await gateway(fx, { ackTimeoutMs: 30, backoffFactor: 1, maxIntervalMs: 30, maxAttempts: 5, tickMs: 10 });
    const r: Robot = robot(fx, 0, server.address, async () => {
      await until(() => r.agent.stats().duplicateCommands > 0, 10_000);
      return { accept: true };
    });
    r.agent.start();
    await until(() => server.link.isOnline(fx.robots[0]?.record.robotId ?? ''));
    const s = svc.submit(stop(fx, 0));
    expect((await svc.waitForAck(s.commandId, 5000)).state).toBe('agent_received');
    expect(svc.get(s.commandId)?.attempts).toBeGreaterThan(1);
    expect(r.agent.stats().duplicateCommands).toBeGreaterThan(0);
    expect(r.applied.map((c) => c.commandId)).toEqual([s.commandId]);
  });

  it('serves POST /v1/agent/control-robot stop with wait_for_ack end to end', async () => {
    const fx = fixture();
    const { server, svc } = await gateway(fx);
    const r0 = robot(fx, 0, server.address);
    r0.agent.start();
    await until(() => server.link.isOnline(fx.robots[0]?.record.robotId ?? ''));
    const router = createRouter(controlRobotRoutes({ identity: identityReads(fx.store), commands: svc }), { auth: new ApiKeyVerifier(fx.store), rateLimiter: new RateLimiter() });
    const key = createApiKey(fx.store, { orgId: fx.org.orgId, fleetId: fx.fleet.fleetId, permissions: ['robots:write'], expiresAtMs: null }).apiKey;
    const ids = fx.robots.map((x) => x.record.robotId);
    const res = await router(
      {
        method: 'POST',
        path: '/v1/agent/control-robot',
        query: '',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify({ org_id: fx.org.orgId, fleet_id: fx.fleet.fleetId, action: 'stop', robot_ids: ids, wait_for_ack_ms: 2000 })),
        remoteAddress: '127.0.0.1',
      },
      new AbortController().signal,
    );
    expect(res.status).toBe(200);
    const body = JSON.parse(res.body as string) as ControlRobotResponse;
    // Robot 0 is online and acks; robot 1 is offline for the whole wait: still deferred (kept for reconnect).
    expect(body.outcomes.map((o) => [o.robotId, o.success, o.delivery?.state])).toEqual([
      [ids[0], true, 'agent_received'],
      [ids[1], true, 'deferred'],
    ]);
    expect(r0.applied).toHaveLength(1);
    const r1 = robot(fx, 1, server.address);
    r1.agent.start();
    await until(() => r1.applied.length === 1);
    expect(r1.applied[0]?.commandId).toBe(body.outcomes[1]?.delivery?.commandId);
  });
});
