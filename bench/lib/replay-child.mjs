// Replay load generator for the telemetry benchmarks (telemetry target 4: bench/notes/telemetry-ingest.md): robots that send
// pre-encoded TelemetryBatch messages, so a run measures the gateway and not the simulator.
//
// At start it encodes a small pool of batch templates (--templates, each --samples-per-msg samples of
// a simulated robot model, with the agent's own sample encoder). Sending a message copies a template
// and patches each sample's ts_ms in place (a fixed 6-byte varint, so the layout never moves): the
// robot's own clock, one sample every 1000/hz ms, so (robot, ts_ms) stays unique and the snapshot
// check holds. No per-sample objects, no protobuf encoding while running.
//
// Each robot keeps a Connect stream (Hello, waits for Welcome) and a PublishTelemetry stream on one
// shared HTTP/2 connection (as the simulator's agents do; --connections spreads them). Writes obey
// HTTP/2 flow control: a robot whose stream reports backpressure waits for 'drain' and owes the
// messages meanwhile (its queue, bounded at 5 s of samples like the agent's; beyond it the oldest are
// dropped and counted). Same JSON line contract as sim-child.mjs (connected | progress |
// generation-stopped | flushed | done | error), so telemetry-throughput.mjs drives either.
//
//
// --transport http2 writes the PublishTelemetry streams with node:http2 itself (the same messages,
// length-prefixed as grpc-js frames them, and the headers the gateway reads: path, content-type, te,
// robot id and token; not grpc-js's user-agent or encoding headers; receipts are read and dropped,
// the status comes from the trailers or a trailers-only response), on connections of their own next
// to grpc-js's Connect streams (so `--connections N` opens 2N). Why: with one connection per robot,
// grpc-js's per-message write path was 0.72-0.92 us per sample at 350,000-400,000 samples/s, a third
// of a core on the machine the gateway is measured on (bench/notes/telemetry-ingest.md, "Target 1 on the Intel machine").
//
//   node bench/lib/replay-child.mjs --grpc HOST:PORT --robots-file F --hz N --duration S
//       [--samples-per-msg K (0: hz/10, as the simulator)] [--templates 16] [--connections 1] [--report-ms 5000]
//       [--transport grpc-js|http2]
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Client, credentials, Metadata } from '@grpc/grpc-js';
import { readFileSync } from 'node:fs';
import { connect as connectHttp2 } from 'node:http2';
import { encodeSample } from '../../dist/agent/sample-encoder.js';
import { GatewayMessageSchema, RobotMessageSchema } from '../../dist/gen/fleetgw/v1/robot_link_pb.js';
import { CONNECT_PATH, PUBLISH_TELEMETRY_PATH, ROBOT_ID_METADATA } from '../../dist/protocol/service.js';
import { RobotModel } from '../../dist/sim/index.js';
import { parseArgs } from './procs.mjs';

const opts = parseArgs(process.argv.slice(2), {
  grpc: '', 'robots-file': '', hz: 1000, duration: 60, 'samples-per-msg': 0, templates: 16, connections: 1, 'report-ms': 5000,
  transport: 'grpc-js',
});
if (opts.transport !== 'grpc-js' && opts.transport !== 'http2') throw new Error('--transport must be grpc-js or http2');
const rawHttp2 = opts.transport === 'http2';
/** Bytes before a message's TelemetryBatch in what pump() writes: the gRPC length prefix when written raw. */
const PREFIX = rawHttp2 ? 5 : 0;
const creds = JSON.parse(readFileSync(opts['robots-file'], 'utf8'));
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const cpuS = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
if (!(opts.hz > 0 && opts.hz <= 1000)) throw new Error('--hz must be in (0, 1000]: ts_ms has millisecond resolution (use more robots for more samples)');
const K = opts['samples-per-msg'] > 0 ? opts['samples-per-msg'] : Math.max(1, Math.round(opts.hz / 10));
const periodMs = 1000 / opts.hz;
const msgPeriodMs = K * periodMs;
const maxOwed = Math.max(1, Math.ceil((opts.hz * 5) / K)); // messages: 5 s of samples
const raw = (b) => b;

