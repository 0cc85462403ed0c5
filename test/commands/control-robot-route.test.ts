// POST /v1/agent/control-robot through the real router core (auth, rate limit, ajv validation), with
// a real LMDB and the command service; the robot side is the RobotLink test double here (the real
// gRPC link + agent: real-link.test.ts).
import { identityReads } from '../../src/store/identity-reads.js';
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { controlRobotRoutes, ackWaitMs } from '../../src/api/routes/control-robot.js';
import type { ControlRobotBody, ControlRobotResponse } from '../../src/api/schemas/control-robot.js';
import { CommandService } from '../../src/commands/service.js';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { ApiKeyVerifier } from '../../src/auth/authenticate.js';
import { createRouter, type Router } from '../../src/http/router.js';
import type { PlainResponse } from '../../src/http/types.js';
import { addRobot, createFleet } from '../../src/store/identity.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { makeFixture, type Fixture } from './fixtures.js';
import { TestDoubleLink } from './test-double-link.js';

interface Ctx {
  fx: Fixture;
  link: TestDoubleLink;
  svc: CommandService;
  router: Router;
  key: string;
  a: string;
  b: string;
  post(body: unknown, key?: string): Promise<PlainResponse & { json: Record<string, unknown> }>;
}

const live: Ctx[] = [];
afterEach(async () => {
  for (const c of live.splice(0)) {
    await c.svc.close();
    await c.fx.cleanup();
  }
});

function setup(): Ctx {
  const fx = makeFixture(2);
  const link = new TestDoubleLink();
  const svc = new CommandService({ store: fx.store, link });
  const router = createRouter(controlRobotRoutes({ identity: identityReads(fx.store), commands: svc }), { auth: new ApiKeyVerifier(fx.store), rateLimiter: new RateLimiter({ burst: 1000 }) });
  const key = createApiKey(fx.store, { orgId: fx.org.orgId, fleetId: null, permissions: ['robots:write'], expiresAtMs: null }).apiKey;
  const post = async (body: unknown, k = key) => {
    const res = await router(
      {
        method: 'POST',
        path: '/v1/agent/control-robot',
        query: '',
        headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify(body)),
        remoteAddress: '127.0.0.1',
      },
      new AbortController().signal,
    );
    return { ...res, json: JSON.parse(res.body as string) as Record<string, unknown> };
  };
  const c: Ctx = { fx, link, svc, router, key, a: fx.robots[0]?.record.robotId ?? '', b: fx.robots[1]?.record.robotId ?? '', post };
  live.push(c);
  return c;
}

const base = (c: Ctx): Pick<ControlRobotBody, 'org_id' | 'fleet_id' | 'action'> => ({ org_id: c.fx.org.orgId, fleet_id: c.fx.fleet.fleetId, action: 'stop' });

