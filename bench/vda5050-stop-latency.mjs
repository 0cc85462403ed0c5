// Benchmark: stop latency to a VDA 5050 robot against a robot on the gRPC link, in the same run.
//   One gateway (`fleetgw serve`, real CLI, `--vda5050 on`, embedded broker) in its own process; in
//   this one: the HTTP client, the VDA 5050 robot (logged in with its robot token) and a RobotAgent
//   (the gRPC robot). The VDA 5050 robot is, with --vda-robot:
//     - agv (default): vda-5050-lib's AgvController with its VirtualAgvAdapter, the third-party
//       check: it shows an action in its state only when its tick advances it (100 ticks a second);
//     - prompt: bench/lib/vda-prompt-robot.mjs, a plain MQTT client that publishes a state with the
//       action FINISHED as soon as the instantActions message arrives, as the gRPC agent acks on receipt.
//   For each robot, --stops sequential `stop`s through POST /v1/agent/control-robot with
//   wait_for_ack_ms, alternating between the two robots. Per stop, times from the REST call (a):
//     (b) delivered: the instantActions message reaches the robot (gRPC: the agent's onCommand);
//     (c) robot: the robot publishes the first `state` whose actionStates hold the stop's actionId
//         (gRPC: onCommand, the agent acks on receipt);
//     (d) answer: the REST answer with the delivery state (agent_received: for VDA 5050 the gateway
//         read the stop in the robot's state, for gRPC the agent's ack).
//   Reported per link: each of b, c, d from a, and the stages b - a (gateway and broker out to the
//   robot), c - b (the robot's own reaction) and d - c (the gateway's return share: the state's trip
//   through broker and master control, the delivery state's commit and the REST answer; gRPC: the
//   ack's trip and the same commit and answer).
//   Between stops the VDA 5050 robot is resumed (stopPause), so every stop pauses a running robot.
// Results: bench/README.md (VDA 5050 stop latency); notes: bench/notes/vda5050.md.
//
//   npm run build && node bench/vda5050-stop-latency.mjs [--stops 300] [--vda-robot agv|prompt]
//       [--gateway-cpus 0] [--gateway-node-args "--cpu-prof ..."] [--json FILE]
import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { AgvController, VirtualAgvAdapter } from 'vda-5050-lib';
import { startPromptRobot } from './lib/vda-prompt-robot.mjs';
import { adminJson, cpuSeconds, FLEETGW, machineInfo, parseArgs, spawnNode, stopChild } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { stops: 300, 'vda-robot': 'agv', 'gateway-cpus': '', 'gateway-node-args': '', json: '' });
if (!['agv', 'prompt'].includes(opts['vda-robot'])) throw new Error('--vda-robot must be agv or prompt');
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

