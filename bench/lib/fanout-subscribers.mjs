// Dashboard side of bench/live-fanout.mjs: N WebSocket subscribers in one process (plus, with --slow,
// sockets that subscribe to the whole fleet and then never read), measuring per message the time from the sample's
// gateway receive stamp (`received_at_ms`: the gateway's clock at push, or the bare server's clock at
// publish) to its arrival here. Same machine, same clock. The stamp is read straight from the bytes
// (no JSON.parse per message: this process must not be the bottleneck).
//
// SIGUSR1 prints one JSON line `{"event":"mark",...}` with counters since start and the latency
// histogram since the previous mark (then reset it); SIGTERM closes the sockets and exits.
//
//   node bench/lib/fanout-subscribers.mjs --mode gateway|bare --ws URL [--http URL --api-key K --org ID]
//       --fleet ID --robots-file F --subs N [--robots-per-sub 0 (all)] [--encoding json|binary]
//       [--max-hz 0] [--slow 0]
import { readFileSync } from 'node:fs';
import WebSocket from 'ws';
import { parseArgs } from './procs.mjs';

const opts = parseArgs(process.argv.slice(2), {
  mode: 'gateway', ws: '', http: '', 'api-key': '', org: '', fleet: '', 'robots-file': '', subs: 10, 'robots-per-sub': 0,
  encoding: 'json', 'max-hz': 0, slow: 0,
});
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const robots = JSON.parse(readFileSync(opts['robots-file'], 'utf8')).map((r) => r.robotId);

// Latency histogram: 0.1 ms bins up to 2 s, then one overflow bin.
const BIN_MS = 0.1;
const BINS = 20_000;
let hist = new Float64Array(BINS + 1);
const KEY = Buffer.from('"received_at_ms":');
const nowMs = () => performance.timeOrigin + performance.now();

/** The gateway's receive stamp of a sample message, or -1 for a notice. */
function stampOf(buf, isBinary) {
  if (isBinary) {
    // RowBinary row: robot_id, fleet_id (LEB128 length + bytes), ts_ms Int64, received_at_ms Int64.
    let p = 0;
    for (let s = 0; s < 2; s++) {
      let len = 0;
      let shift = 0;
      for (;;) {
        const b = buf[p++];
        len += (b & 0x7f) * 2 ** shift;
        if (b < 0x80) break;
        shift += 7;
      }
      p += len;
    }
    return Number(buf.readBigInt64LE(p + 8));
  }
  if (buf[2] !== 0x6f || buf[7] !== 0x73) return -1; // not {"op":"sample"
  const at = buf.indexOf(KEY, 40);
  if (at < 0) return -1;
  let v = 0;
  for (let p = at + KEY.length; ; p++) {
    const d = buf[p] - 48;
    if (d < 0 || d > 9) break;
    v = v * 10 + d;
  }
  return v;
}

const subs = [];
function robotsFor(i) {
  const k = opts['robots-per-sub'];
  if (k <= 0 || k >= robots.length) return null;
  const out = [];
  for (let j = 0; j < k; j++) out.push(robots[(i * k + j) % robots.length]);
  return out;
}

async function ticket() {
  const res = await fetch(`${opts.http}/v1/telemetry/stream-tickets`, {
    method: 'POST',
    headers: { authorization: `Bearer ${opts['api-key']}`, 'content-type': 'application/json' },
    body: JSON.stringify({ org_id: opts.org, fleet_id: opts.fleet }),
  });
  if (res.status !== 201) throw new Error(`ticket: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()).ticket;
}

async function open(i, slow) {
  const s = { i, slow, received: 0, dropped: 0, subscribed: false, closed: null, ws: null };
  const protocols = opts.mode === 'gateway' ? ['fleetgw.v1', `fleetgw.ticket.${await ticket()}`] : [];
  const ws = new WebSocket(opts.ws, protocols, { perMessageDeflate: false });
  s.ws = ws;
  await new Promise((resolve, reject) => {
    ws.once('open', resolve);
    ws.once('error', reject);
  });
  // Slow sockets watch the whole fleet: they reach their buffer bound soonest.
  const sub = { op: 'subscribe', robot_ids: slow ? null : robotsFor(i) };
  if (opts.encoding !== 'json') sub.encoding = opts.encoding;
  if (opts['max-hz'] > 0) sub.max_hz = opts['max-hz'];
  ws.on('message', (data, isBinary) => {
    const stamp = stampOf(data, isBinary);
    if (stamp >= 0) {
      s.received++;
      if (!slow) {
        const bin = Math.floor((nowMs() - stamp) / BIN_MS);
        hist[bin < 0 ? 0 : bin > BINS ? BINS : bin]++;
      }
      return;
    }
    const m = JSON.parse(data.toString());
    if (m.op === 'subscribed') s.subscribed = true;
    else if (m.op === 'dropped') s.dropped += m.count;
  });
  ws.on('close', (code) => { s.closed = code; });
  ws.send(JSON.stringify(sub));
  const t0 = Date.now();
  while (!s.subscribed) {
    if (s.closed !== null) throw new Error(`subscriber ${i} closed with ${s.closed}`);
    if (Date.now() - t0 > 20_000) throw new Error(`subscriber ${i}: no subscribed notice`);
    await new Promise((r) => setTimeout(r, 5));
  }
  // A slow dashboard: subscribed, then its socket is never read again (kernel buffers fill, then the
  // server's per-socket bound).
  if (slow) ws._socket.pause();
  subs.push(s);
}

for (let i = 0; i < opts.subs; i++) await open(i, false);
for (let i = 0; i < opts.slow; i++) await open(opts.subs + i, true);
emit({ event: 'ready', subs: opts.subs, slow: opts.slow });
// With no subscribers (the driver's `ingest` run) nothing else keeps the process alive until SIGTERM.
const keepAlive = setInterval(() => {}, 60_000);

function percentile(h, total, q) {
  let acc = 0;
  const want = total * q;
  for (let b = 0; b <= BINS; b++) {
    acc += h[b];
    if (acc >= want) return (b + 1) * BIN_MS;
  }
  return Infinity;
}

process.on('SIGUSR1', () => {
  const h = hist;
  hist = new Float64Array(BINS + 1);
  let n = 0;
  for (let b = 0; b <= BINS; b++) n += h[b];
  const reading = subs.filter((s) => !s.slow);
  const slowSubs = subs.filter((s) => s.slow);
  const recv = reading.map((s) => s.received);
  emit({
    event: 'mark', tMs: Date.now(), cpuS: process.cpuUsage().user / 1e6 + process.cpuUsage().system / 1e6,
    received: recv.reduce((a, b) => a + b, 0), perSubMin: Math.min(...recv), perSubMax: Math.max(...recv),
    droppedReading: reading.reduce((a, s) => a + s.dropped, 0), closedReading: reading.filter((s) => s.closed !== null).length,
    slowReceived: slowSubs.reduce((a, s) => a + s.received, 0), slowDropped: slowSubs.reduce((a, s) => a + s.dropped, 0),
    latency: { n, p50: percentile(h, n, 0.5), p90: percentile(h, n, 0.9), p99: percentile(h, n, 0.99), p999: percentile(h, n, 0.999), max: percentile(h, n, 1) },
  });
});
process.once('SIGTERM', () => {
  clearInterval(keepAlive);
  for (const s of subs) s.ws.terminate();
  process.exit(0);
});