// --- templates ---------------------------------------------------------------------------------
const TS_BASE = 1_700_000_000_000; // 6-byte varint for every ts in [2^35, 2^42)
function varint(n) {
  const out = [];
  while (n >= 0x80) { out.push((n & 0x7f) | 0x80); n = Math.floor(n / 128); }
  out.push(n);
  return out;
}
/** One batch of K samples; `tsAt` lists where each sample's 6 ts_ms varint bytes start. */
function buildTemplate(seed) {
  const model = new RobotModel(`template-${seed}`, seed);
  const parts = [];
  const tsAt = [];
  let len = 0;
  for (let i = 0; i < K; i++) {
    model.step(periodMs / 1000);
    const s = encodeSample(model.sample(TS_BASE + i));
    if (s[0] !== 0x08) throw new Error('sample encoding does not start with ts_ms');
    const head = Buffer.from([0x0a, ...varint(s.length)]);
    tsAt.push(len + head.length + 1);
    parts.push(head, s);
    len += head.length + s.length;
  }
  const bytes = Buffer.concat(parts);
  if (!rawHttp2) return { bytes, tsAt };
  // gRPC message framing: uncompressed flag, then the length big-endian.
  const prefix = Buffer.alloc(PREFIX);
  prefix.writeUInt32BE(bytes.length, 1);
  return { bytes: Buffer.concat([prefix, bytes]), tsAt: tsAt.map((at) => at + PREFIX) };
}
const templates = Array.from({ length: opts.templates }, (_, i) => buildTemplate(i));

