/** Stream tickets: the issuer's rules and the POST /v1/telemetry/stream-tickets route. */
import { identityReads } from '../../src/store/identity-reads.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { streamTicketRoutes } from '../../src/api/routes/stream-tickets.js';
import { StreamTicketRequest, StreamTicketResponse } from '../../src/api/schemas/stream-tickets.js';
import { ApiError } from '../../src/errors/catalog.js';
import type { AuthContext } from '../../src/auth/context.js';
import type { RouteDef } from '../../src/api/route.js';
import { createFleet, createOrg } from '../../src/store/identity.js';
import { openStore, type Store } from '../../src/store/lmdb.js';
import { RequestValidators } from '../../src/http/validation.js';
import { TicketCapacityError, TicketIssuer } from '../../src/telemetry/live/ticket-issuer.js';
import { tempDir } from './helpers.js';

describe('TicketIssuer', () => {
  it('issues 256-bit single-use tickets scoped to org and fleet', () => {
    const issuer = new TicketIssuer();
    const a = issuer.issue({ orgId: 'o1', fleetId: 'f1', apiKeyId: 'k1' });
    const b = issuer.issue({ orgId: 'o1', fleetId: 'f2', apiKeyId: 'k1' });
    expect(Buffer.from(a.ticket, 'base64url')).toHaveLength(32);
    expect(a.ticket).not.toBe(b.ticket);
    expect(issuer.redeem(b.ticket)).toEqual({ orgId: 'o1', fleetId: 'f2', apiKeyId: 'k1' });
    expect(issuer.redeem(a.ticket)).toEqual({ orgId: 'o1', fleetId: 'f1', apiKeyId: 'k1' });
    expect(issuer.redeem(a.ticket)).toBeNull();
    expect(issuer.redeem('not-a-ticket')).toBeNull();
    expect(issuer.outstanding).toBe(0);
  });

  it('expires tickets after the ttl, which is capped at 60 s', () => {
    let now = 1_000_000;
    const issuer = new TicketIssuer({ ttlMs: 10 * 60_000, now: () => now });
    expect(issuer.ttlMs).toBe(60_000);
    const t = issuer.issue({ orgId: 'o', fleetId: 'f', apiKeyId: 'k' });
    expect(t.expiresAtMs).toBe(1_060_000);
    const u = issuer.issue({ orgId: 'o', fleetId: 'f', apiKeyId: 'k' });
    now += 59_999;
    expect(issuer.redeem(u.ticket)).not.toBeNull();
    now += 1;
    expect(issuer.redeem(t.ticket)).toBeNull();
  });

  it('refuses to issue when full of live tickets instead of evicting one', () => {
    let now = 0;
    const issuer = new TicketIssuer({ maxOutstanding: 2, ttlMs: 1_000, now: () => now });
    const first = issuer.issue({ orgId: 'o', fleetId: 'f', apiKeyId: 'k' });
    issuer.issue({ orgId: 'o', fleetId: 'f', apiKeyId: 'k' });
    expect(() => issuer.issue({ orgId: 'o', fleetId: 'f', apiKeyId: 'k' })).toThrow(/too many/);
    expect(issuer.redeem(first.ticket)).not.toBeNull();
    issuer.issue({ orgId: 'o', fleetId: 'f', apiKeyId: 'k' });
    now = 1_000; // all expired: purged on the next issue
    issuer.issue({ orgId: 'o', fleetId: 'f', apiKeyId: 'k' });
    expect(issuer.outstanding).toBe(1);
  });
});

describe('TicketIssuer bounds and key revocation', () => {
  it('bounds outstanding tickets per key and per organization, naming the bound and when a slot frees', () => {
    let now = 0;
    const issuer = new TicketIssuer({ maxPerKey: 2, maxPerOrg: 3, maxOutstanding: 100, ttlMs: 30_000, now: () => now });
    const a1 = issuer.issue({ orgId: 'A', fleetId: 'f', apiKeyId: 'k1' });
    now = 10_000;
    issuer.issue({ orgId: 'A', fleetId: 'f', apiKeyId: 'k1' });
    const refusal = (scope: { orgId: string; apiKeyId: string }): TicketCapacityError => {
      try {
        issuer.issue({ ...scope, fleetId: 'f' });
      } catch (e) {
        if (e instanceof TicketCapacityError) return e;
      }
      throw new Error('expected a TicketCapacityError');
    };
    // k1's oldest ticket expires at 30 s: 20 s from now.
    expect(refusal({ orgId: 'A', apiKeyId: 'k1' })).toMatchObject({ bound: 'api_key', max: 2, retryAfterS: 20 });
    issuer.issue({ orgId: 'A', fleetId: 'f', apiKeyId: 'k2' });
    expect(refusal({ orgId: 'A', apiKeyId: 'k3' })).toMatchObject({ bound: 'organization', max: 3, retryAfterS: 20 });
    issuer.issue({ orgId: 'B', fleetId: 'f', apiKeyId: 'k9' }); // another organization is unaffected
    expect(issuer.redeem(a1.ticket)).not.toBeNull(); // redeeming frees a slot of its key and org
    issuer.issue({ orgId: 'A', fleetId: 'f', apiKeyId: 'k3' });
    now = 40_000; // every ticket issued at 10 s has expired
    issuer.issue({ orgId: 'A', fleetId: 'f', apiKeyId: 'k1' });
    issuer.issue({ orgId: 'A', fleetId: 'f', apiKeyId: 'k1' });
    expect(issuer.outstanding).toBe(2);
  });

  it('refuses at redemption a ticket whose key is no longer usable, and voids a key\'s tickets', () => {
    const revoked = new Set<string>();
    const issuer = new TicketIssuer({ keyUsable: (id) => !revoked.has(id) });
    const t1 = issuer.issue({ orgId: 'o', fleetId: 'f', apiKeyId: 'k1' });
    const t2 = issuer.issue({ orgId: 'o', fleetId: 'f', apiKeyId: 'k1' });
    const t3 = issuer.issue({ orgId: 'o', fleetId: 'f', apiKeyId: 'k2' });
    revoked.add('k1');
    expect(issuer.redeem(t1.ticket)).toBeNull();
    expect([...issuer.apiKeyIds()].sort()).toEqual(['k1', 'k2']);
    expect(issuer.revokeKey('k1')).toBe(1);
    expect(issuer.redeem(t2.ticket)).toBeNull();
    expect([...issuer.apiKeyIds()]).toEqual(['k2']);
    expect(issuer.redeem(t3.ticket)).toEqual({ orgId: 'o', fleetId: 'f', apiKeyId: 'k2' });
  });
});

