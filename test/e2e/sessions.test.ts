/**
 * Issue 10 part 8: user sessions and API-key management through the real processes: `fleetgw admin
 * create-user` (password on stdin), `fleetgw serve` (login cookie, CSRF, throttling, logout,
 * revocation, expiry, key routes), `fleetgw sim` streaming telemetry, `ws` clients on the live stream.
 */
import type { ChildProcess } from 'node:child_process';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { request } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey } from '../../src/auth/key-admin.js';
import { openStore } from '../../src/store/lmdb.js';
import { adminJson, FLEETGW_BIN } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { fleetgwAsync, openStream, requestTicket, startSim, type StreamClient } from '../support/stream-client.js';
import { until } from '../support/until.js';

const PASSWORD = 'correct horse battery staple';

/** `fleetgw admin create-user` with the password on stdin. */
function createUser(dataDir: string, orgId: string, email: string, role: string, password = PASSWORD): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [FLEETGW_BIN, 'admin', 'create-user', '--data-dir', dataDir, '--org', orgId, '--email', email, '--role', role, '--json'], {
    input: `${password}\n`,
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

interface Session {
  cookie: string;
  csrf: string;
  setCookie: string;
  body: any;
}

describe('user sessions and API-key management', () => {
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway;
  let sim: ChildProcess;
  let base: string;
  const users: Record<string, string> = {};
  const sockets: StreamClient[] = [];

  beforeAll(async () => {
    d = makeDataDir('fleetgw-sessions-');
    const robot = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r1']);
    for (const [email, role] of [['op@acme.test', 'operator'], ['viewer@acme.test', 'viewer'], ['admin@acme.test', 'admin'], ['victim@acme.test', 'viewer']] as const) {
      const r = createUser(d.dataDir, d.orgId, email, role);
      expect(r.status, r.stderr).toBe(0);
      users[email] = (JSON.parse(r.stdout) as { userId: string }).userId;
    }
    gw = await startGatewayProcess(d.dataDir);
    base = gw.ready.http;
    sim = await startSim(d.dataDir, gw.ready.grpc, [{ robotId: robot.robotId!, robotToken: robot.robotToken! }], 20);
  }, 90_000);

  afterAll(async () => {
    for (const s of sockets) s.ws.terminate();
    sim?.kill('SIGTERM');
    await gw?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  const login = async (email: string, password = PASSWORD): Promise<{ status: number; body: any; headers: Headers }> => {
    const res = await fetch(`${base}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, password }) });
    return { status: res.status, body: await res.json(), headers: res.headers };
  };
  const session = async (email: string): Promise<Session> => {
    const r = await login(email);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const setCookie = r.headers.get('set-cookie')!;
    return { cookie: setCookie.split(';')[0]!, csrf: r.body.csrfToken as string, setCookie, body: r.body };
  };
  /** A call with the session cookie (and its CSRF token unless `csrf` is false or a string to send instead). */
  const as = async (s: Session, method: string, path: string, body?: unknown, extra: Record<string, string> = {}, csrf: boolean | string = true): Promise<{ status: number; body: any; text: string; headers: Headers }> => {
    const headers: Record<string, string> = { cookie: s.cookie, ...extra };
    if (csrf !== false) headers['x-csrf-token'] = csrf === true ? s.csrf : csrf;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await fetch(`${base}${path}`, { method, headers, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    const text = await res.text();
    return { status: res.status, body: text === '' ? undefined : JSON.parse(text), text, headers: res.headers };
  };
  const keysPath = (): string => `/v1/orgs/${d.orgId}/api-keys`;

  it('create-user refuses --password and a short password; takes the password on stdin', () => {
    const argv = spawnSync(process.execPath, [FLEETGW_BIN, 'admin', 'create-user', '--data-dir', d.dataDir, '--org', d.orgId, '--email', 'x@acme.test', '--role', 'viewer', '--password', PASSWORD], { encoding: 'utf8' });
    expect(argv.status).toBe(2);
    expect(argv.stderr).toMatch(/--password is refused/);
    const short = createUser(d.dataDir, d.orgId, 'x@acme.test', 'viewer', 'short');
    expect(short.status).toBe(2);
    expect(short.stderr).toMatch(/at least 12 characters/);
    expect(createUser(d.dataDir, d.orgId, 'OP@acme.test', 'viewer').stderr).toMatch(/already exists/);
  });

  it('login sets an HttpOnly, SameSite=Strict, Path=/ cookie (not Secure over plain HTTP) and returns the CSRF token', async () => {
    const bad = await login('op@acme.test', 'wrong password!!');
    expect(bad.status).toBe(401);
    expect(bad.body.code).toBe('unauthorized');
    expect(bad.headers.get('set-cookie')).toBeNull();
    const s = await session('op@acme.test');
    expect(s.setCookie).toMatch(/^fleetgw_session=fgs_[0-9a-f]{32}_[\w-]+; /);
    expect(s.setCookie).toMatch(/; HttpOnly/);
    expect(s.setCookie).toMatch(/; SameSite=Strict/);
    expect(s.setCookie).toMatch(/; Path=\//);
    expect(s.setCookie).toMatch(/; Max-Age=\d+/);
    expect(s.setCookie).not.toMatch(/Secure/);
    expect(s.body.session.user).toMatchObject({ email: 'op@acme.test', role: 'operator' });
    expect(JSON.stringify(s.body)).not.toContain(s.cookie.split('=')[1]);
    const current = await as(s, 'GET', '/v1/sessions/current');
    expect(current.status).toBe(200);
    expect(current.body.csrfToken).toBe(s.csrf);
  });

  it('a session calls REST with its role\'s permissions; calls other than GET need the CSRF token', async () => {
    const op = await session('op@acme.test');
    const me = await as(op, 'GET', '/v1/me');
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ actorType: 'user', orgId: d.orgId, fleetId: null, user: { email: 'op@acme.test', role: 'operator' } });
    expect(me.body.permissions).toContain('robots:write');
    expect(me.body.permissions).not.toContain('features:write');
    expect((await as(op, 'GET', `/v1/orgs/${d.orgId}/fleets`)).status).toBe(200);

    const stop = { reason: 'session test' };
    const noCsrf = await as(op, 'POST', `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/stop-all`, stop, {}, false);
    expect(noCsrf.status).toBe(403);
    expect(noCsrf.body.error).toMatch(/X-CSRF-Token/);
    const wrongCsrf = await as(op, 'POST', `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/stop-all`, stop, {}, 'A'.repeat(43));
    expect(wrongCsrf.status).toBe(403);
    const ok = await as(op, 'POST', `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/stop-all`, { reason: 'session test' });
    expect(ok.status, ok.text).toBe(200);

    const viewer = await session('viewer@acme.test');
    const denied = await as(viewer, 'POST', `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/stop-all`, { reason: 'x' });
    expect(denied.status).toBe(403);
    expect(denied.body.error).toMatch(/robots:write/);
    // A forged cookie is 401.
    expect((await as({ ...viewer, cookie: `fleetgw_session=fgs_${'0'.repeat(32)}_${'x'.repeat(43)}` }, 'GET', '/v1/me')).status).toBe(401);
  });

  it('throttles failed logins per account: 429 with Retry-After, even with the right password', async () => {
    for (let i = 0; i < 5; i++) expect((await login('victim@acme.test', `wrong-${i}-password`)).status).toBe(401);
    const blocked = await login('victim@acme.test');
    expect(blocked.status).toBe(429);
    expect(blocked.body.code).toBe('rate_limited');
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(blocked.body.error).toMatch(/account/);
    // Another account from the same address still logs in.
    expect((await login('admin@acme.test')).status).toBe(201);
    // The failures are on the user's timeline, without the password.
    const ev = await api(base, d.apiKey, `/v1/events?fleet_id=${d.fleetId}&correlation_id=${users['victim@acme.test']!}`);
    expect(ev.status).toBe(200);
    const kinds = (ev.body.items as { kind: string }[]).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'user.login_failed')).toHaveLength(5);
    expect(JSON.stringify(ev.body)).not.toMatch(/wrong-\d-password/);
  }, 60_000);

  it('keys: create (secret once), replay without the secret, list and read without secrets, role bound, API keys refused', async () => {
    const op = await session('op@acme.test');
    const idem = { 'idempotency-key': 'key-create-1' };
    const body = { name: 'dashboard', permissions: ['robots:read'], fleet_id: d.fleetId };
    const created = await as(op, 'POST', keysPath(), body, idem);
    expect(created.status, created.text).toBe(201);
    const secret = created.body.secret as string;
    expect(secret).toMatch(/^fgk_/);
    expect(created.body.key).toMatchObject({ name: 'dashboard', fleetId: d.fleetId, permissions: ['robots:read'], state: 'active', createdBy: { email: 'op@acme.test' } });
    const keyId = created.body.key.apiKeyId as string;

    const replay = await as(op, 'POST', keysPath(), body, idem);
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual({ key: created.body.key, secretWithheld: true });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.text).not.toContain(secret.slice(-20));
    expect((await as(op, 'POST', keysPath(), body)).status).toBe(400); // Idempotency-Key required

    const list = await as(op, 'GET', keysPath());
    expect(list.status).toBe(200);
    expect((list.body.items as { apiKeyId: string }[]).map((k) => k.apiKeyId)).toContain(keyId);
    expect(list.text).not.toContain(secret.slice(-20));
    const one = await as(op, 'GET', `${keysPath()}/${keyId}`);
    expect(one.body).toEqual(created.body.key);

    const beyond = await as(op, 'POST', keysPath(), { permissions: ['robots:read', 'features:write'] }, { 'idempotency-key': 'k2' });
    expect(beyond.status).toBe(403);
    expect(beyond.body.error).toMatch(/features:write/);
    const retired = await as(op, 'POST', keysPath(), { permissions: ['audit:read'] }, { 'idempotency-key': 'k3' });
    expect(retired.status).toBe(400);
    expect(retired.body.error).toMatch(/permissions/);

    // An API key, even an all-permission one, cannot manage keys.
    for (const [method, path] of [['GET', keysPath()], ['GET', `${keysPath()}/${keyId}`], ['DELETE', `${keysPath()}/${keyId}`]] as const) {
      const r = await api(base, d.apiKey, path, { method });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.code).toBe('forbidden');
    }
    const byKey = await api(base, d.apiKey, keysPath(), { method: 'POST', body: JSON.stringify(body), headers: { 'idempotency-key': 'k4' } });
    expect(byKey.status).toBe(403);

    // The minted key works on REST.
    expect((await api(base, secret, `/v1/robots?fleet_id=${d.fleetId}`)).status).toBe(200);
    // Another org's key id is 404, another user's key cannot be revoked by a viewer.
    const viewer = await session('viewer@acme.test');
    const notYours = await as(viewer, 'DELETE', `${keysPath()}/${keyId}`);
    expect(notYours.status).toBe(403);
    expect((await as(viewer, 'GET', `${keysPath()}/00000000-0000-4000-8000-000000000000`)).status).toBe(404);
  });

  it('the key list is {items, next_cursor} pages, oldest first, with cursors bound to the organization (issue 9 part 3)', async () => {
    const op = await session('op@acme.test');
    // Into the store directly: a spawnSync of `fleetgw admin` would block this event loop meanwhile.
    const store = openStore(d.dataDir);
    for (let i = 0; i < 3; i++) createApiKey(store, { orgId: d.orgId, fleetId: null, permissions: ['robots:read'], expiresAtMs: null });
    await store.close();
    const all = await as(op, 'GET', keysPath());
    expect(all.status).toBe(200);
    expect(Object.keys(all.body).sort()).toEqual(['items', 'next_cursor']);
    expect(all.body.next_cursor).toBeNull();
    const ids = (all.body.items as { apiKeyId: string; createdAtMs: number }[]).map((k) => k.apiKeyId);
    const created = (all.body.items as { createdAtMs: number }[]).map((k) => k.createdAtMs);
    expect(created).toEqual([...created].sort((a, b) => a - b));
    const paged: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await as(op, 'GET', `${keysPath()}?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      expect(page.status, page.text).toBe(200);
      expect((page.body.items as unknown[]).length).toBeLessThanOrEqual(2);
      paged.push(...(page.body.items as { apiKeyId: string }[]).map((k) => k.apiKeyId));
      cursor = page.body.next_cursor as string | null;
    } while (cursor !== null);
    expect(paged).toEqual(ids);
    const first = await as(op, 'GET', `${keysPath()}?limit=1`);
    const numeric = await as(op, 'GET', `${keysPath()}?cursor=1`);
    expect(numeric.status).toBe(400);
    expect(numeric.body.error).toMatch(/^Invalid cursor: numeric offset cursors are not accepted/);
    // A fleets cursor is not a keys cursor.
    const fleetsCursor = (await api(base, d.apiKey, `/v1/orgs/${d.orgId}/fleets?limit=1`)).body.next_cursor as string | null;
    if (fleetsCursor !== null) expect((await as(op, 'GET', `${keysPath()}?cursor=${encodeURIComponent(fleetsCursor)}`)).status).toBe(400);
    expect((await as(op, 'GET', `${keysPath()}?limit=1&cursor=${encodeURIComponent(first.body.next_cursor as string)}`)).body.items[0].apiKeyId).toBe(ids[1]);
  }, 90_000);

  it('a revoked key is refused within 1 s on REST and on an open telemetry stream; both are on the key\'s timeline', async () => {
    const op = await session('op@acme.test');
    const created = await as(op, 'POST', keysPath(), { permissions: ['robots:read'] }, { 'idempotency-key': 'key-revoke-1' });
    expect(created.status).toBe(201);
    const { secret } = created.body as { secret: string };
    const keyId = created.body.key.apiKeyId as string;
    const t = await requestTicket(base, secret, d.orgId, d.fleetId);
    expect(t.status).toBe(201);
    const c = openStream(`${base.replace(/^http/, 'ws')}/v1/telemetry/stream`);
    sockets.push(c);
    await c.opened;
    c.send({ op: 'subscribe', ticket: t.body.ticket as string });
    await until(() => c.of('sample').length >= 3, 10_000, 'samples on the key\'s stream');
    expect((await api(base, secret, '/v1/me')).status).toBe(200);

    const revoked = await as(op, 'DELETE', `${keysPath()}/${keyId}`);
    const revokedAt = Date.now();
    expect(revoked.status).toBe(200);
    expect(revoked.body.state).toBe('revoked');
    await until(async () => (await api(base, secret, '/v1/me')).status === 401, 1_000, 'REST refuses the revoked key');
    await until(() => c.closed !== null, 2_000, 'stream closed');
    expect(c.closed!.code).toBe(4403);
    expect(c.closed!.atMs - revokedAt).toBeLessThan(1_000);
    // Revoking again answers the record unchanged.
    expect((await as(op, 'DELETE', `${keysPath()}/${keyId}`)).body.revokedAtMs).toBe(revoked.body.revokedAtMs);

    const ev = await api(base, d.apiKey, `/v1/events?fleet_id=${d.fleetId}&correlation_id=${keyId}`);
    expect((ev.body.items as { kind: string }[]).map((e) => e.kind)).toEqual(['api_key.created', 'api_key.revoked']);
    expect(ev.body.items[0].data.by.email).toBe('op@acme.test');
    expect(JSON.stringify(ev.body)).not.toContain(secret.slice(-20));
  }, 60_000);

  it('logout ends the session (and its telemetry stream) at once; admin revoke-sessions ends every session of a user', async () => {
    const op = await session('op@acme.test');
    const t = await as(op, 'POST', '/v1/telemetry/stream-tickets', { org_id: d.orgId, fleet_id: d.fleetId });
    expect(t.status, t.text).toBe(201);
    const c = openStream(`${base.replace(/^http/, 'ws')}/v1/telemetry/stream`);
    sockets.push(c);
    await c.opened;
    c.send({ op: 'subscribe', ticket: t.body.ticket as string });
    await until(() => c.of('sample').length >= 3, 10_000, 'samples on the session\'s stream');

    expect((await as(op, 'DELETE', '/v1/sessions/current', undefined, {}, false)).status).toBe(403); // CSRF
    const out = await as(op, 'DELETE', '/v1/sessions/current');
    const loggedOutAt = Date.now();
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^fleetgw_session=; .*Max-Age=0/);
    expect((await as(op, 'GET', '/v1/me')).status).toBe(401);
    await until(() => c.closed !== null, 2_000, 'stream of the ended session closed');
    expect(c.closed!.code).toBe(4403);
    expect(c.closed!.atMs - loggedOutAt).toBeLessThan(1_000);

    const a = await session('op@acme.test');
    const b = await session('op@acme.test');
    const revoke = await fleetgwAsync(['admin', 'revoke-sessions', '--data-dir', d.dataDir, '--email', 'op@acme.test']);
    expect(revoke.status, revoke.stderr).toBe(0);
    expect((await as(a, 'GET', '/v1/me')).status).toBe(401);
    expect((await as(b, 'GET', '/v1/sessions/current')).status).toBe(401);
  }, 60_000);

  it('users, sessions and keys survive a restart; sessions end when idle', async () => {
    const admin = await session('admin@acme.test');
    const before = await as(admin, 'GET', keysPath());
    await gw.stop();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http'], { FLEETGW_SESSION_IDLE_TIMEOUT_S: '2' });
    base = gw.ready.http;
    // The session made before the restart still works (its own 30 min idle timeout), the keys are all there.
    const after = await as(admin, 'GET', keysPath());
    expect(after.status).toBe(200);
    expect(after.body.items.map((k: { apiKeyId: string }) => k.apiKeyId)).toEqual(before.body.items.map((k: { apiKeyId: string }) => k.apiKeyId));
    // A replay after the restart still withholds the secret.
    const op = await session('op@acme.test');
    const replay = await as(op, 'POST', keysPath(), { name: 'dashboard', permissions: ['robots:read'], fleet_id: d.fleetId }, { 'idempotency-key': 'key-create-1' });
    expect(replay.status).toBe(200);
    expect(replay.body.secretWithheld).toBe(true);

    // Idle for longer than the 2 s idle timeout: the session has ended (time-based on purpose: the
    // idle timeout is what is tested).
    expect(op.body.session.idleTimeoutS).toBe(2);
    await new Promise((r) => setTimeout(r, 2_500));
    expect((await as(op, 'GET', '/v1/me')).status).toBe(401);
  }, 60_000);

  it('over HTTPS the cookie is Secure', async () => {
    await gw.stop(); // one server per data dir (the embedded telemetry store)
    const tls = await startGatewayProcess(d.dataDir, []);
    try {
      const setCookie = await new Promise<string>((resolve, reject) => {
        const body = JSON.stringify({ email: 'viewer@acme.test', password: PASSWORD });
        const req = request(`${tls.ready.http}/v1/sessions`, { method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
          res.resume();
          expect(res.statusCode).toBe(201);
          resolve(String(res.headers['set-cookie']?.[0] ?? ''));
        });
        req.on('error', reject);
        req.end(body);
      });
      expect(setCookie).toMatch(/; Secure/);
      expect(setCookie).toMatch(/; HttpOnly/);
    } finally {
      await tls.stop();
    }
  }, 60_000);
});