/** Writes `ts` as a 6-byte varint at `at` (valid for 2^35 <= ts < 2^42). */
function patchTs(buf, at, ts) {
  let v = ts;
  for (let i = 0; i < 5; i++) {
    buf[at + i] = (v % 128) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[at + 5] = v;
}

// --- robots ------------------------------------------------------------------------------------
const clients = Array.from({ length: Math.max(1, opts.connections) }, () => new Client(opts.grpc, credentials.createInsecure(), {
  'grpc.per_rpc_retry_buffer_size': 0,
  'grpc.use_local_subchannel_pool': opts.connections > 1 ? 1 : 0,
  'grpc.keepalive_time_ms': 5000,
}));
const telemetrySessions = rawHttp2 ? clients.map(() => connectHttp2(`http://${opts.grpc}`)) : [];
for (const session of telemetrySessions) session.on('error', (e) => emit({ event: 'error', message: `telemetry connection: ${e.message}` }));
const hello = Buffer.from(toBinary(RobotMessageSchema, create(RobotMessageSchema, {
  body: { case: 'hello', value: { agentVersion: 'fleetgw-replay/0.1.0', capabilities: ['stop'] } },
})));
const stats = { connected: 0, samplesSent: 0, batchesSent: 0, samplesQueued: 0, samplesDropped: 0 };
const streamEnds = {};
let generating = true;

class ReplayRobot {
  constructor(cred, index, client) {
    this.cred = cred;
    this.index = index;
    this.client = client;
    this.welcomed = false;
    this.ctl = null;
    this.tel = null;
    this.waitingDrain = false;
    this.owed = 0; // messages due but not written yet
    this.nextTs = 0; // robot clock of the next sample (set at connect)
    this.nextDueMs = 0; // wall clock when the next message is due
    this.telDone = null;
    this.free = []; // message buffers grpc-js is done with (its write callback ran)
    this.release = (buf) => () => { if (this.free.length < 8) this.free.push(buf); };
  }

  metadata() {
    const md = new Metadata();
    md.set(ROBOT_ID_METADATA, this.cred.robotId);
    md.set('authorization', `Bearer ${this.cred.robotToken}`);
    return md;
  }

  connect() {
    return new Promise((resolve, reject) => {
      const ctl = this.client.makeBidiStreamRequest(CONNECT_PATH, raw, raw, this.metadata(), {});
      this.ctl = ctl;
      ctl.on('data', (buf) => {
        if (this.welcomed) return;
        const msg = fromBinary(GatewayMessageSchema, buf);
        if (msg.body.case !== 'welcome') return;
        this.welcomed = true;
        stats.connected++;
        this.openTelemetry();
        resolve();
      });
      ctl.on('error', (e) => {
        streamEnds[e.code] = (streamEnds[e.code] ?? 0) + 1;
        if (!this.welcomed) reject(e);
      });
      ctl.on('end', () => {});
      ctl.write(hello);
    });
  }

  openTelemetry() {
    if (rawHttp2) {
      this.openRawTelemetry();
      return;
    }
    this.telDone = new Promise((resolve) => {
      this.tel = this.client.makeClientStreamRequest(PUBLISH_TELEMETRY_PATH, raw, raw, this.metadata(), {}, (err) => {
        if (err) streamEnds[err.code] = (streamEnds[err.code] ?? 0) + 1;
        resolve();
      });
    });
    this.tel.on('drain', () => {
      this.waitingDrain = false;
      this.pump();
    });
  }

  /** The PublishTelemetry call on node:http2 (--transport http2): the request grpc-js would send. */
  openRawTelemetry() {
    const session = telemetrySessions[this.index % telemetrySessions.length];
    const stream = session.request({
      ':method': 'POST', ':path': PUBLISH_TELEMETRY_PATH, 'content-type': 'application/grpc', te: 'trailers',
      [ROBOT_ID_METADATA]: this.cred.robotId, authorization: `Bearer ${this.cred.robotToken}`,
    });
    this.tel = stream;
    let status = null;
    this.telDone = new Promise((resolve) => {
      stream.on('response', (h) => { if (h['grpc-status'] !== undefined) status = Number(h['grpc-status']); });
      stream.on('trailers', (t) => { status = Number(t['grpc-status']); });
      stream.on('error', () => {});
      stream.on('close', () => {
        const code = status ?? 'closed without status';
        if (code !== 0) streamEnds[code] = (streamEnds[code] ?? 0) + 1;
        resolve();
      });
    });
    stream.on('data', () => {}); // receipts: read so the window stays open, not decoded
    stream.on('drain', () => {
      this.waitingDrain = false;
      this.pump();
    });
  }

  /** Messages due by `now` become owed (bounded: beyond 5 s of samples the oldest are dropped). */
  accrue(now) {
    while (this.nextDueMs <= now) {
      this.nextDueMs += msgPeriodMs;
      if (this.owed === maxOwed) {
        stats.samplesDropped += K;
        this.nextTs += K * periodMs; // the dropped samples' time passes anyway
        stats.samplesQueued -= K;
      } else {
        this.owed++;
      }
      stats.samplesQueued += K;
    }
  }

  pump() {
    while (this.owed > 0 && !this.waitingDrain && this.tel) {
      const t = templates[(this.index + stats.batchesSent) % templates.length];
      let msg = this.free.pop();
      if (msg === undefined || msg.length !== t.bytes.length) msg = Buffer.allocUnsafe(t.bytes.length);
      t.bytes.copy(msg);
      for (let i = 0; i < K; i++) patchTs(msg, t.tsAt[i], Math.round(this.nextTs + i * periodMs));
      this.nextTs += K * periodMs;
      this.owed--;
      stats.samplesQueued -= K;
      stats.samplesSent += K;
      stats.batchesSent++;
      if (!this.tel.write(msg, this.release(msg))) this.waitingDrain = true;
    }
  }
}

const robots = creds.map((c, i) => new ReplayRobot(c, i, clients[i % clients.length]));
let stopRequested = false;
process.once('SIGTERM', () => { stopRequested = true; });
process.once('SIGINT', () => { stopRequested = true; });

const startedAtMs = Date.now();
try {
  // Connect in waves (as the simulator's agents spread over their backoff) to keep Hello bursts small.
  for (let i = 0; i < robots.length; i += 100) await Promise.all(robots.slice(i, i + 100).map((r) => r.connect()));
} catch (e) {
  emit({ event: 'error', message: `connect failed: ${e.message}` });
  process.exit(1);
}
const connectedAtMs = Date.now();
// Robot clocks start now; message phases are spread over one message period.
for (const r of robots) {
  r.nextTs = connectedAtMs;
  r.nextDueMs = connectedAtMs + (r.index % 100) * (msgPeriodMs / 100);
}
const snap = () => ({ ...stats });
const atConnect = snap();
emit({ event: 'connected', tMs: connectedAtMs, stats: atConnect, samplesPerMessage: K, templates: templates.length });

const TICK_MS = Math.min(10, Math.max(1, Math.floor(msgPeriodMs / 2)));
const tick = () => {
  if (!generating) return;
  const now = Date.now();
  for (const r of robots) {
    r.accrue(now);
    r.pump();
  }
};
const timer = setInterval(tick, TICK_MS);
const endAtMs = connectedAtMs + opts.duration * 1000;
let nextReport = connectedAtMs + opts['report-ms'];
while (Date.now() < endAtMs && !stopRequested) {
  await sleep(Math.max(1, Math.min(50, endAtMs - Date.now())));
  if (Date.now() >= nextReport) {
    nextReport += opts['report-ms'];
    emit({ event: 'progress', tMs: Date.now(), stats: snap(), cpuS: cpuS() });
  }
}
generating = false;
clearInterval(timer);
const stoppingAtMs = Date.now();
const atGenerationStop = snap();
emit({ event: 'generation-stopped', tMs: stoppingAtMs, stats: atGenerationStop, cpuS: cpuS() });

// Owed messages still go out (drain events pump them).
while (stats.samplesQueued > 0 && !stopRequested) await sleep(20);
emit({ event: 'flushed', tMs: Date.now(), stats: snap() });

while (!stopRequested) await sleep(20);
// Half-close every telemetry stream and wait for the receipts: everything written has been read.
for (const r of robots) r.tel?.end();
await Promise.race([Promise.all(robots.map((r) => r.telDone)), sleep(30_000)]);
for (const r of robots) r.ctl?.end();
emit({
  event: 'done', startedAtMs, connectedAtMs, stoppingAtMs, stoppedAtMs: Date.now(),
  atConnect, atGenerationStop, final: snap(), streamEnds, cpuSeconds: cpuS(),
});
for (const c of clients) c.close();
for (const session of telemetrySessions) session.close();
process.exit(0);
