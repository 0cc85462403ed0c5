/**
 * What someone new to `fleetgw` meets first, through the real CLI (bin/fleetgw.js as a child process):
 * `--help` on every command and admin subcommand (exit 0), `--version`, `admin list-*` to find the ids
 * the other admin commands take (also while a server runs on the data dir, and never printing a secret
 * or a digest of one), and `admin init` refusing a data dir that already has an organization.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashSecret, parseApiKey } from '../../src/store/secrets.js';
import { adminJson, fleetgw } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';

/** A test that runs the CLI several times: each run loads the whole gateway code, slow on a loaded 2-core machine. */
const SPAWNS_TIMEOUT = 180_000;

const ADMIN_SUBCOMMANDS = ['init', 'create-fleet', 'create-key', 'revoke-key', 'create-user', 'revoke-sessions', 'add-robot', 'backup', 'restore', 'list-orgs', 'list-fleets', 'list-robots', 'list-keys'];

describe('fleetgw --help and --version', () => {
  it.each([['serve'], ['sim'], ['admin'], ...ADMIN_SUBCOMMANDS.map((s) => [`admin ${s}`])])('fleetgw %s --help prints its usage and exits 0', (command) => {
    const r = fleetgw([...command.split(' '), '--help']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout.startsWith(`usage:\n  fleetgw ${command} `)).toBe(true);
  });

  it('admin --help names every subcommand; help after other options works too', () => {
    const all = fleetgw(['admin', '--help']).stdout;
    for (const s of ADMIN_SUBCOMMANDS) expect(all).toContain(`fleetgw admin ${s} `);
    expect(fleetgw(['sim', '-h']).stdout).toContain('fleetgw sim --grpc');
    const r = fleetgw(['serve', '--data-dir', '/nonexistent', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('fleetgw serve --data-dir DIR');
    expect(fleetgw(['admin', 'frobnicate', '--help']).status).toBe(2);
  }, SPAWNS_TIMEOUT);

  it('--version prints the package version', () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const r = fleetgw(['--version']);
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(`${pkg.version}\n`);
  });

  it('fleetgw --help lists the new commands', () => {
    const r = fleetgw(['--help']);
    expect(r.status).toBe(0);
    for (const s of ['list-orgs', 'list-fleets', 'list-robots', 'list-keys', '--another-org', '--version']) expect(r.stdout).toContain(s);
  });
});

describe('fleetgw admin init on a data dir that has an organization', () => {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-init-twice-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses with exit 2 and one line, makes nothing, and adds a second one only when asked', () => {
    const first = adminJson(['init', '--data-dir', dir, '--org', 'Acme', '--fleet', 'Yard']);
    const again = fleetgw(['admin', 'init', '--data-dir', dir, '--org', 'Acme', '--fleet', 'Yard', '--json']);
    expect(again.status).toBe(2);
    expect(again.stdout).toBe('');
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
    expect(again.stderr).toContain(first.orgId);
    expect(again.stderr).toContain('--another-org');
    const orgs = adminJson<{ orgs: { orgId: string }[] }>(['list-orgs', '--data-dir', dir]).orgs;
    expect(orgs.map((o) => o.orgId)).toEqual([first.orgId]);
    expect(adminJson<{ keys: unknown[] }>(['list-keys', '--data-dir', dir]).keys).toHaveLength(1);
    const second = adminJson(['init', '--data-dir', dir, '--org', 'Other', '--fleet', 'Far', '--another-org']);
    expect(adminJson<{ orgs: { orgId: string }[] }>(['list-orgs', '--data-dir', dir]).orgs.map((o) => o.orgId).sort()).toEqual([first.orgId, second.orgId].sort());
  }, SPAWNS_TIMEOUT);
});

