/**
 * `fleetgw serve --vda5050-mqtt-url mqtts://… --vda5050-mqtt-ca FILE` against Debian's mosquitto with
 * a TLS listener (a throwaway CA and server certificate made with openssl), the password file and the
 * ACL `fleetgw admin vda5050-acl` writes (test/support/vda-mosquitto.ts):
 *
 * - with a CA that did not sign the broker's certificate, serve still starts, logs the failed broker
 *   connection once (a warning naming the broker's URL and the TLS error, never the password), keeps
 *   serving HTTP, and a robot on the broker stays offline;
 * - with the right CA, a robot on a plain `mqtt` client over TLS (trusting the same CA) goes online and
 *   a stop through `POST /v1/agent/control-robot` is `agent_received` once its state shows the action.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { HAVE_MOSQUITTO } from '../support/mosquitto.js';
import { HAVE_OPENSSL, makeTestCa, type TestCa } from '../support/test-ca.js';
import { until } from '../support/until.js';
import { addVdaRobot, type VdaRobot } from '../support/vda-gateway.js';
import { startMosquittoFor, type MosquittoForGateway } from '../support/vda-mosquitto.js';
import { scriptedRobot, type ScriptedRobot } from '../vda5050/vda-fixtures.js';

describe.skipIf(!HAVE_MOSQUITTO || !HAVE_OPENSSL)('VDA 5050 over TLS to an external mosquitto', () => {
  const d = makeDataDir('fleetgw-vda-tls-');
  const certs = mkdtempSync(join(tmpdir(), 'fleetgw-vda-tls-ca-'));
  let ca: TestCa;
  let otherCa: TestCa;
  let robot: VdaRobot;
  let broker: MosquittoForGateway;
  let gw: RunningGateway | undefined;
  let agent: ScriptedRobot | undefined;

  beforeAll(async () => {
    ca = makeTestCa(certs, 'broker');
    otherCa = makeTestCa(certs, 'other');
    robot = addVdaRobot(d.dataDir, d.fleetId, 'tls-robot', 'Acme', 'TLS-1');
    broker = await startMosquittoFor(d.dataDir, [robot], ca);
    expect(broker.url).toMatch(/^mqtts:\/\/127\.0\.0\.1:\d+$/);
    // The robot trusts the broker's CA: it is on the broker whichever CA the gateway is given.
    agent = await scriptedRobot(broker.url, { manufacturer: robot.manufacturer, serialNumber: robot.serialNumber }, { username: robot.robotId, password: robot.robotToken, ca: readFileSync(ca.caFile) });
  });

  afterAll(async () => {
    await agent?.end().catch(() => undefined);
    await gw?.stop();
    await broker?.close();
    rmSync(d.dataDir, { recursive: true, force: true });
    rmSync(certs, { recursive: true, force: true });
  });

  const online = async (): Promise<boolean> => (await api(gw!.ready.http, d.apiKey, `/v1/robots/${robot.robotId}`)).body.online === true;

  it('with a CA that did not sign the broker\'s certificate: serve runs, logs the broker and the TLS error once, the robot stays offline', async () => {
    const args = broker.serveArgs.map((a) => (a === ca.caFile ? otherCa.caFile : a));
    expect(args).toContain(otherCa.caFile);
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...args]);
    const failed = (): string[] => gw!.stderr().split('\n').filter((l) => l.includes('VDA 5050 master control: broker connection failed'));
    await until(() => failed().length > 0, 20_000, `the failed broker connection logged; stderr:\n${gw.stderr()}`);
    const line = JSON.parse(failed()[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 'warn', url: broker.url });
    expect(String(line.err)).toMatch(/certificate|issuer/i);
    // The robot is on the broker and publishes its state; master control never reads it.
    await agent!.online();
    await agent!.publishState();
    // Master control retries every second; each refused handshake is a protocol error in mosquitto's log.
    const refusedHandshakes = (): number => broker.log().split('\n').filter((l) => l.includes('Client <unknown> disconnected: Protocol error')).length;
    await until(() => refusedHandshakes() >= 3, 20_000, `three refused handshakes in mosquitto's log:\n${broker.log()}`, 100);
    // One line per distinct failure, not one per retry.
    expect(failed()).toHaveLength(1);
    // The robot on the broker meanwhile: master control never reached it, it is not online.
    expect(agent!.received).toEqual([]);
    expect(await online()).toBe(false);
    const health = await fetch(`${gw.ready.http}/healthz`);
    expect(health.status).toBe(200);
    expect(gw.proc.exitCode).toBeNull();
    expect(gw.stderr()).not.toContain(readFileSync(join(d.dataDir, 'vda5050-broker-password'), 'utf8').trim());
    expect(await gw.stop()).toBe(0);
    gw = undefined;
  }, 60_000);

  it('with the broker\'s CA: the robot goes online over TLS and a stop is agent_received', async () => {
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...broker.serveArgs]);
    expect(gw.stderr()).toContain('VDA 5050 uses an external broker');
    // Master control asks every bound robot for its state once subscribed; the robot answers.
    await until(() => agent!.received.some((m) => m.topic === 'instantActions'), 20_000, 'master control reaching the robot over TLS', 50);
    await agent!.online();
    await agent!.publishState();
    await until(online, 20_000, 'the robot online', 100);

    const stopping = api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
      method: 'POST',
      body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, robot_id: robot.robotId, action: 'stop', reason: 'tls', wait_for_ack_ms: 15_000 }),
    });
    let stopId = '';
    await until(() => {
      const m = agent!.received.find((r) => r.topic === 'instantActions' && (r.body.instantActions as Array<{ actionType: string }>).some((a) => a.actionType === 'startPause'));
      stopId = (m?.body.instantActions as Array<{ actionId: string; actionType: string }> | undefined)?.find((a) => a.actionType === 'startPause')?.actionId ?? '';
      return stopId !== '';
    }, 15_000, 'the stop at the robot', 50);
    await agent!.publishState({ paused: true, actionStates: [{ actionId: stopId, actionType: 'startPause', actionStatus: 'FINISHED' }] });
    const stop = await stopping;
    expect(stop.status, JSON.stringify(stop.body)).toBe(200);
    expect(stop.body.outcomes[0].delivery).toMatchObject({ state: 'agent_received', commandId: stopId });
  }, 60_000);
});
