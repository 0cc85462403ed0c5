/**
 * A login from an address that logged in to the account before draws from its own throttle bucket,
 * through `fleetgw serve`: wrong passwords from another address empty the account's shared bucket
 * (docs/sessions.md, "Failed logins"), and the owner, on the address they used before, still logs in.
 * Two loopback addresses (127.0.0.1 and 127.0.0.2) stand for the owner and the attacker. Also: the
 * login, a route without authentication, takes at most a 16 KiB body.
 */
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEETGW_BIN } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';

const PASSWORD = 'correct horse battery staple';
const EMAIL = 'owner@acme.test';

describe('login throttle and known addresses', () => {
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway;

  beforeAll(async () => {
    d = makeDataDir('fleetgw-login-known-');
    const r = spawnSync(process.execPath, [FLEETGW_BIN, 'admin', 'create-user', '--data-dir', d.dataDir, '--org', d.orgId, '--email', EMAIL, '--role', 'viewer', '--json'], {
      input: `${PASSWORD}\n`,
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(r.status, r.stderr).toBe(0);
    gw = await startGatewayProcess(d.dataDir);
  }, 60_000);

  afterAll(async () => {
    await gw?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  /** POST /v1/sessions from `localAddress`; resolves with the status. */
  const login = (password: string, localAddress: string): Promise<number> => new Promise((resolve, reject) => {
    const url = new URL('/v1/sessions', gw.ready.http);
    const body = JSON.stringify({ email: EMAIL, password });
    const req = request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });

  it('refuses a login body over 16 KiB unread: a route without authentication takes only small bodies', async () => {
    const res = await fetch(`${gw.ready.http}/v1/sessions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `{${' '.repeat(20 * 1024)}` });
    // Parsed, this would be 400 (not JSON).
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe('bad_request');
  });

  it('keeps the owner\'s known address out of the bucket an attacker empties', async () => {
    expect(await login(PASSWORD, '127.0.0.1')).toBe(201);
    // The attacker, elsewhere, spends the account's shared bucket (5 at once) and is then throttled.
    const attempts: number[] = [];
    for (let i = 0; i < 6; i++) attempts.push(await login(`wrong ${i}`, '127.0.0.2'));
    expect(attempts.slice(0, 5)).toEqual([401, 401, 401, 401, 401]);
    expect(attempts[5]).toBe(429);
    // The owner's address has its own bucket: their login is checked, and passes.
    expect(await login(PASSWORD, '127.0.0.1')).toBe(201);
    // Anyone else still meets the empty shared bucket, a right password included.
    expect(await login(PASSWORD, '127.0.0.2')).toBe(429);
  });
});
