/**
 * `fleetgw serve`'s VDA 5050 flags and the identity rules of `admin add-robot --vda5050`: every
 * refusal names the flag or field (the real-process tests spawn the CLI for a few of these).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { refuseVda5050PasswordArgument, vda5050MapOrigin, vda5050Settings } from '../../src/cli/vda5050-options.js';
import { bindingPartProblem, parseBindingArgument } from '../../src/fleet/robots/vda5050-identity.js';
import { fleetgw } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';
import { addVdaRobot, embeddedBroker } from '../support/vda-gateway.js';
import { scriptedRobot, type ScriptedRobot } from '../vda5050/vda-fixtures.js';

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

describe('serve --vda5050-map-origin and --vda5050-go-to-extent', () => {
  it('parse to the map origin; neither flag leaves the default', () => {
    expect(vda5050MapOrigin({})).toBeUndefined();
    expect(vda5050MapOrigin({ 'vda5050-map-origin': '48.137, 11.575, 519.5' })).toEqual({ latitude: 48.137, longitude: 11.575, elevationM: 519.5, halfSizeM: 150 });
    expect(vda5050MapOrigin({ 'vda5050-map-origin': '-33.9,18.4' })).toEqual({ latitude: -33.9, longitude: 18.4, elevationM: 2, halfSizeM: 150 });
    expect(vda5050MapOrigin({ 'vda5050-go-to-extent': '400' })).toEqual({ latitude: 52, longitude: 5, elevationM: 2, halfSizeM: 400 });
  });

  it('refuse a bad value, naming the flag', () => {
    const cases: [Record<string, string>, string][] = [
      [{ 'vda5050-map-origin': '52' }, '--vda5050-map-origin must be LATITUDE,LONGITUDE[,ELEVATION_M]'],
      [{ 'vda5050-map-origin': '52,5,2,1' }, '--vda5050-map-origin must be LATITUDE,LONGITUDE[,ELEVATION_M]'],
      [{ 'vda5050-map-origin': '52N,5E' }, '--vda5050-map-origin must be LATITUDE,LONGITUDE[,ELEVATION_M]'],
      [{ 'vda5050-map-origin': 'NaN,5' }, '--vda5050-map-origin must be LATITUDE,LONGITUDE[,ELEVATION_M]'],
      [{ 'vda5050-map-origin': '1e3,5' }, '--vda5050-map-origin must be LATITUDE,LONGITUDE[,ELEVATION_M]'],
      [{ 'vda5050-map-origin': '91,5' }, '--vda5050-map-origin latitude must be within ±85°'],
      [{ 'vda5050-map-origin': '52,181' }, '--vda5050-map-origin longitude must be within ±180°'],
      [{ 'vda5050-map-origin': '52,5,20000' }, '--vda5050-map-origin elevation must be within ±10000 m'],
      [{ 'vda5050-go-to-extent': '0' }, '--vda5050-go-to-extent must be a number of metres above 0'],
      [{ 'vda5050-go-to-extent': '10001' }, '--vda5050-go-to-extent must be a number of metres above 0 and at most 10000'],
      [{ 'vda5050-go-to-extent': 'wide' }, '--vda5050-go-to-extent must be a number'],
    ];
    for (const [v, says] of cases) expect(() => vda5050MapOrigin(v), JSON.stringify(v)).toThrow(says);
    expect(() => settings({ vda5050: 'off', 'vda5050-map-origin': '52,5' })).toThrow('--vda5050-map-origin has no effect with --vda5050 off');
  });
});

describe('the map origin through the real fleetgw serve', () => {
  const d = makeDataDir('fleetgw-vda-origin-');
  let gw: RunningGateway | undefined;
  let robot: ScriptedRobot | undefined;
  afterAll(async () => {
    await robot?.end();
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it.each([
    [['--vda5050-map-origin', '91,5'], '--vda5050-map-origin latitude must be within ±85°, got 91'],
    [['--vda5050-map-origin', 'here'], '--vda5050-map-origin must be LATITUDE,LONGITUDE[,ELEVATION_M]'],
    [['--vda5050-go-to-extent=-5'], '--vda5050-go-to-extent must be a number of metres above 0'],
    [['--vda5050-map-origin=-33.9,18.4,10', '--vda5050', 'off'], '--vda5050-map-origin has no effect with --vda5050 off'],
  ])('refuses %j: exit 2 naming the flag', (extra, says) => {
    const r = fleetgw(['serve', '--data-dir', d.dataDir, '--insecure-http', '--port', '0', '--grpc-port', '0', '--log-level', 'warn', ...extra]);
    expect(r.status, r.stderr).toBe(2);
    expect(r.stderr).toContain(says);
  });

  it('lists the flags in serve --help', () => {
    const r = fleetgw(['serve', '--help']);
    expect(r.stdout).toContain('--vda5050-map-origin LAT,LON[,ELEVATION_M]');
    expect(r.stdout).toContain('--vda5050-go-to-extent M');
  });

  it('places a robot\'s map position at that origin in GET /v1/robots, and bounds go-to by the extent', async () => {
    const vda = addVdaRobot(d.dataDir, d.fleetId, 'agv-1', 'Acme', 'AGV-1');
    const broker = await embeddedBroker();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...broker.args, '--vda5050-map-origin', '48.137,11.575,519.5', '--vda5050-go-to-extent', '400']);
    robot = await scriptedRobot(broker.url, { manufacturer: vda.manufacturer, serialNumber: vda.serialNumber }, { username: vda.robotId, password: vda.robotToken });
    await robot.online();
    const view = async (): Promise<any> => ((await api(gw!.ready.http, d.apiKey, `/v1/robots?fleet_id=${d.fleetId}`)).body as any[]).find((r) => r.id === vda.robotId);
    // The scripted robot stands at map x 1, y 2: 2 m north and 1 m east of the origin.
    await until(async () => {
      await robot!.publishState();
      return (await view())?.batteryPct === 80;
    }, 30_000, 'the robot\'s state in GET /v1/robots', 250);
    const here = await view();
    expect(here.latitude).toBeCloseTo(48.137 + 2 / 111_320, 7);
    expect(here.longitude).toBeCloseTo(11.575 + 1 / (111_320 * Math.cos((48.137 * Math.PI) / 180)), 7);
    expect(here.elevationM).toBeCloseTo(519.5, 5);
    // The go-to area is the policy's: 300 m north of the origin lies inside ±400 m, 500 m outside.
    const goTo = (north: number) => api(gw!.ready.http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${vda.robotId}/go-to`, {
      method: 'POST',
      body: JSON.stringify({ latitude: 48.137 + north / 111_320, longitude: 11.575 }),
    });
    const outside = await goTo(500);
    expect(outside.status, JSON.stringify(outside.body)).toBe(422);
    const inside = await goTo(300);
    expect(inside.status, JSON.stringify(inside.body)).toBe(200);
  }, 120_000);
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
