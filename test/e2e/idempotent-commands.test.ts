/**
 * Idempotency-Key on the command routes, through the real gateway process and simulated robots: a
 * retry (sequential or concurrent) replays the first command id and the robot receives one command; a
 * different request under the same key is a conflict; the MCP tool (official SDK client) and the REST
 * stop-all replay the same way.
 */
import { rmSync } from 'node:fs';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { runSimFleet } from '../../src/sim/index.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess } from '../support/gateway.js';
import { until } from '../support/until.js';

type Json = any;

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe('Idempotency-Key on robot commands', () => {
  it('replays control-robot, stop-all and the MCP tool: one command per key reaches the robot', async () => {
    const d = makeDataDir();
    dirs.push(d.dataDir);
    const creds = [adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r0'])];
    const robotId = creds[0]!.robotId;
    const gw = await startGatewayProcess(d.dataDir);
    const sim = runSimFleet({ grpc: gw.ready.grpc, robots: creds, hz: 5 });
    const base = gw.ready.http;
    const applied = (): number => sim.robots[0]!.agent.stats().commandsApplied;
    const control = (body: Json, key?: string): Promise<{ status: number; body: Json; headers: Headers }> =>
      api(base, d.apiKey, '/v1/agent/control-robot', {
        method: 'POST',
        body: JSON.stringify({ org_id: d.orgId, fleet_id: d.fleetId, robot_id: robotId, wait_for_ack: true, ...body }),
        ...(key !== undefined ? { headers: { 'idempotency-key': key } } : {}),
      });
    const commandIds = (b: Json): string[] => (b.outcomes as Json[]).map((o) => o.delivery.commandId as string);
    try {
      await until(() => sim.stats().connected === 1, 10_000, 'robot online');

      // Sequential retry of a stop: the same command id, marked as a replay.
      const first = await control({ action: 'stop' }, 'stop-1');
      expect(first.status).toBe(200);
      const again = await control({ action: 'stop' }, 'stop-1');
      expect(again.status).toBe(200);
      expect(commandIds(again.body)).toEqual(commandIds(first.body));
      expect(again.headers.get('idempotent-replayed')).toBe('true');

      // Concurrent duplicates: both answers name the one command.
      const [a, b] = await Promise.all([control({ action: 'start' }, 'start-1'), control({ action: 'start' }, 'start-1')]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(commandIds(a.body)).toEqual(commandIds(b.body));
      const [c, e] = await Promise.all([control({ action: 'stop', reason: 'twin' }, 'stop-2'), control({ action: 'stop', reason: 'twin' }, 'stop-2')]);
      expect([c.status, e.status]).toEqual([200, 200]);
      expect(commandIds(c.body)).toEqual(commandIds(e.body));

      // The same key with another request: the documented conflict, nothing sent.
      const other = await control({ action: 'start' }, 'stop-1');
      expect(other.status).toBe(409);
      expect(other.body.code).toBe('conflict');
      expect(other.body.error).toContain('different request body');

      // REST stop-all (an urgent route) under a key.
      const stopAll = (): Promise<{ status: number; body: Json; headers: Headers }> =>
        api(base, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/stop-all`, { method: 'POST', body: JSON.stringify({ wait_for_ack: true }), headers: { 'idempotency-key': 'all-1' } });
      const s1 = await stopAll();
      const s2 = await stopAll();
      expect(s1.status).toBe(200);
      expect(commandIds(s2.body)).toEqual(commandIds(s1.body));
      expect(s2.headers.get('idempotent-replayed')).toBe('true');

      // The MCP tool with idempotency_key.
      const client = new Client({ name: 'idem-e2e', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/v1/mcp`), { requestInit: { headers: { authorization: `Bearer ${d.apiKey}` } } }));
      try {
        const args = { org_id: d.orgId, fleet_id: d.fleetId, robot_id: robotId, action: 'stop', wait_for_ack: true, idempotency_key: 'mcp-1' };
        const m1 = (await client.callTool({ name: 'control-robot', arguments: args })) as CallToolResult;
        const m2 = (await client.callTool({ name: 'control-robot', arguments: args })) as CallToolResult;
        expect(m1.isError ?? false).toBe(false);
        expect(commandIds(m2.structuredContent)).toEqual(commandIds(m1.structuredContent));
      } finally {
        await client.close();
      }

      // A last command without a key, acknowledged: commands on the link arrive in order, so any
      // duplicate sent above has reached the robot by now. One each: stop-1, start-1, stop-2, all-1, mcp-1, this.
      const last = await control({ action: 'stop', reason: 'last' });
      expect(last.status).toBe(200);
      expect(applied()).toBe(6);
      const audit = await api(base, d.apiKey, `/v1/audit-log?fleet_id=${d.fleetId}&robot_id=${robotId}`);
      expect(audit.status).toBe(200);
      expect(audit.body.items).toHaveLength(6);
    } finally {
      await sim.stop();
      await gw.stop();
    }
  }, 60_000);
});
