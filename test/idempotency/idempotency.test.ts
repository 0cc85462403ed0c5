// Spec Conventions 3 through the real HTTP stack (uWS + router + LMDB): a test route that counts how
// often its handler really ran, wrapped in withIdempotency.
import { spawnSync } from 'node:child_process';
import { Type } from '@sinclair/typebox';
import { afterEach, describe, expect, it } from 'vitest';
import { Uuid } from '../../src/api/schemas/common.js';
import { apiError } from '../../src/errors/catalog.js';
import type { HandlerResult, RouteContext, RouteDef } from '../../src/api/route.js';
import {
  BOOT,
  bodyHash,
  CLAIM_LEASE_MS,
  purgeExpired,
  REPLAY_WINDOW_MS,
  withIdempotency,
  type IdempotencyRecord,
} from '../../src/idempotency/index.js';
import { storageKey } from '../../src/idempotency/keys.js';
import { req, startStack, type Stack, type StackServices } from './harness.js';

const Params = Type.Object({ org_id: Uuid, fleet_id: Uuid }, { additionalProperties: false });
const Body = Type.Object(
  {
    name: Type.String(),
    tags: Type.Optional(Type.Object({}, { additionalProperties: true })),
    fail: Type.Optional(Type.Union([Type.Literal('throw'), Type.Literal('503')])),
    wait: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);
const ENDPOINT = 'POST /v1/orgs/{org_id}/fleets/{fleet_id}/things';

interface World {
  runs: number;
  nowMs: number;
  gate: { promise: Promise<void>; open: () => void } | null;
}

function thingRoutes(world: World) {
  return ({ idempotency }: StackServices): RouteDef[] => {
    // A plain RouteDef (not defineRoute): the router validated params and body against Params and Body.
    const handler = (replayable: boolean) => (ctx: RouteContext) => {
      const params = ctx.params as { org_id: string; fleet_id: string };
      const body = ctx.body as { name: string; fail?: string; wait?: boolean };
      return withIdempotency(
        idempotency,
        { actor: ctx.auth.apiKeyId, orgId: params.org_id, fleetId: params.fleet_id, endpoint: ENDPOINT },
        ctx.idempotencyKey,
        body,
        async (): Promise<HandlerResult> => {
          world.runs += 1;
          if (body.wait && world.gate) await world.gate.promise;
          if (body.fail === 'throw') throw apiError('unavailable', { what: 'test backend' });
          if (body.fail === '503') return { status: 503, body: { error: 'down', code: 'unavailable' } };
          return { status: 201, body: { thingId: `t${world.runs}`, name: body.name, secret: replayable ? null : `s${world.runs}` } };
        },
        { replayable, now: () => world.nowMs },
      );
    };
    const def = (path: string, replayable: boolean): RouteDef => ({
      method: 'POST',
      path,
      operationId: `make${path.length}`,
      summary: 'test',
      tags: ['test'],
      auth: 'missions:write',
      params: Params,
      body: Body,
      idempotencyKey: 'required',
      responses: { 201: { description: 'made' } },
      handler: handler(replayable),
    });
    return [def('/v1/orgs/{org_id}/fleets/{fleet_id}/things', true), def('/v1/orgs/{org_id}/fleets/{fleet_id}/secrets', false)];
  };
}

const stacks: Stack[] = [];
afterEach(async () => {
  for (const s of stacks.splice(0)) await s.close();
});

async function setup(): Promise<{ s: Stack; world: World; path: string; post: (body: unknown, idem?: string, key?: string) => ReturnType<typeof req> }> {
  const world: World = { runs: 0, nowMs: Date.UTC(2030, 0, 1), gate: null };
  const s = await startStack(thingRoutes(world));
  stacks.push(s);
  const path = `/v1/orgs/${s.orgId}/fleets/${s.fleetId}/things`;
  const post = (body: unknown, idem?: string, key?: string) => req(s, 'POST', path, { body, ...(idem !== undefined ? { idem } : {}), ...(key ? { key } : {}) });
  return { s, world, path, post };
}

function gate(world: World): () => void {
  let open = (): void => {};
  const promise = new Promise<void>((r) => (open = r));
  world.gate = { promise, open };
  return open;
}

describe('Idempotency-Key (spec Conventions 3)', () => {
  it('is required: a missing or malformed header is 400 bad_request and the handler never runs', async () => {
    const { post, world } = await setup();
    const missing = await post({ name: 'a' });
    expect(missing.status).toBe(400);
    expect(missing.json).toEqual({ code: 'bad_request', error: 'This endpoint requires an Idempotency-Key header.' });
    const long = await post({ name: 'a' }, 'k'.repeat(256));
    expect(long).toMatchObject({ status: 400, json: { code: 'bad_request' } });
    expect(world.runs).toBe(0);
  });

  it('replays the original status and body for the same key and body, without running again', async () => {
    const { post, world } = await setup();
    const first = await post({ name: 'a', tags: { x: 1, y: 2 } }, 'key-1');
    expect(first.status).toBe(201);
    expect(first.json).toEqual({ thingId: 't1', name: 'a', secret: null });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    // Same body with keys in another order: the body is compared as canonical JSON.
    const again = await post('{"tags":{"y":2,"x":1},"name":"a"}', 'key-1');
    expect(again.status).toBe(201);
    expect(again.json).toEqual(first.json);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(world.runs).toBe(1);
  });

  it('answers 409 conflict for the same key with a different body', async () => {
    const { post, world } = await setup();
    expect((await post({ name: 'a' }, 'key-2')).status).toBe(201);
    const other = await post({ name: 'b' }, 'key-2');
    expect(other.status).toBe(409);
    expect(other.json.code).toBe('conflict');
    expect(other.json.error).toMatch(/different request body/);
    expect(world.runs).toBe(1);
  });

  it('scopes the key to the actor and the fleet: another key or fleet runs afresh', async () => {
    const { s, post, world } = await setup();
    expect((await post({ name: 'a' }, 'shared')).json.thingId).toBe('t1');
    expect((await post({ name: 'a' }, 'shared', s.key2)).json.thingId).toBe('t2');
    const elsewhere = await req(s, 'POST', `/v1/orgs/${s.orgId}/fleets/${s.otherFleetId}/things`, { body: { name: 'a' }, idem: 'shared' });
    expect(elsewhere.json.thingId).toBe('t3');
    expect(world.runs).toBe(3);
  });

  it('a concurrent request waits for the running first one and gets its answer; it never runs twice', async () => {
    const { post, world } = await setup();
    const open = gate(world);
    const first = post({ name: 'a', wait: true }, 'key-3');
    await expect.poll(() => world.runs).toBe(1);
    const during = post({ name: 'a', wait: true }, 'key-3');
    // Another body under the running key is still a conflict, answered at once.
    expect((await post({ name: 'b', wait: true }, 'key-3')).status).toBe(409);
    open();
    const [a, b] = await Promise.all([first, during]);
    expect(a).toMatchObject({ status: 201, json: { thingId: 't1' } });
    expect(b).toMatchObject({ status: 201, json: { thingId: 't1' } });
    expect(b.headers.get('idempotent-replayed')).toBe('true');
    expect(world.runs).toBe(1);
  });

  it('releases the claim when the handler throws or answers 5xx, so a retry runs', async () => {
    const { post, world } = await setup();
    expect((await post({ name: 'a', fail: 'throw' }, 'key-4')).status).toBe(503);
    expect((await post({ name: 'a', fail: 'throw' }, 'key-4')).status).toBe(503);
    expect(world.runs).toBe(2);
    expect((await post({ name: 'b', fail: '503' }, 'key-5')).status).toBe(503);
    expect((await post({ name: 'b', fail: '503' }, 'key-5')).status).toBe(503);
    expect(world.runs).toBe(4);
  });

  it('replays across a restart (store closed and reopened)', async () => {
    const { s, post, world } = await setup();
    const first = await post({ name: 'persist' }, 'key-6');
    expect(first.status).toBe(201);
    await s.restart();
    const again = await post({ name: 'persist' }, 'key-6');
    expect(again).toMatchObject({ status: 201, json: first.json });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect((await post({ name: 'other' }, 'key-6')).status).toBe(409);
    expect(world.runs).toBe(1);
  });

  it('a claim left running by a closed store (same process, restarted) does not block the key', async () => {
    const { s, post, world } = await setup();
    gate(world);
    void post({ name: 'a', wait: true }, 'key-7').catch(() => undefined);
    await expect.poll(() => world.runs).toBe(1);
    await s.restart();
    world.gate = null;
    const retry = await post({ name: 'a', wait: true }, 'key-7');
    expect(retry).toMatchObject({ status: 201, json: { thingId: 't2' } });
  });

  it('a claim of a crashed process (dead pid) is stale; one of a live process blocks until its lease ends', async () => {
    const { s, post, world } = await setup();
    const scope = { actor: s.keyId, orgId: s.orgId, fleetId: s.fleetId, endpoint: ENDPOINT };
    const leave = async (key: string, pid: number): Promise<void> => {
      const rec: IdempotencyRecord = {
        bodyHash: bodyHash({ name: 'a' }),
        state: 'running',
        owner: { bootId: 'another-boot', pid },
        leaseUntilMs: world.nowMs + CLAIM_LEASE_MS,
        reply: null,
        createdAtMs: world.nowMs,
        expiresAtMs: world.nowMs + CLAIM_LEASE_MS + REPLAY_WINDOW_MS,
      };
      await s.store.idempotency.put(storageKey(scope, key), rec);
    };
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    await leave('crashed', dead);
    expect((await post({ name: 'a' }, 'crashed')).status).toBe(201);

    // A live pid that is not ours (the test runner's parent) within its lease: still running elsewhere.
    expect(process.ppid).not.toBe(BOOT.pid);
    await leave('elsewhere', process.ppid);
    expect((await post({ name: 'a' }, 'elsewhere')).status).toBe(409);
    world.nowMs += CLAIM_LEASE_MS;
    expect((await post({ name: 'a' }, 'elsewhere')).status).toBe(201);
    expect(world.runs).toBe(2);
  });

  it('replays for 24 h only; expired records are purged', async () => {
    const { s, post, world } = await setup();
    expect((await post({ name: 'a' }, 'key-8')).json.thingId).toBe('t1');
    world.nowMs += REPLAY_WINDOW_MS - 1;
    expect((await post({ name: 'a' }, 'key-8')).json.thingId).toBe('t1');
    expect(await purgeExpired(s.store, world.nowMs)).toBe(0);
    world.nowMs += 1;
    expect(await purgeExpired(s.store, world.nowMs)).toBe(1);
    expect([...s.store.idempotency.getKeys()]).toHaveLength(0);
    expect([...s.store.index.getKeys({ start: 'idemExpiry/', end: 'idemExpiry/\uffff' })]).toHaveLength(0);
    expect((await post({ name: 'a' }, 'key-8')).json.thingId).toBe('t2');
  });

  it('a non-replayable response (it holds a secret) is never stored; the used key answers 409', async () => {
    const { s, world } = await setup();
    const path = `/v1/orgs/${s.orgId}/fleets/${s.fleetId}/secrets`;
    const first = await req(s, 'POST', path, { body: { name: 'k' }, idem: 'key-9' });
    expect(first.json).toEqual({ thingId: 't1', name: 'k', secret: 's1' });
    const again = await req(s, 'POST', path, { body: { name: 'k' }, idem: 'key-9' });
    expect(again.status).toBe(409);
    expect(JSON.stringify(again.json)).not.toContain('s1');
    expect(world.runs).toBe(1);
    for (const rec of s.store.idempotency.getRange()) expect(JSON.stringify(rec.value)).not.toContain('"s1"');
  });
});