describe('fleetgw admin list-* beside a running server', () => {
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway | undefined;
  let other: { orgId: string; fleetId: string; apiKeyId: string; apiKey: string };
  let robot: { robotId: string; robotToken: string };
  let key: { apiKeyId: string; apiKey: string };
  let revoked: { apiKeyId: string; apiKey: string };

  beforeAll(async () => {
    d = makeDataDir('fleetgw-admin-list-');
    gw = await startGatewayProcess(d.dataDir);
    // Written while the server runs, as an operator would.
    other = adminJson(['init', '--data-dir', d.dataDir, '--org', 'Other', '--fleet', 'Far', '--another-org']);
    robot = adminJson(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'rover-1', '--capabilities', 'drive,stop']);
    key = adminJson(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--fleet', d.fleetId, '--permissions', 'robots:read', '--expires-in', '3600']);
    revoked = adminJson(['create-key', '--data-dir', d.dataDir, '--org', d.orgId, '--permissions', 'robots:read']);
    expect(fleetgw(['admin', 'revoke-key', '--data-dir', d.dataDir, '--key-id', revoked.apiKeyId]).status).toBe(0);
  }, 180_000);

  afterAll(async () => {
    await gw?.stop();
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('lists organizations, fleets, robots and keys with the ids the other commands take', () => {
    const orgs = adminJson<{ orgs: { orgId: string; name: string }[] }>(['list-orgs', '--data-dir', d.dataDir]).orgs;
    expect(orgs.map((o) => [o.orgId, o.name]).sort()).toEqual([[d.orgId, 'Acme'], [other.orgId, 'Other']].sort());

    const fleets = adminJson<{ fleets: { fleetId: string; orgId: string; name: string }[] }>(['list-fleets', '--data-dir', d.dataDir, '--org', d.orgId]).fleets;
    expect(fleets).toEqual([expect.objectContaining({ fleetId: d.fleetId, orgId: d.orgId, name: 'Yard' })]);
    expect(adminJson<{ fleets: unknown[] }>(['list-fleets', '--data-dir', d.dataDir]).fleets).toHaveLength(2);

    const robots = adminJson<{ robots: unknown[] }>(['list-robots', '--data-dir', d.dataDir, '--fleet', d.fleetId]).robots;
    expect(robots).toEqual([expect.objectContaining({ robotId: robot.robotId, fleetId: d.fleetId, orgId: d.orgId, name: 'rover-1', active: true, capabilities: ['drive', 'stop'] })]);
    expect(adminJson<{ robots: unknown[] }>(['list-robots', '--data-dir', d.dataDir, '--org', other.orgId]).robots).toEqual([]);

    const keys = adminJson<{ keys: { apiKeyId: string; state: string; fleetId: string | null; permissions: string[] }[] }>(['list-keys', '--data-dir', d.dataDir, '--org', d.orgId]).keys;
    const byId = new Map(keys.map((k) => [k.apiKeyId, k]));
    expect([...byId.keys()].sort()).toEqual([d.apiKeyId, key.apiKeyId, revoked.apiKeyId].sort());
    expect(byId.get(key.apiKeyId)).toMatchObject({ state: 'active', fleetId: d.fleetId, permissions: ['robots:read'] });
    expect(byId.get(revoked.apiKeyId)?.state).toBe('revoked');
    expect(byId.get(d.apiKeyId)?.fleetId).toBeNull();

    const human = fleetgw(['admin', 'list-robots', '--data-dir', d.dataDir]);
    expect(human.status).toBe(0);
    expect(human.stdout.split('\n')[0]).toBe('robot_id\tfleet_id\tname\tactive\tcapabilities\tvda5050');
    expect(human.stdout).toContain(`${robot.robotId}\t${d.fleetId}\trover-1\tyes\tdrive,stop`);
  }, SPAWNS_TIMEOUT);

  it('never prints a key, a robot token or a digest of either', () => {
    const secrets = [d.apiKey, other.apiKey, key.apiKey, revoked.apiKey].map((k) => parseApiKey(k)!.secret);
    const forbidden = [
      d.apiKey, other.apiKey, key.apiKey, revoked.apiKey, robot.robotToken, ...secrets,
      ...[...secrets, robot.robotToken].flatMap((s) => [Buffer.from(hashSecret(s)).toString('hex'), Buffer.from(hashSecret(s)).toString('base64')]),
    ];
    for (const sub of ['list-orgs', 'list-fleets', 'list-robots', 'list-keys']) {
      for (const json of [[], ['--json']]) {
        const r = fleetgw(['admin', sub, '--data-dir', d.dataDir, ...json]);
        expect(r.status, r.stderr).toBe(0);
        for (const s of forbidden) expect(r.stdout, sub).not.toContain(s);
        expect(r.stdout).not.toMatch(/hash|digest|secret|token/i);
      }
    }
  }, SPAWNS_TIMEOUT);

  it('refuses bad filters with one line and exit 2', () => {
    for (const args of [
      ['list-fleets', '--data-dir', d.dataDir, '--org', 'acme'],
      ['list-robots', '--data-dir', d.dataDir, '--fleet', '00000000-0000-4000-8000-000000000000'],
      ['list-orgs', '--data-dir', d.dataDir, '--org', d.orgId],
      ['list-keys', '--data-dir', join(d.dataDir, 'nope')],
    ]) {
      const r = fleetgw(['admin', ...args]);
      expect(r.status, args.join(' ')).toBe(2);
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
  }, SPAWNS_TIMEOUT);
});
