import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LIVE_PERMISSIONS } from '../../src/auth/permissions.js';
import { openStore } from '../../src/store/lmdb.js';
import { parseApiKey, secretMatches } from '../../src/store/secrets.js';
import { adminJson, fleetgw } from '../support/cli.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const dir = mkdtempSync(join(tmpdir(), 'fleetgw-admin-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('fleetgw admin', () => {
  const init = adminJson(['init', '--data-dir', dir, '--org', 'Acme', '--fleet', 'Yard']);

  it('init prints ids and an org-wide key holding every live permission, stored hashed', async () => {
    expect(Object.keys(init).sort()).toEqual(['apiKey', 'apiKeyId', 'fleetId', 'orgId']);
    expect(init.orgId).toMatch(UUID);
    const parsed = parseApiKey(init.apiKey ?? '');
    expect(parsed?.apiKeyId).toBe(init.apiKeyId);
    const store = openStore(dir);
    try {
      const rec = store.apikeys.get(init.apiKeyId ?? '');
      expect(rec?.fleetId).toBeNull();
      expect([...(rec?.permissions ?? [])].sort()).toEqual([...LIVE_PERMISSIONS].sort());
      // the raw secret is nowhere in the record, only its digest
      expect(JSON.stringify(rec)).not.toContain(parsed?.secret ?? 'x');
      expect(secretMatches(parsed?.secret ?? '', rec?.secretHash ?? new Uint8Array())).toBe(true);
    } finally {
      await store.close();
    }
  });

  // Four CLI processes one after another: each loads the whole CLI, which takes seconds on a loaded machine.
  it('create-fleet, create-key (fleet-scoped, expiring), add-robot and revoke-key', { timeout: 120_000 }, async () => {
    const { fleetId } = adminJson(['create-fleet', '--data-dir', dir, '--org', init.orgId ?? '', '--name', 'North']);
    expect(fleetId).toMatch(UUID);
    const key = adminJson(['create-key', '--data-dir', dir, '--org', init.orgId ?? '', '--fleet', fleetId ?? '', '--permissions', 'robots:read,fleet:read', '--expires-in', '60']);
    expect(Object.keys(key).sort()).toEqual(['apiKey', 'apiKeyId']);
    const robot = adminJson(['add-robot', '--data-dir', dir, '--fleet', fleetId ?? '', '--name', 'r1', '--capabilities', 'drive,mow', '--inactive']);
    expect(Object.keys(robot).sort()).toEqual(['robotId', 'robotToken']);
    const revoke = fleetgw(['admin', 'revoke-key', '--data-dir', dir, '--key-id', key.apiKeyId ?? '']);
    expect(revoke.status).toBe(0);
    const store = openStore(dir);
    try {
      const k = store.apikeys.get(key.apiKeyId ?? '');
      expect(k?.fleetId).toBe(fleetId);
      expect(k?.permissions).toEqual(['robots:read', 'fleet:read']);
      expect(k?.expiresAtMs).toBeGreaterThan(Date.now() + 50_000);
      expect(k?.revokedAtMs).toBeTypeOf('number');
      const r = store.robots.get(robot.robotId ?? '');
      expect(r).toMatchObject({ fleetId, name: 'r1', capabilities: ['drive', 'mow'], active: false });
      expect(JSON.stringify(r)).not.toContain(robot.robotToken);
    } finally {
      await store.close();
    }
  });

  it('create-key refuses a retired permission: one line naming it, exit 2, no key stored', async () => {
    const before = await keyCount();
    const r = fleetgw(['admin', 'create-key', '--data-dir', dir, '--org', init.orgId ?? '', '--permissions', 'fleet:read,operations:deploy', '--json']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`fleetgw: permission 'operations:deploy' is retired and authorizes nothing; use: ${LIVE_PERMISSIONS.join(', ')}\n`);
    expect(await keyCount()).toBe(before);
  });
});

async function keyCount(): Promise<number> {
  const store = openStore(dir);
  try {
    return store.apikeys.getKeysCount();
  } finally {
    await store.close();
  }
}

describe('fleetgw bad arguments: one line on stderr, exit 2', () => {
  const cases: [string, string[]][] = [
    ['no command', []],
    ['unknown command', ['launch']],
    ['unknown admin subcommand', ['admin', 'frobnicate']],
    ['missing --data-dir', ['admin', 'init', '--org', 'a', '--fleet', 'b']],
    ['unknown option', ['admin', 'init', '--data-dir', dir, '--org', 'a', '--fleet', 'b', '--colour', 'red']],
    ['org not a uuid', ['admin', 'create-fleet', '--data-dir', dir, '--org', 'acme', '--name', 'x']],
    ['unknown permission', ['admin', 'create-key', '--data-dir', dir, '--org', '00000000-0000-4000-8000-000000000000', '--permissions', 'robots:fly']],
    ['retired permission', ['admin', 'create-key', '--data-dir', dir, '--org', '00000000-0000-4000-8000-000000000000', '--permissions', 'robots:read,audit:read']],
    ['bad expires-in', ['admin', 'create-key', '--data-dir', dir, '--org', '00000000-0000-4000-8000-000000000000', '--permissions', 'robots:read', '--expires-in', '-5']],
    ['revoking an unknown key', ['admin', 'revoke-key', '--data-dir', dir, '--key-id', '00000000-0000-4000-8000-000000000000']],
    ['serve: bad port', ['serve', '--data-dir', dir, '--port', '70000']],
    ['serve: insecure on a public host', ['serve', '--data-dir', dir, '--host', '0.0.0.0', '--insecure-http']],
    ['serve: cert without key', ['serve', '--data-dir', dir, '--tls-cert', '/tmp/x.pem']],
    ['sim: missing robot', ['sim', '--grpc', '127.0.0.1:1']],
    ['sim: bad target', ['sim', '--grpc', 'nohostport', '--robot-id', 'a', '--robot-token', 'b']],
  ];
  it.each(cases)('%s', (_name, args) => {
    const r = fleetgw(args);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^fleetgw: /);
  });
});