const nodeArgs = opts['gateway-node-args'].split(' ').filter((a) => a !== '');
const gw = spawnNode([...nodeArgs, FLEETGW, 'serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--grpc-port', '0', '--insecure-http', '--vda5050', 'on', '--vda5050-mqtt-port', String(mqttPort)], {
  cpus: opts['gateway-cpus'] || undefined,
  // Stops back to back are faster than the default per-key rate limit on a quiet machine.
  env: { FLEETGW_RATE_LIMIT_RPS: '100000000', FLEETGW_RATE_LIMIT_BURST: '100000000' },
});
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

  // The VDA 5050 robot: when each stop's instantActions message reached it, and when it published the
  // first state showing the action id.
  const brokerUrl = `mqtt://127.0.0.1:${mqttPort}`;
  const vdaDelivered = new Map();
  const vdaSeen = new Map();
  const markFirst = (map, ids, t) => {
    for (const id of ids) if (!map.has(id)) map.set(id, t);
  };
  let stopVdaRobot;
  if (opts['vda-robot'] === 'prompt') {
    const robot = await startPromptRobot({
      brokerUrl, robotId: vdaRobot.robotId, robotToken: vdaRobot.robotToken, manufacturer: 'Bench', serialNumber: 'AGV-1', now,
      onDelivered: (ids, t) => markFirst(vdaDelivered, ids, t),
      onPublished: (ids, t) => markFirst(vdaSeen, ids, t),
    });
    stopVdaRobot = () => robot.stop();
  } else {
    const agv = new AgvController(
      { manufacturer: 'Bench', serialNumber: 'AGV-1' },
      { interfaceName: 'uagv', vdaVersion: '2.0.0', transport: { brokerUrl, username: vdaRobot.robotId, password: vdaRobot.robotToken } },
      { agvAdapterType: VirtualAgvAdapter, publishVisualizationInterval: 1000 },
      // 100 ticks a second: the virtual AGV advances an action's state once per tick (5 by default).
      { initialPosition: { mapId: 'site', x: 0, y: 0, theta: 0, lastNodeId: 'home' }, tickRate: 100 },
    );
    // A private method of vda-5050-lib's AgvController, wrapped for this measurement only.
    const processInstantActions = agv._processInstantActions.bind(agv);
    agv._processInstantActions = (msg) => {
      markFirst(vdaDelivered, (msg.instantActions ?? msg.actions ?? []).map((a) => a.actionId), now());
      return processInstantActions(msg);
    };
    // Tapped at the controller's publish (the broker lets no other client read a robot's state).
    const publish = agv.publish.bind(agv);
    agv.publish = async (topic, object, options) => {
      if (topic === 'state') markFirst(vdaSeen, (object.actionStates ?? []).map((a) => a.actionId), now());
      return publish(topic, object, options);
    };
    await agv.start();
    stopVdaRobot = () => agv.stop();
  }

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
  const series = () => ({ delivered: [], robot: [], answer: [], toRobot: [], reaction: [], back: [] });
  const runs = { vda5050: series(), grpc: series() };
  const cpu0 = cpuSeconds(gw.pid);
  const loadAtStart = machineInfo().loadavg;
  for (let i = 0; i < opts.stops * 2; i++) {
    const which = i % 2 === 0 ? 'vda5050' : 'grpc';
    const robotId = which === 'vda5050' ? vdaRobot.robotId : grpcRobot.robotId;
    const t0 = now();
    const r = await control(robotId, 'stop', { reason: 'bench' });
    const t1 = now();
    const d = r.body.outcomes?.[0]?.delivery;
    if (r.status !== 200 || d?.state !== 'agent_received') throw new Error(`stop ${i} (${which}): ${r.status} ${JSON.stringify(r.body)}`);
    const seen = (which === 'vda5050' ? vdaSeen : grpcSeen).get(d.commandId);
    // gRPC: the agent's onCommand is both the delivery and the robot having it.
    const delivered = which === 'vda5050' ? vdaDelivered.get(d.commandId) : seen;
    const run = runs[which];
    run.answer.push(t1 - t0);
    if (seen !== undefined) {
      run.robot.push(seen - t0);
      run.back.push(t1 - seen);
    }
    if (delivered !== undefined) run.delivered.push(delivered - t0);
    if (delivered !== undefined && seen !== undefined) {
      run.toRobot.push(delivered - t0);
      run.reaction.push(seen - delivered);
    }
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
  const report = (run) => ({
    deliveredMs: summary(run.delivered), robotMs: summary(run.robot), answerMs: summary(run.answer),
    stagesMs: { toRobot: summary(run.toRobot), reaction: summary(run.reaction), back: summary(run.back) },
  });
  const result = {
    event: 'result',
    machine: { ...machineInfo(), loadavgAtStart: loadAtStart },
    stops: opts.stops,
    vdaRobot: opts['vda-robot'],
    vda5050: report(runs.vda5050),
    grpc: report(runs.grpc),
    // Every VDA 5050 stop is followed by a start (also answered from the robot's state).
    gatewayCpuSeconds: Number((cpu1 - cpu0).toFixed(2)),
  };
  const line = (name, x) => `${name.padEnd(8)} delivered ${x.deliveredMs.p50}/${x.deliveredMs.p99}  robot ${x.robotMs.p50}/${x.robotMs.p99}  answer ${x.answerMs.p50}/${x.answerMs.p99}  | out ${x.stagesMs.toRobot.p50}/${x.stagesMs.toRobot.p99}  reaction ${x.stagesMs.reaction.p50}/${x.stagesMs.reaction.p99}  back ${x.stagesMs.back.p50}/${x.stagesMs.back.p99} (p50/p99 ms)`;
  log(`load ${loadAtStart} -> ${result.machine.loadavg}, VDA 5050 robot: ${opts['vda-robot']}`);
  log(line('vda5050', result.vda5050));
  log(line('grpc', result.grpc));
  process.stdout.write(`${JSON.stringify(result)}\n`);
  if (opts.json) writeFileSync(opts.json, JSON.stringify(result, null, 2));
  await stopVdaRobot();
  await agent.stop();
} finally {
  await cleanup();
}
