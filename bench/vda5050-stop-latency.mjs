// Benchmark: stop latency to a VDA 5050 robot against a robot on the gRPC link, in the same run.
//   One gateway (`fleetgw serve`, real CLI, `--vda5050 on`, embedded broker) in its own process; in
//   this one: the HTTP client, a vda-5050-lib AgvController with its VirtualAgvAdapter (the VDA 5050
//   robot, logged in with its robot token) and a RobotAgent (the gRPC robot).
//   For each robot, --stops sequential `stop`s through POST /v1/agent/control-robot with
//   wait_for_ack_ms, alternating between the two robots, each measured two ways:
//     - robot: REST call sent -> the robot has the stop (VDA 5050: the robot publishes the first
//       `state` whose actionStates hold the stop's actionId; gRPC: the agent's onCommand);
//     - delivered (VDA 5050): REST call sent -> the instantActions message reaches the robot's
//       controller (its handling: the virtual AGV advances actions once per tick, here 100 a second);
//     - answer: REST call sent -> the answer with the delivery state (agent_received: for VDA 5050
//       the gateway read the stop in the robot's state, for gRPC the agent's ack).
//   Between stops the VDA 5050 robot is resumed (stopPause), so every stop pauses a running robot.
// Results: bench/README.md (VDA 5050 stop latency); notes: bench/notes/vda5050.md.
//
//   npm run build && node bench/vda5050-stop-latency.mjs [--stops 300] [--gateway-cpus 0] [--json FILE]
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { AgvController, VirtualAgvAdapter } from 'vda-5050-lib';
import { adminJson, cpuSeconds, FLEETGW, machineInfo, parseArgs, spawnNode, stopChild } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { stops: 300, 'gateway-cpus': '', json: '' });
const log = (s) => process.stderr.write(`${s}\n`);
const now = () => performance.timeOrigin + performance.now();