describe('POST /v1/telemetry/stream-tickets', () => {
  const tmp = tempDir('tickets');
  let store: Store;
  let route: RouteDef;
  let orgId: string;
  let fleetId: string;
  let otherFleetId: string;
  let foreignFleetId: string;
  const tickets = new TicketIssuer();

  beforeAll(() => {
    store = openStore(tmp.dir);
    const org = createOrg(store, 'acme');
    orgId = org.orgId;
    fleetId = createFleet(store, orgId, 'north').fleetId;
    otherFleetId = createFleet(store, orgId, 'south').fleetId;
    foreignFleetId = createFleet(store, createOrg(store, 'other').orgId, 'x').fleetId;
    [route] = streamTicketRoutes({ identity: identityReads(store), tickets, streamUrl: () => 'wss://gw.test:8443/v1/telemetry/stream' }) as [RouteDef];
  });

  afterAll(async () => {
    await store.close();
    tmp.remove();
  });

  const auth = (over: Partial<AuthContext> = {}): AuthContext => ({
    actorType: 'api_key', apiKeyId: 'key-1', orgId, fleetId: null, permissions: ['robots:read'], ...over,
  });
  const call = (a: AuthContext, body: unknown) =>
    route.handler({ params: {}, query: {}, body, headers: {}, auth: a, aborted: new AbortController().signal, nowMs: Date.now(), client: '127.0.0.1' });
  const status = async (p: () => unknown): Promise<number> => {
    try {
      await p();
      return 0;
    } catch (e) {
      return e instanceof ApiError ? e.status : -1;
    }
  };

  it('declares robots:read and a strict {org_id, fleet_id} body', () => {
    expect(route).toMatchObject({ method: 'POST', path: '/v1/telemetry/stream-tickets', auth: 'robots:read' });
    // The gateway's own validators: strict ajv plus the schema keywords the API uses (x-expected, ...).
    const validate = new RequestValidators().body(StreamTicketRequest);
    expect(validate({ org_id: orgId, fleet_id: fleetId })).toBe(true);
    expect(validate({ org_id: orgId, fleet_id: fleetId, extra: 1 })).toBe(false);
    expect(validate({ org_id: orgId })).toBe(false);
    expect(validate({ org_id: orgId, fleet_id: 'not-a-uuid' })).toBe(false);
  });

  it('answers 201 with a redeemable ticket scoped to the fleet and a URL without the secret', async () => {
    const res = await call(auth(), { org_id: orgId, fleet_id: fleetId });
    expect(res.status).toBe(201);
    const body = res.body as StreamTicketResponse;
    expect(new RequestValidators().body(StreamTicketResponse)(body)).toBe(true);
    expect(body.url).toBe('wss://gw.test:8443/v1/telemetry/stream');
    expect(body.url).not.toContain(body.ticket);
    expect(body.expiresAtMs - Date.now()).toBeLessThanOrEqual(60_000);
    expect(tickets.redeem(body.ticket)).toEqual({ orgId, fleetId, apiKeyId: 'key-1' });
    expect(tickets.redeem(body.ticket)).toBeNull();
  });

  it('rejects a wrong org (403), a foreign or unknown fleet (404), a fleet-bound key elsewhere (403)', async () => {
    expect(await status(() => call(auth(), { org_id: '00000000-0000-4000-8000-000000000000', fleet_id: fleetId }))).toBe(403);
    expect(await status(() => call(auth(), { org_id: orgId, fleet_id: foreignFleetId }))).toBe(404);
    expect(await status(() => call(auth(), { org_id: orgId, fleet_id: '00000000-0000-4000-8000-000000000001' }))).toBe(404);
    expect(await status(() => call(auth({ fleetId }), { org_id: orgId, fleet_id: otherFleetId }))).toBe(403);
    expect(tickets.outstanding).toBe(0);
  });
});
