/**
 * deploy/fleetgw.service (and its ClickHouse drop-in) pass `systemd-analyze verify`, keep the hardening
 * an operator expects (checked by `systemd-analyze security --offline`), and the system user file
 * creates the user. verify checks that ExecStart's binary exists, so the unit is rendered with this
 * machine's node. Needs Debian's `systemd` package (.ci/run installs it); under CI=true a missing tool
 * fails the test instead of skipping it.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { missingTools } from './tools.js';

const ROOT = join(import.meta.dirname, '..', '..');
const UNIT = readFileSync(join(ROOT, 'deploy/fleetgw.service'), 'utf8');
const DROPIN = readFileSync(join(ROOT, 'deploy/fleetgw.service.d/clickhouse.conf'), 'utf8');
const missing = missingTools(['/usr/bin/systemd-analyze', '/usr/bin/systemd-sysusers'], 'systemd');

/** The unit with this machine's node and checkout in place of /usr/bin/node and /opt/fleet-gateway. */
function render(text: string): string {
  return text.replaceAll('/usr/bin/node', process.execPath).replaceAll('/opt/fleet-gateway', ROOT);
}

/** `Key=value` lines of the unit (continuations joined), comments dropped. */
function directives(text: string): [string, string][] {
  return text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .filter((l) => /^[A-Za-z]+=/.test(l))
    .map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]);
}

const dir = mkdtempSync(join(tmpdir(), 'fleetgw-unit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function analyze(args: string[]): { status: number | null; out: string } {
  const r = spawnSync('/usr/bin/systemd-analyze', args, { encoding: 'utf8', cwd: dir });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('the unit file says what an operator expects', () => {
  const d = new Map(directives(UNIT));

  it('runs as fleetgw with its data dir as a systemd-managed StateDirectory', () => {
    expect(d.get('User')).toBe('fleetgw');
    expect(d.get('StateDirectory')).toBe('fleetgw');
    expect(d.get('StateDirectoryMode')).toBe('0750');
    expect(d.get('ExecStart')).toContain('--data-dir /var/lib/fleetgw ');
    expect(d.get('ReadWritePaths')).toBe('/var/lib/fleetgw');
  });

  it('is hardened, and says why MemoryDenyWriteExecute is not set', () => {
    expect(Object.fromEntries(directives(UNIT).filter(([k]) => k !== 'SystemCallFilter'))).toMatchObject({
      NoNewPrivileges: 'true', ProtectSystem: 'strict', ProtectHome: 'true', PrivateTmp: 'true', PrivateDevices: 'true',
      RestrictAddressFamilies: 'AF_INET AF_INET6 AF_UNIX', CapabilityBoundingSet: '', AmbientCapabilities: '',
      RestrictNamespaces: 'true', LockPersonality: 'true', SystemCallArchitectures: 'native',
    });
    expect(d.has('MemoryDenyWriteExecute')).toBe(false);
    expect(UNIT).toMatch(/# MemoryDenyWriteExecute is deliberately NOT set: V8's JIT/);
  });

  it('never carries a password on a command line (the drop-in reads it as a systemd credential)', () => {
    for (const text of [UNIT, DROPIN]) expect(text).not.toMatch(/--clickhouse-password(\s|=)/);
    const dropin = directives(DROPIN);
    expect(dropin).toContainEqual(['LoadCredential', 'clickhouse-password:/etc/fleetgw/clickhouse-password']);
    expect(dropin.filter(([k]) => k === 'ExecStart').at(-1)?.[1]).toContain('--clickhouse-password-file %d/clickhouse-password');
  });
});

describe.skipIf(missing.length > 0)(`systemd tools on the unit${missing.length > 0 ? ` (skipped: ${missing.join(', ')} missing)` : ''}`, () => {
  it('systemd-analyze verify is clean for the unit and for the unit with the ClickHouse drop-in', () => {
    writeFileSync(join(dir, 'fleetgw.service'), render(UNIT));
    const plain = analyze(['verify', join(dir, 'fleetgw.service')]);
    expect(plain.out).toBe('');
    expect(plain.status).toBe(0);
    // A drop-in is verified the way systemd applies it: its [Service] lines after the unit's.
    mkdirSync(join(dir, 'ch'), { recursive: true });
    writeFileSync(join(dir, 'ch', 'fleetgw.service'), `${render(UNIT)}\n${render(DROPIN)}`);
    const withDropin = analyze(['verify', join(dir, 'ch', 'fleetgw.service')]);
    expect(withDropin.out).toBe('');
    expect(withDropin.status).toBe(0);
  });

  it('verify catches a broken unit (the check is real)', () => {
    mkdirSync(join(dir, 'bad'), { recursive: true });
    writeFileSync(join(dir, 'bad', 'fleetgw.service'), UNIT.replaceAll('/usr/bin/node', '/nonexistent/node'));
    const r = analyze(['verify', join(dir, 'bad', 'fleetgw.service')]);
    expect(r.status).not.toBe(0);
    expect(r.out).toContain('/nonexistent/node');
  });

  it('systemd-analyze security rates the exposure 2.0 or better ("OK")', () => {
    writeFileSync(join(dir, 'fleetgw.service'), render(UNIT));
    const r = analyze(['security', '--offline=true', '--no-pager', join(dir, 'fleetgw.service')]);
    const m = /Overall exposure level for fleetgw\.service: (\d+\.\d+)/.exec(r.out);
    expect(m, r.out).not.toBeNull();
    expect(Number(m![1])).toBeLessThanOrEqual(2.0);
  });

  it('the sysusers file creates the fleetgw user with the data dir as home', () => {
    const root = join(dir, 'sysroot');
    mkdirSync(join(root, 'etc'), { recursive: true });
    const r = spawnSync('/usr/bin/systemd-sysusers', [`--root=${root}`, join(ROOT, 'deploy/fleetgw.sysusers.conf')], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(readFileSync(join(root, 'etc/passwd'), 'utf8')).toMatch(/^fleetgw:x:\d+:\d+:fleet-gateway edge gateway:\/var\/lib\/fleetgw:\/usr\/sbin\/nologin$/m);
    expect(readFileSync(join(root, 'etc/group'), 'utf8')).toMatch(/^fleetgw:x:\d+:$/m);
  });
});
