/**
 * The robot command surface through the real `fleetgw serve` process (dist: `npm run build` first)
 * with simulated robots on the real gRPC link: nested commands inside and outside the robot's
 * advertised policy, request/response configuration, stop-all, and the audit trail of it all.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSimFleet, type SimFleet } from '../../src/sim/index.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, untilPoliciesCompiled, type RunningGateway } from '../support/gateway.js';

let gw: RunningGateway;
let sim: SimFleet;
let d: ReturnType<typeof makeDataDir>;
let creds: { robotId: string; robotToken: string }[];

beforeAll(async () => {
  d = makeDataDir('fleetgw-e2e-commands-');
  creds = Array.from({ length: 2 }, (_, i) => adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `r${i}`]));
  gw = await startGatewayProcess(d.dataDir);
  sim = runSimFleet({ grpc: gw.ready.grpc, robots: creds, hz: 5 });
  const end = Date.now() + 10_000;
  while (sim.stats().connected < 2) {
    if (Date.now() > end) throw new Error('sim robots did not connect');
    await new Promise((r) => setTimeout(r, 20));
  }
  await untilPoliciesCompiled(gw.ready.http, d.apiKey, d.orgId, d.fleetId, creds.map((c) => c.robotId));
}, 70_000);

afterAll(async () => {
  await sim?.stop();
  await gw?.stop();
});

const post = (path: string, body: unknown) => api(gw.ready.http, d.apiKey, path, { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
const robotPath = (i: number, what: string) => `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${creds[i]!.robotId}/${what}`;

describe('robot commands through fleetgw serve', () => {
  it('applies commands inside the policy and refuses the rest with 422 without sending them', async () => {
    const mode = await post(robotPath(0, 'mode'), { mode: 'docking', wait_for_ack: true });
    expect(mode.status).toBe(200);
    expect(mode.body.delivery.state).toBe('agent_received');
    expect(sim.robots[0]!.model.commandedMode).toBe('docking');
    const applied = sim.robots[0]!.agent.stats().commandsApplied;
    const bad = await post(robotPath(0, 'go-to'), { latitude: 10, longitude: 10 });
    expect(bad.status).toBe(422);
    expect(bad.body.code).toBe('policy_rejected');
    expect(sim.robots[0]!.agent.stats().commandsApplied).toBe(applied);
  });

  it('reads and writes configuration through the robot', async () => {
    const write = await post(robotPath(1, 'config'), { values: { telemetry_hz: 20 } });
    expect(write.status).toBe(200);
    expect(write.body.values.telemetry_hz).toBe(20);
    const read = await api(gw.ready.http, d.apiKey, robotPath(1, 'config'));
    expect(read.body.values.telemetry_hz).toBe(20);
  });

  it('stops the whole fleet and the audit log shows every command with its states', async () => {
    const res = await post(`/v1/orgs/${d.orgId}/fleets/${d.fleetId}/stop-all`, { wait_for_ack: true });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ success: true, count: 2 });
    expect(sim.robots.every((r) => r.model.phase === 'stopped')).toBe(true);
    let items: { action: string; requestedBy: { apiKeyId: string }; history: unknown[] }[] = [];
    const end = Date.now() + 2000;
    while (items.length < 5 && Date.now() < end) {
      items = (await api(gw.ready.http, d.apiKey, `/v1/audit-log?fleet_id=${d.fleetId}`)).body.items;
    }
    expect(items.map((i) => i.action).sort()).toEqual(['config', 'config', 'mode', 'stop', 'stop']);
    expect(items.every((i) => i.requestedBy.apiKeyId === d.apiKeyId && i.history.length >= 2)).toBe(true);
  });
});