const freePort = () => new Promise((resolve, reject) => {
  const s = createServer();
  s.once('error', reject);
  s.listen(0, '127.0.0.1', () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-vda-'));
const init = adminJson(['init', '--data-dir', dataDir, '--org', 'Bench', '--fleet', 'Yard']);
const vdaRobot = adminJson(['add-robot', '--data-dir', dataDir, '--fleet', init.fleetId, '--name', 'vda', '--vda5050', 'Bench/AGV-1']);
const grpcRobot = adminJson(['add-robot', '--data-dir', dataDir, '--fleet', init.fleetId, '--name', 'grpc']);
const mqttPort = await freePort();

const gw = spawnNode([FLEETGW, 'serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--grpc-port', '0', '--insecure-http', '--vda5050', 'on', '--vda5050-mqtt-port', String(mqttPort)], { cpus: opts['gateway-cpus'] || undefined });
const ready = await new Promise((resolve, reject) => {
  const rl = createInterface({ input: gw.stdout });
  rl.on('line', (line) => {
    try {
      const m = JSON.parse(line);
      if (m.event === 'ready') resolve(m);
    } catch {
      // not JSON
    }
  });
  gw.once('exit', (code) => reject(new Error(`gateway exited with ${code}`)));
});
const cleanup = async () => {
  await stopChild(gw).catch(() => undefined);
};
process.once('SIGINT', () => void cleanup().then(() => process.exit(130)));

try {
  // The gRPC robot: its onCommand marks when a stop reached it.
  const { RobotAgent } = await import('../dist/agent/index.js');
  const grpcSeen = new Map();
  const agent = new RobotAgent({
    address: ready.grpc.replace(/^https?:\/\//, ''), robotId: grpcRobot.robotId, robotToken: grpcRobot.robotToken, dedicatedConnection: true,
    onCommand: (cmd) => {
      if (!grpcSeen.has(cmd.commandId)) grpcSeen.set(cmd.commandId, now());
      return { accept: true };
    },
  });
  agent.start();

  // The VDA 5050 robot; the first state it publishes showing each action id is marked.
  const brokerUrl = `mqtt://127.0.0.1:${mqttPort}`;
  const agv = new AgvController(
    { manufacturer: 'Bench', serialNumber: 'AGV-1' },
    { interfaceName: 'uagv', vdaVersion: '2.0.0', transport: { brokerUrl, username: vdaRobot.robotId, password: vdaRobot.robotToken } },
    { agvAdapterType: VirtualAgvAdapter, publishVisualizationInterval: 1000 },
    // 100 ticks a second: the virtual AGV advances an action's state once per tick (5 by default).
    { initialPosition: { mapId: 'site', x: 0, y: 0, theta: 0, lastNodeId: 'home' }, tickRate: 100 },
  );
  // When each instantActions message reached the robot's controller (a private method of
  // vda-5050-lib's AgvController, wrapped for this measurement only).
  const vdaDelivered = new Map();
  const processInstantActions = agv._processInstantActions.bind(agv);
  agv._processInstantActions = (msg) => {
    const t = now();
    for (const a of msg.instantActions ?? msg.actions ?? []) if (!vdaDelivered.has(a.actionId)) vdaDelivered.set(a.actionId, t);
    return processInstantActions(msg);
  };
  const vdaSeen = new Map();
  // Tapped at the controller's publish (the broker lets no other client read a robot's state).
  const publish = agv.publish.bind(agv);
  agv.publish = async (topic, object, options) => {
    if (topic === 'state') {
      const t = now();
      for (const a of object.actionStates ?? []) if (!vdaSeen.has(a.actionId)) vdaSeen.set(a.actionId, t);
    }
    return publish(topic, object, options);
  };
  await agv.start();

  const http = ready.http;
  const post = async (path, body) => {
    const res = await fetch(`${http}${path}`, { method: 'POST', headers: { authorization: `Bearer ${init.apiKey}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: res.status, body: await res.json() };
  };
  const online = async (robotId) => {
    const res = await fetch(`${http}/v1/robots/${robotId}`, { headers: { authorization: `Bearer ${init.apiKey}` } });
    return res.ok && (await res.json()).online === true;
  };
  const deadline = Date.now() + 60_000;
  while (!((await online(vdaRobot.robotId)) && (await online(grpcRobot.robotId)))) {
    if (Date.now() > deadline) throw new Error('robots not online within 60 s');
    await new Promise((r) => setTimeout(r, 50));
  }
  log('both robots online');

  const control = (robotId, action, extra = {}) => post('/v1/agent/control-robot', { org_id: init.orgId, fleet_id: init.fleetId, robot_id: robotId, action, wait_for_ack_ms: 10_000, ...extra });
  const runs = { vda5050: { delivered: [], robot: [], answer: [] }, grpc: { delivered: [], robot: [], answer: [] } };
  const cpu0 = cpuSeconds(gw.pid);
  for (let i = 0; i < opts.stops * 2; i++) {
    const which = i % 2 === 0 ? 'vda5050' : 'grpc';
    const robotId = which === 'vda5050' ? vdaRobot.robotId : grpcRobot.robotId;
    const t0 = now();
    const r = await control(robotId, 'stop', { reason: 'bench' });
    const t1 = now();
    const d = r.body.outcomes?.[0]?.delivery;
    if (r.status !== 200 || d?.state !== 'agent_received') throw new Error(`stop ${i} (${which}): ${r.status} ${JSON.stringify(r.body)}`);
    const seen = (which === 'vda5050' ? vdaSeen : grpcSeen).get(d.commandId);
    runs[which].answer.push(t1 - t0);
    if (seen !== undefined) runs[which].robot.push(seen - t0);
    // gRPC: the agent's onCommand is both the delivery and the robot having it.
    const delivered = which === 'vda5050' ? vdaDelivered.get(d.commandId) : seen;
    if (delivered !== undefined) runs[which].delivered.push(delivered - t0);
    if (which === 'vda5050') {
      const s = await control(robotId, 'start');
      if (s.body.outcomes?.[0]?.delivery?.state !== 'agent_received') throw new Error(`start ${i}: ${JSON.stringify(s.body)}`);
    }
  }
  const cpu1 = cpuSeconds(gw.pid);
  const pct = (xs, p) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length === 0 ? null : Number(s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))].toFixed(2));
  };
  const summary = (xs) => ({ n: xs.length, p50: pct(xs, 50), p99: pct(xs, 99), max: pct(xs, 100) });
  const result = {
    event: 'result',
    machine: machineInfo(),
    stops: opts.stops,
    vda5050: { deliveredMs: summary(runs.vda5050.delivered), robotMs: summary(runs.vda5050.robot), answerMs: summary(runs.vda5050.answer) },
    grpc: { deliveredMs: summary(runs.grpc.delivered), robotMs: summary(runs.grpc.robot), answerMs: summary(runs.grpc.answer) },
    // Every VDA 5050 stop is followed by a start (also answered from the robot's state).
    gatewayCpuSeconds: Number((cpu1 - cpu0).toFixed(2)),
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  if (opts.json) writeFileSync(opts.json, JSON.stringify(result, null, 2));
  await agv.stop();
  await agent.stop();
} finally {
  await cleanup();
}
