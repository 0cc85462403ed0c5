/** ClickHouse URL and credential rules of `fleetgw serve` (no sockets; the real process is test/deploy/clickhouse-bootstrap.test.ts). */
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { refusePasswordArgument, resolveClickHouseCredentials } from '../../src/cli/clickhouse-credentials.js';
import { parseClickHouseUrl } from '../../src/telemetry/store/clickhouse-target.js';

const dir = mkdtempSync(join(tmpdir(), 'fleetgw-chcred-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('parseClickHouseUrl', () => {
  it('splits origin, database (default: default) and user', () => {
    expect(parseClickHouseUrl('http://ch.depot:8123/fleet')).toEqual({ origin: 'http://ch.depot:8123', database: 'fleet' });
    expect(parseClickHouseUrl('https://gw@ch.depot:8443/')).toEqual({ origin: 'https://ch.depot:8443', database: 'default', username: 'gw' });
  });

  it.each([
    ['http://u:secret@h:8123/db', 'must not contain a password'],
    ['ftp://h/db', 'must be an http(s) URL'],
    ['not a url', 'is not a valid URL'],
    ['http://h:8123/db?x=1', 'no query string'],
    ['http://h:8123/a/b', 'database name'],
    ['http://h:8123/1db', 'database name'],
  ])('refuses %s', (url, message) => {
    let thrown = '';
    try {
      parseClickHouseUrl(url);
    } catch (e) {
      thrown = (e as Error).message;
    }
    expect(thrown).toContain(message);
    expect(thrown).not.toContain('secret');
  });
});

describe('resolveClickHouseCredentials', () => {
  const warnings: string[] = [];
  const warn = (m: string): void => void warnings.push(m);
  const NO_ENV = { clickhouseUser: undefined, clickhousePassword: undefined };

  it('reads the password file without its trailing newline; the flag user wins over the environment', () => {
    const f = join(dir, 'pw');
    writeFileSync(f, 's3cret\n');
    chmodSync(f, 0o600);
    expect(resolveClickHouseCredentials({ userFlag: 'gw', passwordFile: f }, { clickhouseUser: 'other', clickhousePassword: undefined }, warn)).toEqual({ username: 'gw', password: 's3cret' });
    expect(warnings).toEqual([]);
  });

  it('takes user and password from the environment', () => {
    expect(resolveClickHouseCredentials({}, { clickhouseUser: 'gw', clickhousePassword: 'p' }, warn)).toEqual({ username: 'gw', password: 'p' });
    expect(resolveClickHouseCredentials({}, NO_ENV, warn)).toEqual({});
  });

  it('warns about a world-readable file, refuses empty, multi-line, ambiguous', () => {
    const open = join(dir, 'open');
    writeFileSync(open, 'x\n');
    chmodSync(open, 0o644);
    resolveClickHouseCredentials({ passwordFile: open }, NO_ENV, warn);
    expect(warnings.at(-1)).toContain('is readable by every user');
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    expect(() => resolveClickHouseCredentials({ passwordFile: empty }, NO_ENV, warn)).toThrow('is empty');
    const two = join(dir, 'two');
    writeFileSync(two, 'a\nb\n');
    expect(() => resolveClickHouseCredentials({ passwordFile: two }, NO_ENV, warn)).toThrow('more than one line');
    expect(() => resolveClickHouseCredentials({ passwordFile: open }, { clickhouseUser: undefined, clickhousePassword: 'y' }, warn)).toThrow('not both');
    expect(() => resolveClickHouseCredentials({ userFlag: 'a', urlUser: 'b' }, NO_ENV, warn)).toThrow('not both');
  });

  it('refuses --clickhouse-password in both spellings, not --clickhouse-password-file', () => {
    expect(() => refusePasswordArgument(['--clickhouse-password', 'x'])).toThrow('is refused');
    expect(() => refusePasswordArgument(['--clickhouse-password=x'])).toThrow('is refused');
    expect(() => refusePasswordArgument(['--clickhouse-password-file', 'f'])).not.toThrow();
  });
});
