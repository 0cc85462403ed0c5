/**
 * control-robot `stop` end to end through the real gateway process and simulated robots on gRPC.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/index.js';
import type { Command } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { runSimFleet } from '../../src/sim/index.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess } from '../support/gateway.js';
import { until } from '../support/until.js';


const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function setup(robots: number): { d: ReturnType<typeof makeDataDir>; creds: { robotId: string; robotToken: string }[] } {
  const d = makeDataDir();
  dirs.push(d.dataDir);
  const creds = Array.from({ length: robots }, (_, i) => adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', `r${i}`]));
  return { d, creds };
}

// Each test starts gateway processes and robots: a loaded 2-core machine takes tens of seconds.
describe('stop', { timeout: 120_000 }, () => {
  it('reaches an online simulated robot, is acknowledged, and the robot actually stops', async () => {
    const { d, creds } = setup(2);
    const gw = await startGatewayProcess(d.dataDir);
    const sim = runSimFleet({ grpc: gw.ready.grpc, robots: creds, hz: 20 });
    try {
      await until(() => sim.stats().connected === 2, 30_000, 'robots online');
      const [r0] = sim.robots;
      await until(() => (r0?.model.speedMps ?? 0) > 0.2, 30_000, 'robot moving');
      const res = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
        method: 'POST',
        body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_id: creds[0]!.robotId, wait_for_ack: true }),
      });
      expect(res.status).toBe(200);
      expect(res.body.success).toBe(true);
      expect(res.body.outcomes).toHaveLength(1);
      expect(res.body.outcomes[0].delivery).toMatchObject({ state: 'agent_received', commandId: expect.stringMatching(/^[0-9a-f-]{36}$/) });
      // The robot decelerates to zero and holds; its reported telemetry says so.
      await until(async () => {
        const r = (await api(gw.ready.http, d.apiKey, `/v1/robots/${creds[0]!.robotId}`)).body;
        return r.speedMps === 0 && r.mode === 'paused';
      }, 10_000, 'robot reports stopped');
      const x = r0!.model.sample(Date.now());
      // The simulation steps once per sample it sends: five more steps and the position is unchanged.
      const sent = r0!.agent.stats().samplesSent;
      await until(() => r0!.agent.stats().samplesSent >= sent + 5, 30_000, 'five more samples from the stopped robot');
      const y = r0!.model.sample(Date.now());
      expect([y.latitude, y.longitude]).toEqual([x.latitude, x.longitude]);
      // The other robot was not told anything.
      expect(sim.robots[1]!.agent.stats().commandsApplied).toBe(0);
    } finally {
      await sim.stop();
      await gw.stop();
    }
  });

  it('without a wait it answers dispatched; with both ack spellings it is 400', async () => {
    const { d, creds } = setup(1);
    const gw = await startGatewayProcess(d.dataDir);
    const sim = runSimFleet({ grpc: gw.ready.grpc, robots: creds, hz: 5 });
    try {
      await until(() => sim.stats().connected === 1, 30_000, 'robot online');
      const base = { org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_id: creds[0]!.robotId };
      const res = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', { method: 'POST', body: JSON.stringify(base) });
      expect(res.status).toBe(200);
      expect(res.body.outcomes[0].delivery.state).toBe('dispatched');
      for (const extra of [{ wait_for_ack: true, wait_for_ack_ms: 100 }, { waitForAck: true, wait_for_ack_ms: 100 }, { wait_for_ack: true, waitForAckMs: 5 }]) {
        const bad = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', { method: 'POST', body: JSON.stringify({ ...base, ...extra }) });
        expect(bad.status).toBe(400);
        expect(bad.body.code).toBe('bad_request');
      }
      const alias = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', { method: 'POST', body: JSON.stringify({ ...base, waitForAckMs: 5000 }) });
      expect(alias.body.outcomes[0].delivery.state).toBe('agent_received');
    } finally {
      await sim.stop();
      await gw.stop();
    }
  });

  it('an agent rejection is agent_rejected; a silent robot is timed_out', async () => {
    const { d, creds } = setup(2);
    const gw = await startGatewayProcess(d.dataDir);
    const rejecting = new RobotAgent({ address: gw.ready.grpc, ...creds[0]!, onCommand: () => ({ accept: false, reason: 'estop engaged' }) });
    const silent = new RobotAgent({ address: gw.ready.grpc, ...creds[1]!, onCommand: () => new Promise(() => {}) });
    rejecting.start();
    silent.start();
    try {
      await until(() => rejecting.connected && silent.connected, 30_000, 'robots online');
      const post = (robotId: string, ms: number): Promise<{ status: number; body: any }> => api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
        method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_id: robotId, wait_for_ack_ms: ms }),
      });
      const rej = await post(creds[0]!.robotId, 5000);
      expect(rej.status).toBe(502);
      expect(rej.body.outcomes[0].delivery.state).toBe('agent_rejected');
      // A lower bound only: a loaded machine makes the answer later, never earlier.
      const t0 = Date.now();
      const slow = await post(creds[1]!.robotId, 300);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
      expect(slow.body.outcomes[0].delivery).toMatchObject({ state: 'timed_out', retryBudgetExhausted: expect.any(Boolean) });
    } finally {
      await rejecting.stop();
      await silent.stop();
      await gw.stop();
    }
  });

  it('an offline robot gets it deferred; it survives a gateway restart and arrives once on reconnect', async () => {
    const { d, creds } = setup(1);
    let gw = await startGatewayProcess(d.dataDir);
    const res = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
      method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_ids: [creds[0]!.robotId], wait_for_ack_ms: 200 }),
    });
    expect(res.status).toBe(200);
    expect(res.body.outcomes[0].delivery.state).toBe('deferred');
    const commandId = res.body.outcomes[0].delivery.commandId as string;
    expect(await gw.stop('SIGKILL')).toBeNull(); // no drain: the outbox must already be durable
    gw = await startGatewayProcess(d.dataDir);
    const got: Command[] = [];
    const agent = new RobotAgent({ address: gw.ready.grpc, ...creds[0]!, onCommand: (c) => { got.push(c); return { accept: true }; } });
    agent.start();
    try {
      await until(() => got.length === 1, 30_000, 'deferred stop delivered');
      expect(got[0]!.commandId).toBe(commandId);
      expect(got[0]!.action.case).toBe('stop');
      // A fresh connection (no de-duplication memory on the robot side) gets nothing: the gateway
      // does not resend an acknowledged command.
      await agent.stop();
      const again = new RobotAgent({ address: gw.ready.grpc, ...creds[0]!, onCommand: (c) => { got.push(c); return { accept: true }; } });
      again.start();
      try {
        await until(() => again.connected, 30_000, 'reconnect');
        // A resend would go out in the reconnect flush, before any new command to the robot: once a
        // new stop is acknowledged, a resent old one would have arrived before it.
        const next = await api(gw.ready.http, d.apiKey, '/v1/agent/control-robot', {
          method: 'POST', body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, action: 'stop', robot_id: creds[0]!.robotId, wait_for_ack: true }),
        });
        expect(next.body.outcomes[0].delivery.state).toBe('agent_received');
        expect(got.map((c) => c.commandId)).toEqual([commandId, next.body.outcomes[0].delivery.commandId]);
      } finally {
        await again.stop();
      }
    } finally {
      await agent.stop();
      await gw.stop();
    }
  });
});
