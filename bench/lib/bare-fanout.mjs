// Baseline server for bench/live-fanout.mjs: bare uWebSockets.js publishing the same sample lines the
// gateway sends (a JSON line of the same shape and size, or a RowBinary row of the same layout), at the
// same robots x hz, stamped with `received_at_ms` = now at publish. One topic per robot and one for the
// fleet, published like the gateway's (one native publish per topic per sample). No auth, no robots,
// no store: the floor the gateway's live fan-out is compared with.
//
//   node bench/lib/bare-fanout.mjs --robots-file F --fleet ID --hz N [--encoding json|binary]
import { readFileSync } from 'node:fs';
import * as uws from '../../dist/http/uws.js';
import { ByteWriter } from '../../dist/telemetry/sample/byte-writer.js';
import { writeLiveJson, liveJsonPrefix } from '../../dist/telemetry/sample/live-json.js';
import { writeRowFromValues } from '../../dist/telemetry/sample/row-rowbinary.js';
import { parseArgs } from './procs.mjs';

const opts = parseArgs(process.argv.slice(2), { 'robots-file': '', fleet: '', hz: 10, encoding: 'json' });
const robots = JSON.parse(readFileSync(opts['robots-file'], 'utf8')).map((r) => r.robotId);
const binary = opts.encoding === 'binary';

// A sample as the simulator's robots send it (the values only change the digits, not the cost).
const values = (robotId, ts) => ({
  robot_id: robotId, fleet_id: opts.fleet, ts_ms: BigInt(ts), received_at_ms: BigInt(ts), lat: 48.137154, lon: 11.576124,
  elevation_m: 519.25, pose_x_m: 12.503, pose_y_m: -3.2551, pose_z_m: 0, heading_deg: 87.53, speed_mps: 1.2034,
  yaw_rate_dps: -3.512, battery_pct: 81.5, voltage_v: 48.2, charging: false, mode: 'autonomous', estop: false,
  gps_fix: 4, mission_run_id: '7f9c2a4e-1b3d-4c5e-8f6a-9b0c1d2e3f40', mission_state: 'running', mission_progress_pct: 42.5,
  current_step_index: 3, remaining_distance_m: 120.5, estimated_time_remaining_s: 95, health_level: 1, faults: [], cpu_temp_c: 55.5,
});
/** Per robot: the message split around the receive stamp (JSON: text before/after; binary: offset). */
const templates = robots.map((id) => {
  const w = new ByteWriter(4096);
  if (binary) {
    writeRowFromValues(w, values(id, 1_767_225_600_000));
    return { row: Buffer.from(w.copyOut()), at: 0 };
  }
  writeLiveJson(w, liveJsonPrefix(id, opts.fleet), values(id, 1_767_225_600_000));
  const text = Buffer.from(w.copyOut()).toString('utf8');
  const key = '"received_at_ms":';
  const a = text.indexOf(key) + key.length;
  const b = text.indexOf(',', a);
  return { head: text.slice(0, a), tail: text.slice(b) };
});
if (binary) {
  for (const t of templates) {
    // robot_id and fleet_id strings, then ts_ms: received_at_ms follows.
    let p = 0;
    for (let s = 0; s < 2; s++) p += 1 + t.row[p];
    t.at = p + 8;
  }
}

const app = uws.App();
let fleetSubs = 0;
const robotSubs = new Map();
app.ws('/*', {
  maxPayloadLength: 128 * 1024,
  maxBackpressure: 4 * 1024 * 1024,
  closeOnBackpressureLimit: false,
  idleTimeout: 120,
  open: (ws) => { ws.getUserData().topics = []; },
  message: (ws, msg) => {
    const m = JSON.parse(Buffer.from(msg).toString());
    const topics = m.robot_ids ? m.robot_ids.map((r) => `r/${r}`) : ['f'];
    for (const t of topics) {
      ws.subscribe(t);
      if (t === 'f') fleetSubs++;
      else robotSubs.set(t, (robotSubs.get(t) ?? 0) + 1);
    }
    ws.getUserData().topics = topics;
    ws.send(JSON.stringify({ op: 'subscribed', fleet_id: opts.fleet, robot_ids: m.robot_ids ?? null }), false);
  },
  close: (ws) => {
    for (const t of ws.getUserData().topics) {
      if (t === 'f') fleetSubs--;
      else robotSubs.set(t, robotSubs.get(t) - 1);
    }
  },
});

// Robots spread evenly over the period; a 1 ms timer publishes those due.
const periodMs = 1000 / opts.hz;
const next = robots.map((_, i) => (i * periodMs) / robots.length);
let t0 = 0;
let published = 0;
function tick() {
  const now = Date.now();
  const rel = now - t0;
  for (let i = 0; i < robots.length; i++) {
    if (next[i] > rel) continue;
    next[i] += periodMs;
    if (next[i] <= rel) next[i] = rel + periodMs; // fell behind: no burst
    const t = templates[i];
    let msg;
    if (binary) {
      msg = Buffer.from(t.row);
      msg.writeBigInt64LE(BigInt(now), t.at);
    } else {
      msg = t.head + now + t.tail;
    }
    published++;
    if (fleetSubs > 0) app.publish('f', msg, binary);
    const rt = `r/${robots[i]}`;
    if ((robotSubs.get(rt) ?? 0) > 0) app.publish(rt, msg, binary);
  }
}

app.listen('127.0.0.1', 0, (sock) => {
  if (!sock) {
    process.stderr.write('bare-fanout: listen failed\n');
    process.exit(1);
  }
  process.stdout.write(`${JSON.stringify({ event: 'ready', ws: `ws://127.0.0.1:${uws.us_socket_local_port(sock)}/` })}\n`);
  let timer = null;
  process.on('SIGUSR2', () => {
    t0 = Date.now();
    timer = setInterval(tick, 1);
  });
  process.once('SIGTERM', () => {
    clearInterval(timer);
    process.stdout.write(`${JSON.stringify({ event: 'stopped', published })}\n`);
    uws.us_listen_socket_close(sock);
    process.exit(0);
  });
});
