/**
 * Issue 8 item 1, through the real `fleetgw serve` process (dist: `npm run build` first) and robots
 * on the real gRPC link: a robot advertises an argument schema whose `pattern` backtracks
 * catastrophically in JavaScript (`^([a-z]+)*$`), a client invokes the action with a hostile
 * argument, and stops sent 300 ms later, to another robot and to the same one, are answered well
 * under a second with both links up. Before the fix the gateway's event loop was held for minutes
 * (33 s at 30 characters, 117 s at 41): the stops time out here after 5 s instead.
 *
 * Also: patterns the linear-time engine cannot run, overlong patterns and oversized arguments make
 * only their action unusable / the request refused, with the reason in the 422 and the gateway log.
 */
import { logMessages } from '../support/capture-log.js';
import { rmSync } from 'node:fs';
import { create } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/index.js';
import { CommandPolicySchema } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { adminJson } from '../support/cli.js';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until, sleep } from '../support/until.js';

const HOSTILE_PATTERN = '^([a-z]+)*$';
const schema = (pattern: string): string => JSON.stringify({ type: 'object', properties: { text: { type: 'string', pattern } }, required: ['text'] });

const policy = create(CommandPolicySchema, {
  actions: [
    { name: 'label', argumentsSchemaJson: schema(HOSTILE_PATTERN) },
    // The same hostile pattern as a property-name pattern.
    { name: 'tag', argumentsSchemaJson: JSON.stringify({ type: 'object', patternProperties: { [HOSTILE_PATTERN]: { type: 'number' } }, additionalProperties: false }) },
    { name: 'echo', argumentsSchemaJson: schema('^(a+)\\1$') },
    { name: 'long', argumentsSchemaJson: schema(`^${'a'.repeat(600)}$`) },
    { name: 'free', argumentsSchemaJson: JSON.stringify({ type: 'object' }) },
  ],
});

let gw: RunningGateway;
let d: ReturnType<typeof makeDataDir>;
let creds: { robotId: string; robotToken: string }[];
const agents: RobotAgent[] = [];
const connects = [0, 0];
const disconnects = [0, 0];

beforeAll(async () => {
  d = makeDataDir('fleetgw-e2e-policy-');
  creds = Array.from({ length: 2 }, (_, i) => adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `r${i}`]));
  gw = await startGatewayProcess(d.dataDir);
  creds.forEach((c, i) => {
    const agent = new RobotAgent({
      address: gw.ready.grpc, robotId: c.robotId, robotToken: c.robotToken, policy, dedicatedConnection: true,
      onCommand: () => ({ accept: true }),
      onConnected: () => { connects[i]!++; },
      onDisconnected: () => { disconnects[i]!++; },
    });
    agent.start();
    agents.push(agent);
  });
  await until(() => connects.every((n) => n === 1), 10_000, 'robots did not connect');
  // Both policies compiled: on a loaded host a Hello's compile can overrun its budget, and the
  // gateway then compiles the policy again in the background (policy-registry.ts).
  for (const robot of [0, 1]) {
    await until(async () => (await invokeService(robot, 'label', { text: 'ready' })).status === 200, 15_000, `robot ${robot}'s policy compiled`, 200);
  }
}, 60_000);