describe('control-robot validation', () => {
  it.each([
    [{ wait_for_ack: true, wait_for_ack_ms: 100 }],
    [{ waitForAck: true, waitForAckMs: 100 }],
    [{ wait_for_ack: true, waitForAckMs: 100 }],
    [{ wait_for_ack_ms: 100, waitForAckMs: 100 }],
  ])('rejects two ack-wait fields %j with 400', async (wait) => {
    const c = setup();
    const res = await c.post({ ...base(c), robot_id: c.a, ...wait });
    expect(res.status).toBe(400);
    expect(res.json).toEqual({ code: 'bad_request', error: 'Send either wait_for_ack or wait_for_ack_ms, not both.' });
    expect(c.link.sentTo(c.a)).toHaveLength(0);
    expect(c.svc.stats().pending).toBe(0);
  });

  it('rejects more than 100 targets', async () => {
    const c = setup();
    const ids = Array.from({ length: 100 }, () => randomUUID());
    const over = await c.post({ ...base(c), robot_ids: [...ids, randomUUID()] });
    expect(over.status).toBe(400);
    expect(over.json.code).toBe('bad_request');
    const combined = await c.post({ ...base(c), robot_id: c.a, robot_ids: ids });
    expect(combined.status).toBe(400);
    expect(combined.json).toEqual({ code: 'bad_request', error: 'At most 100 robots per request.' });
    // Duplicates count once: robot_id repeated inside robot_ids stays at 100.
    const dup = await c.post({ ...base(c), robot_id: ids[0], robot_ids: ids });
    expect(dup.status).toBe(502); // 100 unknown robots, all not_found
    expect((dup.json as unknown as ControlRobotResponse).count).toBe(100);
  });

  it('rejects unknown fields, malformed ids, bad wait values and a missing target', async () => {
    const c = setup();
    for (const body of [
      { ...base(c), robot_id: c.a, extra: 1 },
      { ...base(c), robot_id: 'not-a-uuid' },
      { ...base(c), robot_ids: c.a },
      { ...base(c), robot_id: c.a, wait_for_ack: false },
      { ...base(c), robot_id: c.a, wait_for_ack_ms: 0 },
      { ...base(c), robot_id: c.a, waitForAckMs: 1.5 },
      { ...base(c), action: 'dance', robot_id: c.a },
      { org_id: c.fx.org.orgId, action: 'stop', robot_id: c.a },
    ]) {
      const res = await c.post(body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.code).toBe('bad_request');
    }
    const none = await c.post({ ...base(c) });
    expect(none.status).toBe(400);
    expect(none.json.error).toBe('Name at least one robot with robot_id or robot_ids.');
    expect(c.svc.stats().pending).toBe(0);
  });

  it('fails start for an offline robot with unavailable and sends nothing', async () => {
    const c = setup();
    const res = await c.post({ ...base(c), action: 'start', robot_id: c.a });
    expect(res.status).toBe(502);
    const out = (res.json as unknown as ControlRobotResponse).outcomes[0];
    expect(out?.success).toBe(false);
    expect(out?.error?.code).toBe('unavailable');
    expect(out?.error?.message).toContain('offline');
    expect(c.svc.stats().pending).toBe(0);
  });

  it('checks permission, organization and fleet', async () => {
    const c = setup();
    const readOnly = createApiKey(c.fx.store, { orgId: c.fx.org.orgId, fleetId: null, permissions: ['robots:read'], expiresAtMs: null }).apiKey;
    expect((await c.post({ ...base(c), robot_id: c.a }, readOnly)).status).toBe(403);
    expect((await c.post({ ...base(c), org_id: randomUUID(), robot_id: c.a })).status).toBe(403);
    expect((await c.post({ ...base(c), fleet_id: randomUUID(), robot_id: c.a })).status).toBe(404);
    const other = createFleet(c.fx.store, c.fx.org.orgId, 'other');
    const scoped = createApiKey(c.fx.store, { orgId: c.fx.org.orgId, fleetId: other.fleetId, permissions: ['robots:write'], expiresAtMs: null }).apiKey;
    expect((await c.post({ ...base(c), robot_id: c.a }, scoped)).status).toBe(403);
    expect(c.link.sentTo(c.a)).toHaveLength(0);
  });

  it('caps the wait at 30 s', () => {
    expect(ackWaitMs({ wait_for_ack_ms: 600_000 })).toBe(30_000);
    expect(ackWaitMs({ waitForAck: true })).toBe(30_000);
    expect(ackWaitMs({ waitForAckMs: 250 })).toBe(250);
    expect(ackWaitMs({})).toBeNull();
  });
});

