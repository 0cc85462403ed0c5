/**
 * Issue 10 part 8, fast checks without sockets: password digests, the login throttle, session tokens
 * and CSRF, session verification (expiry, revocation, CSRF), role-bounded key requests, and the
 * router's cookie path beside the unchanged API-key path.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkUserKeyRequest } from '../../src/auth/api-keys.js';
import { ApiKeyVerifier } from '../../src/auth/authenticate.js';
import { LoginThrottle } from '../../src/auth/users/login-throttle.js';
import { hashPassword, SCRYPT_PARAMS, verifyPassword } from '../../src/auth/users/password.js';
import { ROLE_PERMISSIONS } from '../../src/auth/users/roles.js';
import { cookieValue, csrfFor, csrfMatches, mintSessionToken, parseSessionToken } from '../../src/auth/users/session-token.js';
import { revokeUserSessions, SessionService } from '../../src/auth/users/sessions.js';
import { createUser } from '../../src/auth/users/users.js';
import { defineRoute } from '../../src/api/define-route.js';
import { createRouter } from '../../src/http/router.js';
import { RateLimiter } from '../../src/http/rate-limit.js';
import { createOrg } from '../../src/store/identity.js';
import { createApiKey } from '../../src/auth/key-admin.js';
import { openStore } from '../../src/store/lmdb.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetgw-sessions-unit-'));
const store = openStore(dir);
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
const orgId = createOrg(store, 'o').orgId;
const PASSWORD = 'a long enough password';

describe('password digests', () => {
  it('scrypt with the documented parameters, a random salt, and a constant-time check', async () => {
    const a = await hashPassword(PASSWORD);
    const b = await hashPassword(PASSWORD);
    expect(a).toMatchObject({ alg: 'scrypt', ...SCRYPT_PARAMS });
    expect(Buffer.from(a.salt).equals(Buffer.from(b.salt))).toBe(false);
    expect(await verifyPassword(PASSWORD, a)).toBe(true);
    expect(await verifyPassword(`${PASSWORD}x`, a)).toBe(false);
    expect(await verifyPassword('x'.repeat(2000), a)).toBe(false);
  }, 20_000);

  it('does not block the event loop while hashing', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    await hashPassword(PASSWORD);
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(3);
  }, 20_000);
});

describe('login throttle', () => {
  it('blocks an account after its burst, whatever the address, and refills over time', () => {
    const t = new LoginThrottle({ account: { burst: 3, refillPerSecond: 1 }, address: { burst: 100, refillPerSecond: 1 } });
    for (let i = 0; i < 3; i++) expect(t.take('ann@x', `10.0.0.${i}`, 0)).toBeNull();
    expect(t.blockedFor('ann@x', '10.9.9.9', 0)).toEqual({ retryAfterS: 1, bound: 'account' });
    expect(t.blockedFor('bob@x', '10.0.0.1', 0)).toBeNull();
    expect(t.blockedFor('ann@x', '10.9.9.9', 1000)).toBeNull();
  });

  it('blocks an address after its burst, whatever the account', () => {
    const t = new LoginThrottle({ account: { burst: 100, refillPerSecond: 1 }, address: { burst: 2, refillPerSecond: 0.5 } });
    t.take('a@x', '10.0.0.1', 0);
    t.take('b@x', '10.0.0.1', 0);
    expect(t.blockedFor('c@x', '10.0.0.1', 0)).toEqual({ retryAfterS: 2, bound: 'address' });
  });

  it('takes a token per check before it runs: checks in flight cannot pass the same last token; a refund gives it back', () => {
    const t = new LoginThrottle({ account: { burst: 2, refillPerSecond: 1 / 60 }, address: { burst: 100, refillPerSecond: 1 } });
    // Three checks start before any ends: only two get a token.
    expect(t.take('ann@x', '10.0.0.1', 0)).toBeNull();
    expect(t.take('ann@x', '10.0.0.2', 0)).toBeNull();
    expect(t.take('ann@x', '10.0.0.3', 0)).toEqual({ retryAfterS: 60, bound: 'account' });
    // The first was the right password: its token comes back, and a full bucket is no entry at all.
    t.refund('ann@x', '10.0.0.1', 0);
    expect(t.take('ann@x', '10.0.0.3', 0)).toBeNull();
    t.refund('ann@x', '10.0.0.3', 0);
    t.refund('ann@x', '10.0.0.2', 0);
    expect(t.sizes).toEqual({ accounts: 0, addresses: 0 });
  });

  it('keeps at most maxEntries per map', () => {
    const t = new LoginThrottle({ maxEntries: 10 });
    for (let i = 0; i < 100; i++) t.take(`u${i}@x`, `10.0.${i}.1`, i);
    expect(t.sizes).toEqual({ accounts: 10, addresses: 10 });
  });
});

describe('session tokens and CSRF', () => {
  it('round-trips the cookie value; refuses other shapes; the CSRF token is derived and checked', () => {
    const m = mintSessionToken();
    const parsed = parseSessionToken(m.token)!;
    expect(parsed.sessionId).toBe(m.sessionId);
    expect(parseSessionToken('fgk_0123')).toBeNull();
    expect(parseSessionToken(`fgs_${'0'.repeat(32)}_short`)).toBeNull();
    expect(csrfFor(parsed.secret)).toBe(m.csrfToken);
    expect(csrfMatches(m.csrfToken, parsed.secret)).toBe(true);
    expect(csrfMatches(undefined, parsed.secret)).toBe(false);
    const flipped = `${m.csrfToken.slice(0, -1)}${m.csrfToken.endsWith('A') ? 'B' : 'A'}`;
    expect(csrfMatches(flipped, parsed.secret)).toBe(false);
    expect(cookieValue(`a=1; fleetgw_session=${m.token}; b=2`, 'fleetgw_session')).toBe(m.token);
    expect(cookieValue('a=1', 'fleetgw_session')).toBeUndefined();
  });
});

describe('sessions', () => {
  let clock = 1_000_000;
  const sessions = new SessionService(store, { idleTimeoutMs: 60_000, maxAgeMs: 300_000, now: () => clock });
  const cookieOf = (token: string): string => `fleetgw_session=${token}`;

  it('login, verify with role permissions, CSRF on state-changing calls, idle and absolute expiry, revocation', async () => {
    const user = await createUser(store, { orgId, email: 'Ops@Example.test', role: 'operator', password: PASSWORD });
    expect((await sessions.login('ops@example.test', 'wrong', '10.0.0.1')).kind).toBe('failed');
    const ok = await sessions.login('OPS@example.test', PASSWORD, '10.0.0.1');
    if (ok.kind !== 'ok') throw new Error(ok.kind);
    const v = sessions.verify(cookieOf(ok.token), undefined, false, clock);
    expect(v.auth).toMatchObject({ actorType: 'user', orgId, fleetId: null, apiKeyId: ok.session.sessionId, user: { userId: user.userId, role: 'operator' } });
    expect(v.auth.permissions).toEqual(ROLE_PERMISSIONS.operator);
    expect(() => sessions.verify(cookieOf(ok.token), undefined, true, clock)).toThrow(expect.objectContaining({ id: 'csrf_failed' }));
    expect(sessions.verify(cookieOf(ok.token), ok.csrfToken, true, clock).auth.user?.csrfToken).toBe(ok.csrfToken);
    expect(sessions.usable(ok.session.sessionId, clock)).toBe(true);
    // Idle past the timeout (no request since login).
    expect(() => sessions.verify(cookieOf(ok.token), undefined, false, clock + 60_000)).toThrow(expect.objectContaining({ id: 'unauthorized' }));
    expect(sessions.usable(ok.session.sessionId, clock + 60_000)).toBe(false);
    // Absolute end even when active.
    expect(() => sessions.verify(cookieOf(ok.token), undefined, false, clock + 300_000)).toThrow(expect.objectContaining({ id: 'unauthorized' }));

    clock += 1000;
    const again = await sessions.login('ops@example.test', PASSWORD, '10.0.0.1');
    if (again.kind !== 'ok') throw new Error(again.kind);
    expect(await revokeUserSessions(store, user.userId, 'admin', clock)).toBe(2);
    expect(() => sessions.verify(cookieOf(again.token), undefined, false, clock)).toThrow(expect.objectContaining({ id: 'unauthorized' }));
  }, 30_000);

  it('a user may mint keys only within their role', () => {
    const by = { userId: 'u', email: 'e', role: 'viewer' as const, orgId };
    expect(() => checkUserKeyRequest(store, by, { name: null, fleetId: null, permissions: ['robots:read'], expiresAtMs: null })).not.toThrow();
    expect(() => checkUserKeyRequest(store, by, { name: null, fleetId: null, permissions: ['robots:read', 'robots:write'], expiresAtMs: null }))
      .toThrow(expect.objectContaining({ id: 'role_lacks_permission', message: expect.stringContaining('robots:write') }));
  });

  it('the router takes the cookie only without an Authorization header, and the API key path as before', async () => {
    await createUser(store, { orgId, email: 'viewer@example.test', role: 'viewer', password: PASSWORD });
    const ok = await sessions.login('viewer@example.test', PASSWORD, '10.0.0.2');
    if (ok.kind !== 'ok') throw new Error(ok.kind);
    const key = createApiKey(store, { orgId, fleetId: null, permissions: ['robots:write'], expiresAtMs: null });
    const routes = [
      defineRoute({ method: 'POST', path: '/w', operationId: 'w', summary: 'w', tags: [], auth: 'robots:write', responses: { 204: { description: 'ok' } } }).handle(() => ({ status: 204, body: null })),
      defineRoute({ method: 'GET', path: '/u', operationId: 'u', summary: 'u', tags: [], auth: 'any', actors: 'user', responses: { 204: { description: 'ok' } } }).handle(() => ({ status: 204, body: null })),
    ];
    const router = createRouter(routes, { auth: new ApiKeyVerifier(store, sessions), rateLimiter: new RateLimiter({ ratePerSecond: 1000, burst: 1000 }), now: () => clock });
    const send = async (method: string, path: string, headers: Record<string, string>): Promise<number> =>
      (await router({ method, path, query: '', headers, body: Buffer.alloc(0), remoteAddress: '10.0.0.2' }, new AbortController().signal)).status;
    const cookie = cookieOf(ok.token);
    expect(await send('POST', '/w', { authorization: `Bearer ${key.apiKey}`, cookie })).toBe(204);
    expect(await send('POST', '/w', { cookie, 'x-csrf-token': ok.csrfToken })).toBe(403); // viewer: no robots:write
    expect(await send('GET', '/u', { cookie })).toBe(204);
    expect(await send('GET', '/u', { authorization: `Bearer ${key.apiKey}` })).toBe(403);
    expect(await send('GET', '/u', {})).toBe(401);
  }, 30_000);
});
