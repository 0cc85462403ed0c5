/**
 * Through the real `fleetgw serve` process (dist: `npm run build` first)
 * and robots on the real gRPC link: compile time is bounded per robot (250 ms per policy) and also
 * across robots. Eight robots connect at once, each advertising a different policy too expensive to
 * compile within its budget; no stop to another robot sent meanwhile waits as long as the compiles
 * back to back would hold the event loop.
 * Before the gateway-wide compile budget, the eight compiles (and the compiler rebuild after each
 * cut-off) held the event loop back to back for seconds.
 */
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { create } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RobotAgent } from '../../src/agent/index.js';
import { POLICY_COMPILE_BUDGET_MS } from '../../src/commands/policy-limits.js';
import { CommandPolicySchema, type CommandPolicy } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { addRobots, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { sleep, until } from '../support/until.js';

// Bounds, not waits (every wait in here ends on a condition): real processes on a loaded 2-core
// machine (.ci/load-check.sh) take several times longer than on an idle one.
vi.setConfig({ testTimeout: 180_000, hookTimeout: 180_000 });

const HOSTILE_ROBOTS = 8;

/** A schema of 1,500 properties: ajv needs well over the 250 ms compile budget for it. Distinct per robot (no shared cache entry). */
function expensivePolicy(i: number): CommandPolicy {
  const props = Object.fromEntries(Array.from({ length: 1500 }, (_, p) => [`r${i}p${p}`, { type: 'string', maxLength: 20 }]));
  return create(CommandPolicySchema, { actions: [{ name: `heavy${i}`, argumentsSchemaJson: JSON.stringify({ type: 'object', properties: props }) }] });
}

let gw: RunningGateway;
let d: ReturnType<typeof makeDataDir>;
let creds: { robotId: string; robotToken: string }[];
const agents: RobotAgent[] = [];

function agentFor(c: { robotId: string; robotToken: string }, policy: CommandPolicy | undefined, onConnected: () => void): RobotAgent {
  const agent = new RobotAgent({
    address: gw.ready.grpc, robotId: c.robotId, robotToken: c.robotToken, dedicatedConnection: true,
    ...(policy ? { policy } : {}),
    onCommand: () => ({ accept: true }),
    onConnected,
  });
  agents.push(agent);
  return agent;
}

beforeAll(async () => {
  d = makeDataDir('fleetgw-e2e-compile-');
  creds = await addRobots(d.dataDir, d.fleetId, HOSTILE_ROBOTS + 1);
  gw = await startGatewayProcess(d.dataDir);
});

afterAll(async () => {
  for (const a of agents) await a.stop();
  await gw?.stop('SIGKILL');
  if (d) rmSync(d.dataDir, { recursive: true, force: true });
});

async function stop(robotId: string): Promise<{ status: number; state: string; ms: number }> {
  const started = performance.now();
  const res = await fetch(`${gw.ready.http}/v1/agent/control-robot`, {
    method: 'POST',
    headers: { authorization: `Bearer ${d.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_id: robotId, wait_for_ack: true }),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as { outcomes: { delivery: { state: string } }[] };
  return { status: res.status, state: body.outcomes[0]?.delivery.state ?? '', ms: performance.now() - started };
}

/**
 * The gateway's longest event-loop delay since the previous scrape, in ms (prom-client resets its
 * `monitorEventLoopDelay` histogram at each scrape): how long the loop was held, as the gateway itself saw it.
 */
async function loopLagMaxMs(): Promise<number> {
  const token = readFileSync(join(d.dataDir, 'metrics-token'), 'utf8').trim();
  const text = await (await fetch(`${gw.ready.http}/metrics`, { headers: { authorization: `Bearer ${token}` } })).text();
  const m = /^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(text);
  if (!m) throw new Error('no nodejs_eventloop_lag_max_seconds in /metrics');
  return Number(m[1]) * 1000;
}

describe('compiling robot policies is bounded across robots', () => {
  it('answers stops to another robot promptly while eight robots with expensive policies connect at once', async () => {
    const victim = creds[HOSTILE_ROBOTS]!;
    let victimUp = false;
    agentFor(victim, undefined, () => { victimUp = true; }).start();
    await until(() => victimUp, 30_000, 'victim robot connected');
    expect((await stop(victim.robotId)).state).toBe('agent_received');

    await loopLagMaxMs(); // starts the window
    let hostileUp = 0;
    const compiled = (): number => (gw.stderr().match(/advertised actions unusable/g) ?? []).length;
    for (let i = 0; i < HOSTILE_ROBOTS; i++) agentFor(creds[i]!, expensivePolicy(i), () => { hostileUp++; }).start();
    // One stop at a time, from the moment the Hellos start arriving until every hostile policy was
    // tried (each is refused as too expensive to compile, not as waiting, and the log names it): a
    // stop is in flight whenever the compiles could hold the event loop.
    const answered: { status: number; state: string; ms: number }[] = [];
    const deadline = Date.now() + 60_000;
    while (compiled() < HOSTILE_ROBOTS) {
      if (Date.now() > deadline) throw new Error(`only ${compiled()} of ${HOSTILE_ROBOTS} policies tried within 60 s`);
      answered.push(await stop(victim.robotId));
      // Pacing only (time-based on purpose): about 20 stops a second stays inside the key's rate limit.
      await sleep(50);
    }
    await until(() => hostileUp === HOSTILE_ROBOTS, 30_000, 'hostile robots connected');
    for (const s of answered) {
      expect(s.status).toBe(200);
      expect(s.state).toBe('agent_received');
    }
    // A safety bound robust on a loaded 2-core machine: without the shared budget the eight compiles
    // hold the loop for at least 8 x 250 ms back to back; with it the loop is held for at most one
    // compile (250 ms) at a time. The bound is on the gateway's own event-loop delay, not on a stop's
    // round trip: the round trip also waits for the robot's and this test's processes, which CPU hogs
    // beside the suite (.ci/load-check.sh) starve for seconds whatever the gateway does.
    const bound = (HOSTILE_ROBOTS * POLICY_COMPILE_BUDGET_MS * 3) / 4;
    const lag = await loopLagMaxMs();
    const worst = Math.max(...answered.map((s) => s.ms));
    console.log(`[policy-compile-budget] ${answered.length} stops while ${HOSTILE_ROBOTS} policies compiled: event loop held up to ${Math.round(lag)} ms (bound ${bound} ms), slowest stop ${Math.round(worst)} ms`);
    expect(lag, `the event loop held for ${Math.round(lag)} ms`).toBeLessThan(bound);
  }, 180_000);
});