afterAll(async () => {
  for (const a of agents) await a.stop();
  // SIGKILL: on a build without the fix the gateway is still stuck in the regular expression.
  await gw?.stop('SIGKILL');
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

/** POST with a bound: a frozen gateway makes the request fail after `timeoutMs` instead of hanging. */
async function post(path: string, body: unknown, timeoutMs = 5000): Promise<{ status: number; body: any; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${gw.ready.http}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${d.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const json: unknown = await res.json();
  return { status: res.status, body: json, ms: performance.now() - started };
}

const controlRobot = (body: Record<string, unknown>, timeoutMs?: number) => post('/v1/agent/control-robot', { org_id: d.orgId, fleet_id: d.fleetId, ...body }, timeoutMs);
const invokeService = (robot: number, name: string, args: unknown) =>
  post(`/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${creds[robot]!.robotId}/invoke-service`, { action_name: name, arguments: args });

describe('robot-supplied schema patterns cannot freeze the gateway', () => {
  it('answers stops to another robot and to the same robot promptly while a hostile pattern is evaluated', async () => {
    for (const len of [30, 41]) {
      const hostile = `${'abcdefghijklmnopqrstuvwxyz'.repeat(2).slice(0, len - 1)}!`;
      const results = Promise.allSettled([
        invokeService(0, 'label', { text: hostile }),
        controlRobot({ action: 'invoke_action', robot_id: creds[0]!.robotId, action_name: 'tag', arguments: { [hostile]: 1 } }),
      ]);
      // Time-based on purpose: a head start, so the stops arrive while the patterns are evaluated (on a
      // build without the fix the gateway is frozen in them by then).
      await sleep(300);
      const [other, same] = await Promise.all([
        controlRobot({ action: 'stop', robot_id: creds[1]!.robotId, wait_for_ack: true }, 2000),
        controlRobot({ action: 'stop', robot_id: creds[0]!.robotId, wait_for_ack: true }, 2000),
      ]);
      for (const stop of [other, same]) {
        expect(stop.status).toBe(200);
        expect(stop.body.outcomes[0].delivery.state).toBe('agent_received');
        expect(stop.ms).toBeLessThan(1000);
      }
      const [viaNested, viaControl] = await results;
      expect(viaNested.status).toBe('fulfilled');
      const nested = (viaNested as PromiseFulfilledResult<Awaited<ReturnType<typeof post>>>).value;
      expect(nested.status).toBe(422);
      expect(nested.body.code).toBe('policy_rejected');
      expect(nested.body.error, JSON.stringify(nested.body)).toContain('must match pattern');
      expect(viaControl.status).toBe('fulfilled');
      const control = (viaControl as PromiseFulfilledResult<Awaited<ReturnType<typeof post>>>).value;
      expect(control.body.outcomes[0].error.code).toBe('policy_rejected');
    }
    // Both links stayed up the whole time: one connect each, no disconnect.
    expect(connects).toEqual([1, 1]);
    expect(disconnects).toEqual([0, 0]);
  }, 30_000);

  it('still accepts arguments that match the pattern', async () => {
    const ok = await invokeService(1, 'label', { text: 'hello' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body.delivery.state).toMatch(/dispatched|agent_received/);
  });

  it('makes only the action with a pattern the engine refuses unusable, with the reason in the 422 and the log', async () => {
    const backref = await invokeService(0, 'echo', { text: 'aa' });
    expect(backref.status).toBe(422);
    expect(backref.body.error).toContain('linear-time engine');
    const long = await invokeService(0, 'long', { text: 'a' });
    expect(long.status).toBe(422);
    expect(long.body.error).toContain('exceeds the gateway\'s limit of 512');
    expect(logMessages(gw.stderr())).toMatch(/advertised actions unusable: "echo": arguments schema refused/);
  });

  it('refuses arguments over the documented size bounds before any schema runs', async () => {
    const longString = await invokeService(0, 'free', { text: 'x'.repeat(4097) });
    expect(longString.status).toBe(422);
    expect(longString.body.error).toContain('exceeds the limit of 4096');
    const big = await invokeService(0, 'free', { items: Array.from({ length: 40 }, () => 'y'.repeat(2000)) });
    expect(big.status).toBe(422);
    expect(big.body.error).toContain('exceed 65536 bytes');
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 40; i++) deep = { d: deep };
    const nested = await invokeService(0, 'free', deep);
    // 422 from the policy check, or 400 where request validation bounds free-form depth as well
    // (issue 8 item 11, same 32 levels): either way no schema runs on it.
    expect([400, 422]).toContain(nested.status);
    expect(nested.body.error).toContain('deeper than 32');
  });
});
