/**
 * `fleetgw serve`'s VDA 5050 flags and the identity rules of `admin add-robot --vda5050`: every
 * refusal names the flag or field (the real-process tests spawn the CLI for a few of these).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { refuseVda5050PasswordArgument, vda5050Settings } from '../../src/cli/vda5050-options.js';
import { bindingPartProblem, parseBindingArgument } from '../../src/fleet/robots/vda5050-identity.js';

const settings = (v: Record<string, string>, warn: (m: string) => void = () => {}) => vda5050Settings(v, warn);

describe('serve --vda5050 flags', () => {
  it('defaults: auto, embedded broker on 1883, uagv, 2.0.0', () => {
    expect(settings({})).toEqual({ mode: 'auto', port: 1883, interfaceName: 'uagv', version: '2.0.0', external: null });
  });

  it('an external broker: normalized URL, username, password from a file, CA', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fleetgw-vda5050-flags-'));
    try {
      writeFileSync(join(dir, 'pw'), 'secret\n', { mode: 0o600 });
      writeFileSync(join(dir, 'ca.pem'), 'CA');
      const warned: string[] = [];
      const s = settings({ 'vda5050-mqtt-url': 'mqtts://broker.example', 'vda5050-mqtt-username': 'gw', 'vda5050-mqtt-password-file': join(dir, 'pw'), 'vda5050-mqtt-ca': join(dir, 'ca.pem') }, (m) => warned.push(m));
      expect(s.external).toEqual({ url: 'mqtts://broker.example:8883', username: 'gw', password: 'secret', ca: Buffer.from('CA') });
      expect(warned).toEqual([]);
      writeFileSync(join(dir, 'open'), 'x', { mode: 0o644 });
      settings({ 'vda5050-mqtt-url': 'mqtt://b:1', 'vda5050-mqtt-password-file': join(dir, 'open') }, (m) => warned.push(m));
      expect(warned.join()).toContain('--vda5050-mqtt-password-file');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses what it cannot honour, naming the flag', () => {
    const cases: [Record<string, string>, string][] = [
      [{ vda5050: 'maybe' }, '--vda5050 must be one of: auto, on, off'],
      [{ 'vda5050-version': '2.1.0' }, '--vda5050-version must be one of: 2.0.0'],
      [{ 'vda5050-interface': 'u/agv' }, '--vda5050-interface must not contain'],
      [{ 'vda5050-interface': '' }, '--vda5050-interface needs a value'],
      [{ 'vda5050-mqtt-port': '99999' }, 'vda5050-mqtt-port'],
      [{ 'vda5050-mqtt-username': 'm' }, '--vda5050-mqtt-username needs --vda5050-mqtt-url'],
      [{ 'vda5050-mqtt-ca': '/x' }, '--vda5050-mqtt-ca needs --vda5050-mqtt-url'],
      [{ 'vda5050-mqtt-url': 'http://x:1' }, '--vda5050-mqtt-url must use mqtt:// or mqtts://'],
      [{ 'vda5050-mqtt-url': 'not a url' }, '--vda5050-mqtt-url must be mqtt://HOST:PORT'],
      [{ 'vda5050-mqtt-url': 'mqtt://u:p@x:1' }, '--vda5050-mqtt-url must not carry credentials'],
      [{ 'vda5050-mqtt-url': 'mqtt://x:1/path' }, 'without a path'],
      [{ 'vda5050-mqtt-url': 'mqtt://x:1', 'vda5050-mqtt-port': '1884' }, '--vda5050-mqtt-port is the embedded broker'],
      [{ 'vda5050-mqtt-url': 'mqtt://x:1', 'vda5050-mqtt-ca': '/x' }, '--vda5050-mqtt-ca needs an mqtts://'],
      [{ 'vda5050-mqtt-url': 'mqtt://x:1', 'vda5050-mqtt-password-file': '/nonexistent/pw' }, 'cannot read --vda5050-mqtt-password-file'],
      [{ vda5050: 'off', 'vda5050-mqtt-port': '1884' }, '--vda5050-mqtt-port has no effect with --vda5050 off'],
    ];
    for (const [v, says] of cases) expect(() => settings(v), JSON.stringify(v)).toThrow(says);
    expect(() => refuseVda5050PasswordArgument(['--vda5050-mqtt-password=hunter2'])).toThrow(/--vda5050-mqtt-password is refused/);
    expect(() => refuseVda5050PasswordArgument(['--vda5050-mqtt-password=hunter2'])).not.toThrow(/hunter2/);
  });
});

describe('VDA 5050 identity parts', () => {
  it('accept one printable-ASCII topic level of 1-128 characters', () => {
    expect(parseBindingArgument('--vda5050', 'Acme Robotics/AGV-1:07')).toEqual({ manufacturer: 'Acme Robotics', serialNumber: 'AGV-1:07' });
    expect(bindingPartProblem('f', 'x'.repeat(128))).toBeNull();
  });

  it('refuse separators, wildcards, empty, long and non-ASCII parts, naming the field', () => {
    const cases: [string, string][] = [
      ['Acme/+', '--vda5050 serial number must not contain'],
      ['Ac#me/X', '--vda5050 manufacturer must not contain'],
      ['Acme/X/Y', '--vda5050 serial number must not contain'],
      ['Acme', '--vda5050 must be MANUFACTURER/SERIAL'],
      ['/X', '--vda5050 manufacturer must not be empty'],
      ['Acme/', '--vda5050 serial number must not be empty'],
      [`Acme/${'x'.repeat(129)}`, '--vda5050 serial number must be at most 128 characters'],
      ['Acmé/X', '--vda5050 manufacturer must be printable ASCII'],
      ['Acme/X\u0000', '--vda5050 serial number must be printable ASCII'],
    ];
    for (const [text, says] of cases) expect(() => parseBindingArgument('--vda5050', text), text).toThrow(says);
  });
});
