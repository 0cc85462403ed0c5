// Micro benchmark: what the Foxglove endpoint costs.
// (1) In a decode worker: one task (50 robots x 100 samples, the simulator's samples) through the
//     decoder in use (the C++ addon when built, else the JS reader) with live JSON for the JSON stream
//     (the baseline: what one stream subscriber already costs), then the same task with Foxglove frames
//     for every robot and every kind (location, pose, status: 3 frames per sample), and for one kind.
// (2) On the event loop: FoxgloveHub.publishFoxglove for that task's frames to one subscriber per
//     channel, against a peer that takes each frame and keeps nothing (so only the hub's own work is
//     timed: grouping, the per-subscriber copy and the subscription id; uWS's send is not in it).
// Run: node bench/micro/foxglove-output.mjs   (after `npm run build`)
import { randomUUID } from 'node:crypto';
import { loadavg } from 'node:os';
import { deserializeRobotMessage } from '../../dist/protocol/envelope.js';
import { chooseDecoder } from '../../dist/telemetry/decode/select.js';
import { foxgloveOutput } from '../../dist/telemetry/decode/foxglove-output.js';
import { FoxgloveHub } from '../../dist/telemetry/foxglove/foxglove-hub.js';
import { FramePacker } from '../../dist/telemetry/decode/frame-packer.js';
import { StreamHub } from '../../dist/telemetry/live/stream-hub.js';
import { TicketIssuer } from '../../dist/telemetry/live/ticket-issuer.js';
import { telemetryEnvelope } from './fixtures.mjs';

const ROBOTS = 50;
const SAMPLES = 100;
const fleetId = randomUUID();
const packer = new FramePacker();
const robotIds = [];
for (let r = 0; r < ROBOTS; r++) {
  const id = randomUUID();
  robotIds.push(id);
  packer.add(id, fleetId, deserializeRobotMessage(telemetryEnvelope(SAMPLES, r)).batch, Date.now());
}
const packed = packer.take();
const total = ROBOTS * SAMPLES;
const decoder = chooseDecoder();
const all = new Uint8Array(ROBOTS).fill(7);
const statusOnly = new Uint8Array(ROBOTS).fill(4);
const live = new Uint8Array(ROBOTS).fill(1);
const base = decoder.decode({ ...packed, live }, 0);
const fox = foxgloveOutput(base.rows, packed.robotIds, all);
if (base.rowCount !== total || fox.index.length / 4 !== total * 3) throw new Error(`bad result: ${base.rowCount} rows, ${fox.index.length / 4} frames`);

// The hub: every robot online, one socket subscribed to each of its 3 channels (ids 1..150 in order).
const hub = new FoxgloveHub({ hub: new StreamHub({ tickets: new TicketIssuer() }) });
for (const id of robotIds) hub.robotOnline(id, fleetId);
let sentBytes = 0;
const peer = { send: (m) => { if (typeof m !== 'string') sentBytes += m.byteLength; }, bufferedAmount: () => 0, cork: (fn) => fn(), end: () => {} };
const session = hub.connect(peer, { orgId: 'o', fleetId, apiKeyId: 'k' });
session.onMessage(new TextEncoder().encode(JSON.stringify({ op: 'subscribe', subscriptions: Array.from({ length: ROBOTS * 3 }, (_, i) => ({ id: i, channelId: i + 1 })) })).buffer, false);
if (hub.watchedKinds(robotIds[1]) !== 7) throw new Error('not subscribed');

let sink = 0;
const cases = {
  workerBaseline: () => { sink += decoder.decode({ ...packed, live }, 0).rowCount; },
  workerFoxgloveAllKinds: () => { const r = decoder.decode({ ...packed, live }, 0); sink += foxgloveOutput(r.rows, packed.robotIds, all).index.length; },
  workerFoxgloveStatusOnly: () => { const r = decoder.decode({ ...packed, live }, 0); sink += foxgloveOutput(r.rows, packed.robotIds, statusOnly).index.length; },
  eventLoopPublishAllKinds: () => { hub.publishFoxglove(fox); },
};
const ROUNDS = Number(process.argv[2] ?? 5);
const results = Object.fromEntries(Object.keys(cases).map((k) => [k, []]));
for (const fn of Object.values(cases)) for (let i = 0; i < 20; i++) fn(); // warm-up
// Alternating rounds of ~0.5 s each; CPU time of this process (getrusage: the same counters as
// /proc/self/stat, in µs) per sample, so other load on the machine does not inflate it.
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, fn] of Object.entries(cases)) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let n = 0;
    while (performance.now() - t0 < 500) { fn(); n++; }
    const c = process.cpuUsage(c0);
    results[name].push((c.user + c.system) / (n * total));
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const usPerSample = Object.fromEntries(Object.entries(results).map(([k, xs]) => [k, Number(median(xs).toFixed(3))]));
console.log(JSON.stringify({
  bench: 'micro/foxglove-output', date: new Date().toISOString(), node: process.version, decoder: decoder.kind, loadavg: loadavg().map((x) => x.toFixed(2)).join(' '),
  task: { robots: ROBOTS, samplesPerFrame: SAMPLES, rounds: ROUNDS },
  cpuUsPerSample: usPerSample,
  foxgloveAddedInWorker: { allKinds: Number((usPerSample.workerFoxgloveAllKinds - usPerSample.workerBaseline).toFixed(3)), statusOnly: Number((usPerSample.workerFoxgloveStatusOnly - usPerSample.workerBaseline).toFixed(3)) },
  ranges: Object.fromEntries(Object.entries(results).map(([k, xs]) => [k, [Math.min(...xs).toFixed(3), Math.max(...xs).toFixed(3)]])),
  sink: sink > 0 && sentBytes > 0,
}, null, 2));
