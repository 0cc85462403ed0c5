import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ApiKeyVerifier, VERIFIED_TTL_MS } from '../../src/auth/authenticate.js';
import { createOrg } from '../../src/store/identity.js';
import { createApiKey, revokeApiKey } from '../../src/auth/key-admin.js';
import { openStore } from '../../src/store/lmdb.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetgw-authcache-'));
const store = openStore(dir);
afterAll(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});
const orgId = createOrg(store, 'o').orgId;
const verifier = new ApiKeyVerifier(store);
const authenticate = (authorization: string, nowMs: number) => verifier.authenticate(authorization, nowMs);

describe('recently verified credentials', () => {
  it('a wrong secret for a cached key id is still refused', () => {
    const { apiKey } = createApiKey(store, { orgId, fleetId: null, permissions: ['robots:read'], expiresAtMs: null });
    const t = 1_000_000;
    expect(authenticate(`Bearer ${apiKey}`, t).orgId).toBe(orgId);
    const forged = `${apiKey.slice(0, -4)}AAAA`;
    expect(() => authenticate(`Bearer ${forged}`, t + 1)).toThrow(expect.objectContaining({ status: 401 }));
  });

  it('revocation applies once the TTL has passed, expiry applies at once', () => {
    const t = 2_000_000;
    const a = createApiKey(store, { orgId, fleetId: null, permissions: ['robots:read'], expiresAtMs: null });
    expect(authenticate(`Bearer ${a.apiKey}`, t).apiKeyId).toBe(a.record.apiKeyId);
    revokeApiKey(store, a.record.apiKeyId);
    expect(() => authenticate(`Bearer ${a.apiKey}`, t + VERIFIED_TTL_MS)).toThrow(expect.objectContaining({ status: 401 }));

    const b = createApiKey(store, { orgId, fleetId: null, permissions: ['robots:read'], expiresAtMs: t + 100 });
    expect(authenticate(`Bearer ${b.apiKey}`, t).apiKeyId).toBe(b.record.apiKeyId);
    expect(() => authenticate(`Bearer ${b.apiKey}`, t + 100)).toThrow(expect.objectContaining({ status: 401 }));
  });

  it('a clock that steps backwards does not extend trust', () => {
    const t = 3_000_000;
    const a = createApiKey(store, { orgId, fleetId: null, permissions: ['robots:read'], expiresAtMs: null });
    authenticate(`Bearer ${a.apiKey}`, t);
    revokeApiKey(store, a.record.apiKeyId);
    expect(() => authenticate(`Bearer ${a.apiKey}`, t - 5)).toThrow(expect.objectContaining({ status: 401 }));
  });
});
