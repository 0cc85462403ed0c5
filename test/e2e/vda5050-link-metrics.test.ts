/**
 * VDA 5050 master control's own counts in `GET /metrics` of the real `fleetgw serve`: each series is
 * there from 0 with its HELP text before any robot connects, moves when a robot floods its states
 * (coalesced), and the whole exposition passes `promtool check metrics`.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { missingTools } from '../deploy/tools.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';
import { addVdaRobot, embeddedBroker } from '../support/vda-gateway.js';
import { scriptedRobot, type ScriptedRobot } from '../vda5050/vda-fixtures.js';

const PROMTOOL = '/usr/bin/promtool';
const missing = missingTools([PROMTOOL], 'prometheus');

const LINK_SERIES = [
  'fleetgw_vda5050_messages_coalesced_total',
  'fleetgw_vda5050_messages_unbound_total',
  'fleetgw_vda5050_messages_unmapped_total',
  'fleetgw_vda5050_publish_dropped_total',
];

/** The value of an unlabelled series, or undefined when it is not exposed. */
function valueOf(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** `promtool check metrics` on an exposition: its exit code and what it said. */
function promtoolCheck(text: string): { status: number | null; output: string } {
  const r = spawnSync(PROMTOOL, ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

/**
 * promtool on the whole scrape (it parses, and it finds nothing in the gateway's own series:
 * prom-client's default `nodejs_active_*_total` gauges draw its suffix lint) and on the VDA 5050
 * families alone (they pass clean).
 */
function expectPromtoolPasses(text: string): void {
  const whole = promtoolCheck(text);
  expect(whole.output).not.toMatch(/error|fleetgw_/);
  const families = text.split('\n').filter((l) => /^(# (HELP|TYPE) )?fleetgw_vda5050_/.test(l)).join('\n') + '\n';
  const vda = promtoolCheck(families);
  expect(vda.status, vda.output).toBe(0);
}

describe.skipIf(missing.length > 0)(`VDA 5050 link counters in /metrics${missing.length > 0 ? ' (skipped: promtool missing)' : ''}`, () => {
  const d = makeDataDir('fleetgw-vda-metrics-');
  let gw: RunningGateway | undefined;
  let robot: ScriptedRobot | undefined;

  afterAll(async () => {
    await robot?.end();
    await gw?.stop();
    rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('publishes each link counter from 0 with HELP, counts a flood, and passes promtool', async () => {
    const vda = addVdaRobot(d.dataDir, d.fleetId, 'agv-1', 'Acme', 'AGV-1');
    const broker = await embeddedBroker();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', ...broker.args]);
    const token = readFileSync(join(d.dataDir, 'metrics-token'), 'utf8').trim();
    const scrape = async (): Promise<string> => {
      const res = await fetch(`${gw!.ready.http}/metrics`, { headers: { authorization: `Bearer ${token}` } });
      expect(res.status).toBe(200);
      return res.text();
    };

    const first = await scrape();
    for (const name of LINK_SERIES) {
      expect(valueOf(first, name), `${name} from 0`).toBe(0);
      expect(first).toMatch(new RegExp(`^# HELP ${name} \\S.{20,}$`, 'm'));
      expect(first).toContain(`# TYPE ${name} counter`);
    }
    expectPromtoolPasses(first);

    // A robot flooding its state: unread states are replaced by newer ones, and counted.
    robot = await scriptedRobot(broker.url, { manufacturer: vda.manufacturer, serialNumber: vda.serialNumber }, { username: vda.robotId, password: vda.robotToken });
    await robot.online();
    await until(async () => {
      await Promise.all(Array.from({ length: 500 }, () => robot!.publishState()));
      return (valueOf(await scrape(), 'fleetgw_vda5050_messages_coalesced_total') ?? 0) > 0;
    }, 60_000, 'coalesced states in /metrics', 10);
    const after = await scrape();
    expectPromtoolPasses(after);
    for (const name of LINK_SERIES) expect(valueOf(after, name), name).toBeDefined();
  }, 120_000);
});
