/**
 * docs/vda5050.md "Try it", step by step, through the real processes: `fleetgw admin init`, two
 * `fleetgw admin add-robot --vda5050 … --json` lines appended to a robots file, `fleetgw serve` with
 * its embedded broker, `fleetgw sim --vda5050` with that file (vda-5050-lib AGVs, not the gateway's
 * code), then the documented REST calls: both robots online with battery 100 % near 52.0 N 5.0 E, a
 * go-to and a stop acknowledged by the AGV (`agent_received`), and the sim's SIGTERM (`kill %2`)
 * taking both robots offline with their clean `connection` OFFLINE.
 *
 * The only departures from the page: free loopback ports instead of 8080 and 1884, and the CLI run
 * as `node bin/fleetgw.js` (what `npx fleetgw` runs in the checkout).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, describe, expect, it } from 'vitest';
import { FLEETGW_BIN, fleetgw } from '../support/cli.js';
import { api, startGatewayProcess, untilPoliciesCompiled, type RunningGateway } from '../support/gateway.js';
import { freePort } from '../support/net.js';
import { until } from '../support/until.js';

interface Init { orgId: string; fleetId: string; apiKey: string }
interface Added { robotId: string; robotToken: string }

/** Runs a documented `fleetgw …` line; its stdout is what the page redirects or reads. */
function run(args: string[]): string {
  const r = fleetgw(args);
  if (r.status !== 0) throw new Error(`fleetgw ${args.slice(0, 2).join(' ')} exited ${String(r.status)}: ${r.stderr}`);
  return r.stdout;
}

describe('docs/vda5050.md "Try it": fleetgw sim --vda5050 against fleetgw serve', () => {
  const tmp = mkdtempSync(join(tmpdir(), 'fleetgw-vda-try-'));
  const dataDir = join(tmp, 'vda-demo');
  const robotsFile = join(tmp, 'robots.jsonl');
  let gw: RunningGateway | undefined;
  let sim: ChildProcess | undefined;

  afterAll(async () => {
    if (sim !== undefined && sim.exitCode === null && sim.signalCode === null) sim.kill('SIGKILL');
    await gw?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('two AGVs from the robots file go online, take a go-to and a stop (agent_received), and go offline when the sim stops', async () => {
    const init = JSON.parse(run(['admin', 'init', '--data-dir', dataDir, '--org', 'Demo', '--fleet', 'Yard', '--json'])) as Init;
    const { orgId: ORG, fleetId: FLEET, apiKey: KEY } = init;
    // `>> robots.jsonl`: each add-robot line is one robot of the robots file.
    appendFileSync(robotsFile, run(['admin', 'add-robot', '--data-dir', dataDir, '--fleet', FLEET, '--name', 'agv-1', '--vda5050', 'Acme/AGV-1', '--json']));
    appendFileSync(robotsFile, run(['admin', 'add-robot', '--data-dir', dataDir, '--fleet', FLEET, '--name', 'agv-2', '--vda5050', 'Acme/AGV-2', '--json']));
    chmodSync(robotsFile, 0o600);
    const robots = readFileSync(robotsFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Added);
    expect(robots).toHaveLength(2);

    const mqttPort = await freePort();
    gw = await startGatewayProcess(dataDir, ['--insecure-http', '--vda5050-mqtt-port', String(mqttPort)]);
    const http = gw.ready.http;

    sim = spawn(process.execPath, [FLEETGW_BIN, 'sim', '--vda5050', '--mqtt', `mqtt://127.0.0.1:${mqttPort}`, '--robots-file', robotsFile], { stdio: ['ignore', 'pipe', 'pipe'] });
    let simErr = '';
    sim.stderr!.setEncoding('utf8').on('data', (d: string) => (simErr += d));
    const simLines: Array<Record<string, unknown>> = [];
    createInterface({ input: sim.stdout! }).on('line', (l) => {
      try {
        simLines.push(JSON.parse(l) as Record<string, unknown>);
      } catch {
        // a log line, not an event
      }
    });
    const simExited = new Promise<number | null>((r) => sim!.once('exit', (code) => r(code)));

    // "both online, battery 100 %, near 52.0 N 5.0 E"
    const list = async (): Promise<any[]> => {
      const r = await api(http, KEY, `/v1/robots?fleet_id=${FLEET}`);
      expect(r.status, JSON.stringify(r.body)).toBe(200);
      return r.body as any[];
    };
    await until(async () => {
      const rs = await list();
      return robots.every((x) => rs.find((r) => r.id === x.robotId)?.online === true && rs.find((r) => r.id === x.robotId)?.batteryPct === 100);
    }, 30_000, `both sim AGVs online with their battery in GET /v1/robots; sim stderr: ${simErr}`, 100);
    for (const r of await list()) {
      expect(r.latitude).toBeCloseTo(52.0, 3);
      expect(r.longitude).toBeCloseTo(5.0, 3);
    }

    const ROBOT = robots[0]!.robotId;
    // A user's next curl comes seconds later; a test's comes at once, so it waits for the compiled policy.
    await untilPoliciesCompiled(http, KEY, ORG, FLEET, robots.map((r) => r.robotId));
    const goTo = await api(http, KEY, `/v1/orgs/${ORG}/fleets/${FLEET}/robots/${ROBOT}/go-to`, {
      method: 'POST',
      body: '{"latitude":52.0003,"longitude":5.0006,"wait_for_ack":true}',
    });
    expect(goTo.status, JSON.stringify(goTo.body)).toBe(200);
    expect(goTo.body.delivery.state).toBe('agent_received');
    // "it drives there … and GET /v1/robots follows it"
    await until(async () => ((await list()).find((r) => r.id === ROBOT)?.latitude ?? 0) > 52.00001, 20_000, 'the robot under way in GET /v1/robots', 100);

    const stop = await api(http, KEY, '/v1/agent/control-robot', {
      method: 'POST',
      body: JSON.stringify({ org_id: ORG, fleet_id: FLEET, robot_id: ROBOT, action: 'stop', wait_for_ack: true }),
    });
    expect(stop.status, JSON.stringify(stop.body)).toBe(200);
    expect(stop.body.outcomes[0].delivery.state).toBe('agent_received');
    // The other robot, with a bounded wait in milliseconds.
    const stop2 = await api(http, KEY, '/v1/agent/control-robot', {
      method: 'POST',
      body: JSON.stringify({ org_id: ORG, fleet_id: FLEET, robot_id: robots[1]!.robotId, action: 'stop', wait_for_ack_ms: 10_000 }),
    });
    expect(stop2.status, JSON.stringify(stop2.body)).toBe(200);
    expect(stop2.body.outcomes[0].delivery.state).toBe('agent_received');

    // "`kill %2` stops the AGVs: each publishes `connection` `OFFLINE` and the gateway marks it offline."
    sim.kill('SIGTERM');
    expect(await simExited).toBe(0);
    // Its instant actions include the gateway's stateRequest and factsheetRequest: only the order count is exact.
    expect(simLines.at(-1)).toMatchObject({ event: 'sim-stopped', robots: 2, online: 0, orders: 1 });
    await until(async () => (await list()).every((r) => r.online === false), 10_000, 'both robots offline', 100);
    // The clean way out, not the last will.
    await until(() => gw!.stderr().split('\n').filter((l) => l.includes('connection OFFLINE')).length === 2, 10_000, 'two "connection OFFLINE" offline lines');
    expect(gw.stderr()).not.toContain('CONNECTIONBROKEN');
    for (const r of robots) expect(simErr + gw.stderr()).not.toContain(r.robotToken);
  }, 120_000);
});
