/**
 * Real process: what `fleetgw serve` logs when its embedded VDA 5050 broker refuses a login. A client
 * controls the MQTT username and client id, and may put a secret there (a robot configured with its
 * username and password swapped sends its robot token as the username): the refusal line names the
 * username only when it has the shape of a robot id (or is master control's name), else only its
 * length, and no line at any level carries the token.
 */
import { rmSync } from 'node:fs';
import mqtt from 'mqtt';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseLogLines } from '../support/capture-log.js';
import { adminJson } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';

type Creds = { robotId: string; robotToken: string };

/** Logs in and resolves with the refusal's message (rejects when the login is accepted). */
function refusal(port: number, username: string, password: string, clientId: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = mqtt.connect(`mqtt://127.0.0.1:${port}`, { username, password, clientId, reconnectPeriod: 0, connectTimeout: 10_000 });
    c.once('connect', () => {
      c.end(true);
      reject(new Error('login accepted'));
    });
    c.once('error', (err) => {
      c.end(true);
      resolve(err.message);
    });
  });
}

describe('a refused VDA 5050 login through fleetgw serve logs no secret', () => {
  const d = makeDataDir('fleetgw-e2e-vda5050-login-log-');
  const robot = adminJson<Creds>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'agv', '--vda5050', 'Acme/L1']);
  let gw: RunningGateway;
  let port = 0;
  const refusedLines = (): Record<string, unknown>[] => parseLogLines(gw.stderr()).filter((l) => String(l.msg).startsWith('VDA 5050 login refused'));

  beforeAll(async () => {
    port = await freePort();
    // debug: the client error lines too.
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--log-level', 'debug', '--vda5050', 'on', '--vda5050-mqtt-port', String(port)]);
  });
  afterAll(async () => {
    await gw.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('username and password swapped (the token as username and client id): refused, logged by length only', async () => {
    expect(robot.robotToken).toMatch(/^fgr_[A-Za-z0-9_-]{43}$/);
    expect(await refusal(port, robot.robotToken, robot.robotId, robot.robotToken)).toMatch(/Bad username or password/);
    await until(() => refusedLines().length >= 1, 10_000, 'the refusal line');
    expect(refusedLines()[0]).toMatchObject({ level: 'warn', usernameLength: robot.robotToken.length });
    expect(refusedLines()[0]!.username).toBeUndefined();

    // A wrong token under the robot's own id: that username is a robot id and is named.
    expect(await refusal(port, robot.robotId, `fgr_${'x'.repeat(43)}`, 'agv-l1')).toMatch(/Bad username or password/);
    await until(() => refusedLines().some((l) => l.username === robot.robotId), 10_000, 'the refusal line naming the robot id');

    const stderr = gw.stderr();
    expect(stderr).not.toContain(robot.robotToken);
    expect(stderr).not.toContain(robot.robotToken.slice(4));
    // Nothing token-like at all (a robot id is 36 characters, with dashes).
    expect(stderr.match(/[A-Za-z0-9_+/=-]{40,}/g) ?? []).toEqual([]);
  });
});