describe('control-robot stop', () => {
  it('dispatches to an online robot and defers for an offline one (200)', async () => {
    const c = setup();
    c.link.connect(c.a);
    const res = await c.post({ ...base(c), robot_ids: [c.a, c.b] });
    expect(res.status).toBe(200);
    const body = res.json as unknown as ControlRobotResponse;
    expect(body).toMatchObject({ success: true, action: 'stop', count: 2 });
    expect(body.outcomes.map((o) => [o.robotId, o.success, o.delivery?.state])).toEqual([
      [c.a, true, 'dispatched'],
      [c.b, true, 'deferred'],
    ]);
    // The answer left only after the records committed.
    const id = body.outcomes[1]?.delivery?.commandId ?? '';
    expect(c.fx.store.commands.get(id)).toMatchObject({ state: 'deferred', robotId: c.b });
    c.link.connect(c.b);
    expect(c.link.sentTo(c.b).map((x) => x.commandId)).toEqual([id]);
  });

  it('starts every dispatch before collecting acks, and reports agent_received', async () => {
    const c = setup();
    c.link.connect(c.a);
    c.link.connect(c.b);
    const pending = c.post({ ...base(c), robot_ids: [c.a, c.b], waitForAck: true });
    // Both commands are already on their streams while the request waits.
    await new Promise((r) => setImmediate(r));
    const ca = c.link.sentTo(c.a)[0]?.commandId ?? '';
    const cb = c.link.sentTo(c.b)[0]?.commandId ?? '';
    expect(ca).not.toBe('');
    expect(cb).not.toBe('');
    c.link.ack(c.b, cb);
    c.link.ack(c.a, ca);
    const res = await pending;
    expect(res.status).toBe(200);
    const body = res.json as unknown as ControlRobotResponse;
    expect(body.outcomes.map((o) => o.delivery)).toEqual([
      { state: 'agent_received', commandId: ca, retryBudgetExhausted: false },
      { state: 'agent_received', commandId: cb, retryBudgetExhausted: false },
    ]);
  });

  it('reports timed_out as success (not proof of failure) after wait_for_ack_ms', async () => {
    const c = setup();
    c.link.connect(c.a);
    const t0 = Date.now();
    const res = await c.post({ ...base(c), robot_id: c.a, wait_for_ack_ms: 60 });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(55);
    expect(res.status).toBe(200);
    expect((res.json as unknown as ControlRobotResponse).outcomes[0]).toMatchObject({ success: true, delivery: { state: 'timed_out', retryBudgetExhausted: false } });
  });

  it('answers 207 for mixed outcomes and 502 when every target failed', async () => {
    const c = setup();
    c.link.connect(c.a);
    c.link.connect(c.b);
    const foreign = addRobot(c.fx.store, { fleetId: createFleet(c.fx.store, c.fx.org.orgId, 'x').fleetId, name: 'f', capabilities: [], active: true }).record.robotId;
    const mixed = c.post({ ...base(c), robot_ids: [c.a, c.b, foreign], wait_for_ack: true });
    await new Promise((r) => setImmediate(r));
    c.link.ack(c.a, c.link.sentTo(c.a)[0]?.commandId ?? '');
    c.link.ack(c.b, c.link.sentTo(c.b)[0]?.commandId ?? '', 'rejected', 'manual mode');
    const res = await mixed;
    expect(res.status).toBe(207);
    const body = res.json as unknown as ControlRobotResponse;
    expect(body).toMatchObject({ success: false, count: 3, code: 'partial_failure', error: '2 of 3 targets failed; see outcomes.' });
    expect(body.outcomes[0]).toMatchObject({ robotId: c.a, success: true, delivery: { state: 'agent_received' } });
    expect(body.outcomes[1]).toMatchObject({
      robotId: c.b,
      success: false,
      delivery: { state: 'agent_rejected' },
      error: { code: 'policy_rejected', message: 'The robot agent rejected the command: manual mode.' },
    });
    expect(body.outcomes[2]).toEqual({ robotId: foreign, success: false, error: { code: 'not_found', message: `Robot ${foreign} was not found.` } });
    expect(c.link.sentTo(foreign)).toHaveLength(0);

    const all = await c.post({ ...base(c), robot_ids: [foreign, randomUUID()] });
    expect(all.status).toBe(502);
    expect(all.json).toMatchObject({ success: false, count: 2, code: 'unavailable', error: 'Every target of the command failed.' });
  });

  it('ends the wait when the client goes away', async () => {
    const c = setup();
    c.link.connect(c.a);
    const ac = new AbortController();
    const res = c.router(
      {
        method: 'POST',
        path: '/v1/agent/control-robot',
        query: '',
        headers: { authorization: `Bearer ${c.key}`, 'content-type': 'application/json' },
        body: Buffer.from(JSON.stringify({ ...base(c), robot_id: c.a, wait_for_ack: true })),
        remoteAddress: '127.0.0.1',
      },
      ac.signal,
    );
    await new Promise((r) => setImmediate(r));
    expect(c.svc.stats().waiters).toBe(1);
    ac.abort();
    const out = await res;
    expect(out.status).toBe(200);
    expect(c.svc.stats().waiters).toBe(0);
  });
});
