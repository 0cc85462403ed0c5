// Issue 8 review (item 11, robot side) through the real `fleetgw serve` and a robot on the real gRPC
// link: the `payload_json` a robot reports for a configuration read is free-form input like a client's
// `values`, and it was kept however deep it nested (up to 64 KiB of brackets: ~32,000 levels). Beyond
// ~4,000 levels structuredClone and JSON.stringify overflow the stack: the waiting request never got
// its result (503 after the wait), the record's write failed, and every read of the command answered
// 500. A payload nested deeper than the free-form bound (32 levels) is now not kept, like one that is
// too large or not an object (src/commands/result.ts).
import { rmSync } from 'node:fs';
import { create } from '@bufbuild/protobuf';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RobotAgent } from '../../src/agent/index.js';
import { CommandPolicySchema } from '../../src/gen/fleetgw/v1/robot_link_pb.js';
import { adminJson } from '../support/cli.js';
import { api, makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

const d = makeDataDir('fleetgw-result-depth-');
let gw: RunningGateway;
let agent: RobotAgent;
let robotId: string;
let payloadJson = '';

beforeAll(async () => {
  const robot = adminJson<{ robotId: string; robotToken: string }>(['add-robot', '--data-dir', d.dataDir, '--fleet', d.fleetId, '--name', 'r']);
  robotId = robot.robotId;
  gw = await startGatewayProcess(d.dataDir);
  let online = false;
  agent = new RobotAgent({
    address: gw.ready.grpc, robotId, robotToken: robot.robotToken, dedicatedConnection: true,
    policy: create(CommandPolicySchema, { remoteConfig: true }),
    onCommand: (cmd) => {
      // Answer a configuration read with whatever payload the test set.
      setImmediate(() => agent.sendCommandResult({ commandId: cmd.commandId, success: true, payloadJson }));
      return { accept: true };
    },
    onConnected: () => { online = true; },
  });
  agent.start();
  await until(() => online, 10_000, 'robot connected');
}, 60_000);

afterAll(async () => {
  await agent?.stop();
  await gw?.stop();
  rmSync(d.dataDir, { recursive: true, force: true });
});

const readConfig = () => api(gw.ready.http, d.apiKey, `/v1/orgs/${d.orgId}/fleets/${d.fleetId}/robots/${robotId}/config?timeout_ms=3000`);
const nested = (levels: number): string => '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);

describe("a robot's result payload is bounded like a client's free-form values", () => {
  it('a payload within the bound is answered as the robot reported it', async () => {
    payloadJson = nested(32);
    const r = await readConfig();
    expect(r.status, JSON.stringify(r.body)).toBe(200);
    expect(JSON.stringify(r.body.values)).toBe(payloadJson);
  });

  it('a payload nested 6,000 levels deep is not kept: the read answers, and the command stays readable', async () => {
    payloadJson = nested(6000);
    const r = await readConfig();
    expect(r.status, JSON.stringify(r.body).slice(0, 300)).toBe(200);
    expect(r.body.values).toEqual({});
    const cmd = await api(gw.ready.http, d.apiKey, `/v1/robot-commands/${r.body.commandId as string}`);
    expect(cmd.status, JSON.stringify(cmd.body).slice(0, 300)).toBe(200);
    expect(cmd.body.result?.values ?? null).toBeNull();
  }, 20_000);
});
