// Lightweight VDA 5050 robots for bench/vda5050-fleet.mjs: one MQTT connection per robot (npm `mqtt`,
// MQTT 3.1.1, user name = robot id, password = robot token), publishing what a VDA 5050 2.0 AGV
// publishes: connection ONLINE (retained, QoS 1) at connect with a CONNECTIONBROKEN last will, a state
// message at --state-hz and a visualization message at --vis-hz (QoS 0, as the standard recommends),
// the position moving on a circle. Not vda-5050-lib's AgvController: a thousand of those (each with its
// own timers and schema validation of every outbound message) do not fit on this 2-core machine next
// to the gateway (bench/notes/vda5050.md). One shared 10 ms timer; robot i publishes in the slot i mod
// the period, so the load is spread over each second instead of arriving as one burst.
// JSON lines on stdout: connected | progress | generation-stopped | done | error.
//
//   node bench/lib/vda-publisher-child.mjs --mqtt URL --robots-file F [--state-hz 1] [--vis-hz 10]
//       [--duration 60] [--interface uagv] [--report-ms 5000] [--connect-concurrency 50]
import { readFileSync } from 'node:fs';
import mqtt from 'mqtt';
import { parseArgs } from './procs.mjs';

const opts = parseArgs(process.argv.slice(2), {
  mqtt: '', 'robots-file': '', 'state-hz': 1, 'vis-hz': 10, duration: 60, interface: 'uagv', 'report-ms': 5000, 'connect-concurrency': 50,
});
const robots = JSON.parse(readFileSync(opts['robots-file'], 'utf8'));
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpuS = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };

let stopRequested = false;
process.once('SIGTERM', () => { stopRequested = true; });
process.once('SIGINT', () => { stopRequested = true; });

const header = (r) => ({ headerId: 0, timestamp: '', version: '2.0.0', manufacturer: r.manufacturer, serialNumber: r.serialNumber });
const counts = { state: 0, visualization: 0, connects: 0, disconnects: 0 };
const clients = new Array(robots.length);

async function connectOne(i) {
  const r = robots[i];
  const base = `${opts.interface}/v2/${r.manufacturer}/${r.serialNumber}`;
  const will = { topic: `${base}/connection`, payload: JSON.stringify({ ...header(r), timestamp: new Date().toISOString(), connectionState: 'CONNECTIONBROKEN' }), qos: 1, retain: true };
  const c = mqtt.connect(opts.mqtt, { username: r.robotId, password: r.robotToken, protocolVersion: 4, clean: true, reconnectPeriod: 1000, connectTimeout: 30_000, will });
  c.on('connect', () => counts.connects++);
  c.on('close', () => counts.disconnects++);
  c.on('error', () => {});
  await new Promise((resolve, reject) => {
    c.once('connect', resolve);
    c.once('error', reject);
  });
  await c.publishAsync(`${base}/connection`, JSON.stringify({ ...header(r), timestamp: new Date().toISOString(), connectionState: 'ONLINE' }), { qos: 1, retain: true });
  clients[i] = { c, r, base, stateHeader: 0, visHeader: 0, angle: (i * 0.37) % (2 * Math.PI), cx: (i % 40) * 25, cy: Math.floor(i / 40) * 25 };
}

const startedAtMs = Date.now();
let next = 0;
try {
  await Promise.all(Array.from({ length: Math.min(opts['connect-concurrency'], robots.length) }, async () => {
    while (next < robots.length) await connectOne(next++);
  }));
} catch (e) {
  emit({ event: 'error', message: `connect: ${e.message}` });
  process.exit(1);
}
const connectedAtMs = Date.now();
emit({ event: 'connected', tMs: connectedAtMs, robots: robots.length, connectMs: connectedAtMs - startedAtMs });

function position(k) {
  // VDA 5050 bounds theta to [-pi, pi]: a heading outside is refused by the gateway's schema check.
  const theta = Math.atan2(Math.sin(k.angle + Math.PI / 2), Math.cos(k.angle + Math.PI / 2));
  return { x: k.cx + 5 * Math.cos(k.angle), y: k.cy + 5 * Math.sin(k.angle), theta, mapId: 'local', positionInitialized: true };
}

function publishVisualization(k, now) {
  k.visHeader++;
  const msg = { ...header(k.r), headerId: k.visHeader, timestamp: now, agvPosition: position(k), velocity: { vx: 1, vy: 0, omega: 0.2 } };
  k.c.publish(`${k.base}/visualization`, JSON.stringify(msg), { qos: 0 });
  counts.visualization++;
}

function publishState(k, now) {
  k.stateHeader++;
  const msg = {
    ...header(k.r), headerId: k.stateHeader, timestamp: now,
    orderId: '', orderUpdateId: 0, lastNodeId: 'start', lastNodeSequenceId: 0, nodeStates: [], edgeStates: [], actionStates: [],
    driving: true, paused: false, operatingMode: 'AUTOMATIC', newBaseRequest: false, distanceSinceLastNode: 0,
    agvPosition: position(k), velocity: { vx: 1, vy: 0, omega: 0.2 },
    batteryState: { batteryCharge: 80 - (k.stateHeader % 50) * 0.1, batteryVoltage: 48, charging: false },
    errors: [], information: [], safetyState: { eStop: 'NONE', fieldViolation: false }, loads: [],
  };
  k.c.publish(`${k.base}/state`, JSON.stringify(msg), { qos: 0 });
  counts.state++;
}

// Slots of 10 ms: 100 per second. Robot i sends visualization in slots s with s mod (100/visHz) == i mod (100/visHz).
const SLOT_MS = 10;
const visEvery = Math.max(1, Math.round(1000 / SLOT_MS / opts['vis-hz']));
const stateEvery = Math.max(1, Math.round(1000 / SLOT_MS / opts['state-hz']));
const byVisSlot = Array.from({ length: visEvery }, () => []);
const byStateSlot = Array.from({ length: stateEvery }, () => []);
clients.forEach((k, i) => {
  byVisSlot[i % visEvery].push(k);
  byStateSlot[i % stateEvery].push(k);
});
const endAtMs = connectedAtMs + opts.duration * 1000;
let slot = 0;
let nextSlotAt = Date.now();
let nextReport = connectedAtMs + opts['report-ms'];
let late = 0;
while (Date.now() < endAtMs && !stopRequested) {
  const wait = nextSlotAt - Date.now();
  if (wait > 0) await sleep(wait);
  // After a stall, skip missed slots rather than bursting them: a robot drops stale positions too.
  if (Date.now() - nextSlotAt > 100) {
    late += Math.floor((Date.now() - nextSlotAt) / SLOT_MS);
    nextSlotAt = Date.now();
  }
  const now = new Date().toISOString();
  for (const k of byVisSlot[slot % visEvery]) {
    k.angle += 0.1 / opts['vis-hz'];
    publishVisualization(k, now);
  }
  for (const k of byStateSlot[slot % stateEvery]) publishState(k, now);
  slot++;
  nextSlotAt += SLOT_MS;
  if (Date.now() >= nextReport) {
    nextReport += opts['report-ms'];
    emit({ event: 'progress', tMs: Date.now(), counts, lateSlots: late, cpuS: cpuS() });
  }
}
emit({ event: 'generation-stopped', tMs: Date.now(), counts: { ...counts }, lateSlots: late, cpuS: cpuS() });
while (!stopRequested) await sleep(20);
await Promise.all(clients.map((k) => k.c.endAsync()));
emit({ event: 'done', counts, lateSlots: late, cpuSeconds: cpuS() });
process.exit(0);
