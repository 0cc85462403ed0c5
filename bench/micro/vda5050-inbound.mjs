// Micro benchmark: CPU per message of the VDA 5050 inbound gate (dist/vda5050/inbound), for valid
// `state` messages of three sizes (idle; an order of 10 nodes with actions; 100 nodes with
// trajectories), against a bare JSON.parse of the same bytes, and for the refusals a flooding robot
// costs (oversized: never decoded; not JSON; failing the schema; out of order). CPU from
// process.cpuUsage over --messages messages per case, best of --rounds.
// Run: npm run build && node bench/micro/vda5050-inbound.mjs [--messages 20000] [--rounds 3]
import { parseArgs } from 'node:util';
import { createInboundGate } from '../../dist/vda5050/inbound/index.js';

const { values } = parseArgs({ options: { messages: { type: 'string', default: '20000' }, rounds: { type: 'string', default: '3' } } });
const N = Number(values.messages);
const ROUNDS = Number(values.rounds);

const robot = { robotId: 'r1', fleetId: 'f', binding: { manufacturer: 'Acme', serialNumber: 'sn-1' } };
const header = (headerId) => ({ headerId, timestamp: '2026-12-07T10:00:00.123Z', version: '2.0.0', manufacturer: 'Acme', serialNumber: 'sn-1' });

function state(nodes, withTrajectory) {
  const nodeStates = [];
  const edgeStates = [];
  const actionStates = [];
  for (let i = 0; i < nodes; i++) {
    nodeStates.push({ nodeId: `node-${i}`, sequenceId: 2 * i, released: i < nodes / 2, nodePosition: { x: i, y: 2 * i, theta: 0.5, mapId: 'hall-1' } });
    if (i > 0) {
      edgeStates.push({ edgeId: `edge-${i}`, sequenceId: 2 * i - 1, released: i < nodes / 2, ...(withTrajectory ? { trajectory: { degree: 2, knotVector: [0, 0, 0, 0.5, 1, 1, 1], controlPoints: [{ x: i, y: 0 }, { x: i + 0.3, y: 0.2, weight: 1 }, { x: i + 0.6, y: 0.2 }, { x: i + 1, y: 0 }] } } : {}) });
    }
    actionStates.push({ actionId: `a-${i}`, actionType: 'pick', actionStatus: 'WAITING' });
  }
  return {
    orderId: nodes === 0 ? '' : 'order-42', orderUpdateId: 3, lastNodeId: 'node-0', lastNodeSequenceId: 0, driving: nodes > 0, paused: false,
    operatingMode: 'AUTOMATIC', nodeStates, edgeStates, actionStates, errors: [], information: [],
    agvPosition: { x: 1.5, y: 2.5, theta: 0.1, mapId: 'hall-1', positionInitialized: true, localizationScore: 0.98 },
    velocity: { vx: 0.4, vy: 0, omega: 0 }, loads: [],
    batteryState: { batteryCharge: 81.5, batteryVoltage: 24.2, charging: false, reach: 3600 },
    safetyState: { eStop: 'NONE', fieldViolation: false },
  };
}

/** N payloads of one kind (headerIds rising, each message its own bytes as off the wire). */
function payloads(body, from = 1) {
  const out = new Array(N);
  for (let i = 0; i < N; i++) out[i] = Buffer.from(JSON.stringify({ ...header(from + i), ...body }));
  return out;
}

function cpuUs(fn) {
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.cpuUsage();
    fn(r);
    const t = process.cpuUsage(t0);
    best = Math.min(best, (t.user + t.system) / N);
  }
  return Number(best.toFixed(2));
}

const results = [];
const quiet = { warn: () => {} };
for (const [name, body] of [['idle', state(0, false)], ['10 nodes', state(10, false)], ['100 nodes, trajectories', state(100, true)]]) {
  const msgs = payloads(body);
  let sink = 0;
  // A fresh gate per round: headerIds rise again.
  const gateUs = cpuUs(() => {
    const gate = createInboundGate({ version: '2.0.0', log: quiet });
    for (const m of msgs) if (gate.accept(robot, 'state', m) !== undefined) sink++;
  });
  if (sink !== N * ROUNDS) throw new Error(`${name}: ${N * ROUNDS - sink} valid messages refused`);
  const parseUs = cpuUs(() => { for (const m of msgs) sink += JSON.parse(m.toString('utf8')).headerId > 0 ? 1 : 0; });
  results.push({ case: `valid state, ${name}`, bytes: msgs[0].length, gateUs, jsonParseUs: parseUs, overUs: Number((gateUs - parseUs).toFixed(2)) });
}

const refusals = [
  ['oversized (1 MiB, never decoded)', () => new Array(N).fill(Buffer.alloc(1024 * 1024, 0x20))],
  ['not JSON', () => new Array(N).fill(Buffer.from('{"headerId": 1, "timestamp": '))],
  ['schema (enum)', () => payloads({ ...state(10, false), operatingMode: 'AUTOPILOT' })],
  ['out of order', () => payloads(state(10, false), -N)],
];
for (const [name, make] of refusals) {
  const msgs = make();
  const gateUs = cpuUs(() => {
    const gate = createInboundGate({ version: '2.0.0', log: quiet });
    // out of order: one message far ahead, then every other one behind it.
    gate.accept(robot, 'state', Buffer.from(JSON.stringify({ ...header(1e9), ...state(0, false) })));
    for (const m of msgs) if (gate.accept(robot, 'state', m) !== undefined) throw new Error(`${name}: accepted`);
  });
  results.push({ case: `refused: ${name}`, bytes: msgs[0].length, gateUs });
}
console.log(JSON.stringify({ bench: 'micro/vda5050-inbound', node: process.version, messages: N, rounds: ROUNDS, results }, null, 2));
