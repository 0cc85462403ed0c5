// Benchmark: robot command latency through the whole gateway — HTTP request in (keep-alive), command
// persisted and written to the robot's gRPC stream, the robot agent's ack back, HTTP answer out.
//   (a) single `stop` with wait_for_ack to one online robot: p50 / p99, beside a bare grpc-js bidi
//       ping-pong between the same two processes (the floor of the robot hop);
//   (b) `stop_all` (falls back to a 100-target `stop` via robot_ids where stop_all is not served)
//       across 100 robots, until every ack is in: p50 / p99;
//   (c) (a) and (b) again while the 100 robots stream telemetry at --hz (default 50 Hz);
//   (d) mixed loads, each its own option and its own phase on top of (c): --read-hammer N (N keep-alive
//       connections reading GET /v1/robots/{id} back to back, from another process), --stream-sockets N
//       (N live telemetry WebSocket subscribers, --stream-robots-per-sub robots each, another process).
//   Every phase also reports stop delivery: the request's send to the robot's onCommand (same clock).
//   Each phase also reports the gateway's event-loop delay, GC and its own histograms from /metrics,
//   and each single stop's stages (handler to sent, sent to ack, ack to commit) from the gateway's
//   FLEETGW_BENCH_STOP_TRACE file (src/api/stop-trace.ts) joined with the client's round trips.
// With --flood BYTES, instead: (a) without and then with a second key flooding BYTES-byte JSON bodies
// (bench/lib/body-flood.mjs; --flood-connections 20 --flood-rps 70 --flood-paths control-robot,features),
// the gateway at its default rate limits (the flooding key stays under its request count).
// Gateway (`fleetgw serve`, real CLI, embedded chdb) in its own process, the robots (RobotAgent, one
// TCP connection each, like real robots) in another, the HTTP client in this one.
// Results: bench/README.md#command-latency; method and history: bench/notes/command-latency.md.
//
//   npm run build && node bench/command-latency.mjs [--robots 100] [--hz 50] [--single 3000]
//       [--bulk 300] [--gateway-cpus 0] [--robots-cpus 1] [--bench-cpus 1] [--cpu-prof DIR] [--json FILE]
//       [--client lean|node] [--node-flags '--max-semi-space-size=64 ...' (gateway and robots)]
//       [--read-hammer 0] [--stream-sockets 0] [--stream-robots-per-sub 50] [--loads-cpus LIST]
//       [--flood 1048575 [--flood-connections 20] [--flood-rps 70] [--flood-paths control-robot,features]]
// The mixed loads (bench/README.md#command-latency): --robots 200 --hz 10 --read-hammer 8 --stream-sockets 200.
// Internal: `--role robots` runs the robot side, `--role hammer` the read hammer, `--role flood` the
// body flood (spawned by the main role).
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client, credentials, Server, ServerCredentials } from '@grpc/grpc-js';
import { leanHttp } from './lib/lean-http.mjs';
import { FLOOD_DEFAULTS, floodPaths, floodRole, floodRoleArgs } from './lib/body-flood.mjs';
import { cpuSeconds, FLEETGW, machineInfo, parseArgs, ROOT, spawnNode, stopChild } from './lib/procs.mjs';

const SELF = fileURLToPath(import.meta.url);
const ECHO_PATH = '/bench.Echo/Ping';
const raw = { serialize: (b) => b, deserialize: (b) => b };
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (s) => process.stderr.write(`${s}\n`);

const roleIdx = process.argv.indexOf('--role');
const roleArgv = process.argv.slice(2).filter((_, i, a) => a[i] !== '--role' && a[i - 1] !== '--role');
if (roleIdx >= 0 && process.argv[roleIdx + 1] === 'robots') {
  await robotsRole(parseArgs(roleArgv, { grpc: '', 'robots-file': '', hz: 50 }));
} else if (roleIdx >= 0 && process.argv[roleIdx + 1] === 'hammer') {
  await hammerRole(parseArgs(roleArgv, { http: '', 'api-key': '', path: '', conns: 8 }));
} else if (roleIdx >= 0 && process.argv[roleIdx + 1] === 'flood') {
  await floodRole(parseArgs(roleArgv, { url: '', key: '', paths: '', bytes: 0, connections: 20, rps: 70 }));
} else {
  await main(parseArgs(process.argv.slice(2), {
    robots: 100, hz: 50, single: 3000, bulk: 300, 'gateway-cpus': '', 'robots-cpus': '', 'bench-cpus': '',
    'cpu-prof': '', json: '', client: 'lean', 'node-flags': '', ...FLOOD_DEFAULTS,
    'read-hammer': 0, 'stream-sockets': 0, 'stream-robots-per-sub': 50, 'loads-cpus': '',
  }));
}

// ---------------------------------------------------------------------------------------------
// Robot side: one RobotAgent per robot (dedicated TCP connection each), a grpc-js echo server for
// the ping-pong floor, telemetry at --hz toggled on and off by SIGUSR2.
async function robotsRole(opts) {
  const { RobotAgent } = await import('../dist/agent/index.js');
  const robots = JSON.parse(readFileSync(opts['robots-file'], 'utf8'));

  const server = new Server();
  server.register(ECHO_PATH, (call) => {
    call.on('data', (b) => call.write(b));
    call.on('end', () => call.end());
  }, raw.serialize, raw.deserialize, 'bidi');
  const echoPort = await new Promise((res, rej) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))));
  emit({ event: 'echo', port: echoPort });

  // Robot 0 reports when each command reached its handler (wall clock, same machine as the bench).
  const agents = robots.map((r, i) => new RobotAgent({
    address: opts.grpc, robotId: r.robotId, robotToken: r.robotToken, dedicatedConnection: true,
    onCommand: i === 0
      ? (cmd) => { emit({ event: 'cmd', id: cmd.commandId, atMs: performance.timeOrigin + performance.now() }); return { accept: true }; }
      : () => ({ accept: true }),
    maxQueuedSamples: 1000,
  }));
  for (const a of agents) a.start();
  while (!agents.every((a) => a.connected)) await sleep(20);
  emit({ event: 'connected', robots: agents.length });

  // Telemetry: every 100 ms each robot sends the samples due since the last tick (like src/sim).
  let hz = 0;
  const onHz = opts.hz;
  let carry = 0;
  let ts = Date.now();
  const sample = (t, i) => ({
    tsMs: t, latitude: 52.1 + i * 1e-5, longitude: 5.1, elevationM: 2, xM: i, yM: 2, zM: 0, headingDeg: 10, linearMps: 1.2,
    angularDps: 0, batteryPercent: 80, voltageV: 50, charging: false, mode: 'autonomous', estop: false, mission: null,
    healthLevel: 1, faults: [], cpuTempC: 40, gpsFix: 4,
  });
  setInterval(() => {
    if (hz === 0) return;
    carry += hz / 10;
    const n = Math.floor(carry);
    carry -= n;
    if (n === 0) return;
    for (let i = 0; i < agents.length; i++) {
      const batch = [];
      for (let k = 0; k < n; k++) batch.push(sample(ts + k, i));
      agents[i].sendSamples(batch);
    }
    ts += n;
  }, 100);
  const stats = () => agents.reduce((s, a) => {
    const x = a.stats();
    s.samplesSent += x.samplesSent; s.samplesDropped += x.samplesDropped; s.commandsApplied += x.commandsApplied;
    return s;
  }, { samplesSent: 0, samplesDropped: 0, commandsApplied: 0 });
  process.on('SIGUSR2', () => {
    hz = hz === 0 ? onHz : 0;
    emit({ event: 'hz', hz, stats: stats() });
  });
  await new Promise((done) => process.once('SIGTERM', done));
  await Promise.all(agents.map((a) => a.stop()));
  server.forceShutdown();
  emit({ event: 'done', stats: stats() });
  process.exit(0);
}

// ---------------------------------------------------------------------------------------------
// Read hammer: `conns` keep-alive connections, each reading `path` back to back (closed loop: a
// connection sends its next request when the answer is in). SIGUSR1 reports the counts since start.
async function hammerRole(opts) {
  let ok = 0;
  let bad = 0;
  let running = true;
  const conns = [];
  for (let i = 0; i < opts.conns; i++) conns.push(await leanHttp(opts.http, opts['api-key']));
  const loops = conns.map(async (c) => {
    while (running) {
      const r = await c.request(opts.path).catch(() => ({ status: 0 }));
      if (r.status === 200) ok++;
      else bad++;
    }
  });
  emit({ event: 'ready', conns: conns.length });
  process.on('SIGUSR1', () => emit({ event: 'mark', ok, bad, cpuS: (process.cpuUsage().user + process.cpuUsage().system) / 1e6 }));
  await new Promise((done) => process.once('SIGTERM', done));
  running = false;
  for (const c of conns) c.close();
  await Promise.allSettled(loops);
  process.exit(0);
}

/** Asks a load process for its counters (SIGUSR1) and waits for the answer line. */
async function markOf(child) {
  const before = child.lines.length;
  child.kill('SIGUSR1');
  const t0 = Date.now();
  for (;;) {
    for (let i = before; i < child.lines.length; i++) {
      const o = JSON.parse(child.lines[i]);
      if (o.event === 'mark') return o;
    }
    if (Date.now() - t0 > 10_000) throw new Error(`no mark from pid ${child.pid}`);
    await sleep(10);
  }
}

// ---------------------------------------------------------------------------------------------
function pct(sortedMs, p) {
  if (sortedMs.length === 0) return NaN;
  return sortedMs[Math.min(sortedMs.length - 1, Math.ceil((p / 100) * sortedMs.length) - 1)];
}

function summary(ms) {
  const s = [...ms].sort((a, b) => a - b);
  const r = (x) => Number(x.toFixed(3));
  return { n: s.length, p50: r(pct(s, 50)), p90: r(pct(s, 90)), p99: r(pct(s, 99)), max: r(s[s.length - 1]), mean: r(s.reduce((a, b) => a + b, 0) / s.length) };
}

function makeHttp(base, apiKey) {
  const url = new URL(base);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return (path, body) => new Promise((res, rej) => {
    const payload = body === undefined ? null : Buffer.from(JSON.stringify(body));
    const headers = { authorization: `Bearer ${apiKey}` };
    if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
    const req = http.request({ host: url.hostname, port: url.port, path, method: payload ? 'POST' : 'GET', agent, headers }, (resp) => {
      const chunks = [];
      resp.on('data', (c) => chunks.push(c));
      resp.on('end', () => {
        try { res({ status: resp.statusCode, body: JSON.parse(Buffer.concat(chunks).toString()) }); } catch (e) { rej(e); }
      });
    });
    req.on('error', rej);
    req.end(payload ?? undefined);
  });
}

async function pingPong(address, n, warm) {
  const client = new Client(address, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 });
  const call = client.makeBidiStreamRequest(ECHO_PATH, raw.serialize, raw.deserialize);
  call.on('error', () => {}); // the final status after end() is of no interest
  const msg = Buffer.alloc(64, 1);
  let resolveNext;
  call.on('data', () => resolveNext());
  const out = [];
  for (let i = 0; i < warm + n; i++) {
    const t0 = process.hrtime.bigint();
    await new Promise((r) => { resolveNext = r; call.write(msg); });
    if (i >= warm) out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  call.end();
  client.close();
  return summary(out);
}

/** CPU seconds of a process's main thread (its task whose id is the pid). */
function mainThreadCpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Function-scoped: main() runs (top-level await) before module-level consts further down exist.
  mainThreadCpuSeconds.clk ??= Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  return (Number(rest[11]) + Number(rest[12])) / mainThreadCpuSeconds.clk;
}

async function timed(n, warm, fn) {
  const out = [];
  let bad = 0;
  let example = null;
  for (let i = 0; i < warm + n; i++) {
    const t0 = process.hrtime.bigint();
    const r = await fn();
    const ms = Number(process.hrtime.bigint() - t0) / 1e6;
    if (!r.ok) { bad++; example ??= r.detail; }
    if (i >= warm) out.push(ms);
  }
  return { ...summary(out), notAllAcked: bad, ...(example ? { example } : {}) };
}

async function main(opts) {
  // Machine facts first: nproc honours this process's CPU affinity.
  const machine = machineInfo();
  if (opts['bench-cpus'] !== '') execFileSync('taskset', ['-pc', opts['bench-cpus'], String(process.pid)], { stdio: 'ignore' });
  const { openStore } = await import('../dist/store/lmdb.js');
  const { addRobot } = await import('../dist/store/identity.js');
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-cmd-'));
  const init = JSON.parse(execFileSync(process.execPath, [FLEETGW, 'admin', 'init', '--data-dir', dataDir, '--org', 'bench', '--fleet', 'bench', '--json']).toString());
  const floodKey = opts.flood > 0
    ? JSON.parse(execFileSync(process.execPath, [FLEETGW, 'admin', 'create-key', '--data-dir', dataDir, '--org', init.orgId, '--permissions', 'robots:write,features:write', '--json']).toString()).apiKey
    : null;
  const store = openStore(dataDir);
  const robots = [];
  for (let i = 0; i < opts.robots; i++) {
    const r = addRobot(store, { fleetId: init.fleetId, name: `bench-${i}`, capabilities: ['stop'], active: true });
    robots.push({ robotId: r.record.robotId, robotToken: r.robotToken });
  }
  await store.close();
  const robotsFile = join(dataDir, 'robots.json');
  writeFileSync(robotsFile, JSON.stringify(robots));

  const nodeFlags = opts['node-flags'] === '' ? [] : opts['node-flags'].split(' ');
  if (opts['cpu-prof'] !== '') {
    mkdirSync(resolve(opts['cpu-prof']), { recursive: true });
    nodeFlags.push('--cpu-prof', `--cpu-prof-dir=${resolve(opts['cpu-prof'])}`);
  }
  const pin = (s) => (s === '' ? undefined : s);
  // The log (an access line per request) goes to a file, as journald drains a service's stderr: a
  // pipe read by this busy process would charge the gateway partial-write retries.
  const logFd = openSync(join(dataDir, 'gateway.log'), 'w');
  const traceFile = join(dataDir, 'stop-trace.jsonl');
  const gateway = spawnNode([...nodeFlags, FLEETGW, 'serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--grpc-port', '0', '--insecure-http'], {
    cpus: pin(opts['gateway-cpus']),
    // A flood runs against the default limits: the flooding key must stay within its own.
    // FLEETGW_BENCH_STOP_TRACE: the gateway's stages of each single stop (src/api/stop-trace.ts).
    env: { FLEETGW_BENCH_STOP_TRACE: traceFile, ...(opts.flood > 0 ? {} : { FLEETGW_RATE_LIMIT_RPS: '100000000', FLEETGW_RATE_LIMIT_BURST: '100000000' }) },
    stderrFd: logFd,
  });
  closeSync(logFd);
  let robotsProc;
  try {
    const ready = await gateway.waitJson((o) => o.event === 'ready');
    robotsProc = spawnNode([...nodeFlags, SELF, '--role', 'robots', '--grpc', ready.grpc, '--robots-file', robotsFile, '--hz', String(opts.hz)], { cpus: pin(opts['robots-cpus']) });
    const echo = await robotsProc.waitJson((o) => o.event === 'echo');
    await robotsProc.waitJson((o) => o.event === 'connected', 60_000);
    log(`gateway pid ${gateway.pid} (cpus ${opts['gateway-cpus'] || 'any'}), robots pid ${robotsProc.pid} (cpus ${opts['robots-cpus'] || 'any'}), bench cpus ${opts['bench-cpus'] || 'any'}`);

    if (opts.client !== 'lean' && opts.client !== 'node') throw new Error('--client is lean or node');
    const lean = opts.client === 'lean' ? await leanHttp(ready.http, init.apiKey) : null;
    const post = lean ? lean.request : makeHttp(ready.http, init.apiKey);
    const base = { org_id: init.orgId, fleet_id: init.fleetId };
    const r0 = robots[0].robotId;
    const allIds = robots.map((r) => r.robotId);
    // Stop delivery: when each single stop was sent, by command id; robot 0 reports when it arrived.
    const sentAt = new Map();
    // Per command id: the client's round trip and the delivery (for the stage breakdown, stageSplit).
    const roundTrips = new Map();
    const deliveredIn = new Map();
    const stopOne = async () => {
      const at = performance.timeOrigin + performance.now();
      const res = await post('/v1/agent/control-robot', { ...base, action: 'stop', robot_id: r0, wait_for_ack: true });
      const d = res.body?.outcomes?.[0]?.delivery;
      const ok = res.status === 200 && d?.state === 'agent_received';
      const id = d?.command_id ?? d?.commandId;
      if (id !== undefined) {
        sentAt.set(id, at);
        roundTrips.set(id, performance.timeOrigin + performance.now() - at);
      }
      return { ok, detail: ok ? null : { status: res.status, body: res.body } };
    };
    /** Send-to-robot times of the single stops sent since `from` (robot 0's `cmd` lines). */
    const deliveries = () => {
      const out = [];
      for (const line of robotsProc.lines) {
        if (!line.startsWith('{"event":"cmd"')) continue;
        const o = JSON.parse(line);
        const at = sentAt.get(o.id);
        if (at !== undefined) {
          out.push(o.atMs - at);
          deliveredIn.set(o.id, o.atMs - at);
        }
      }
      robotsProc.lines = robotsProc.lines.filter((l) => !l.startsWith('{"event":"cmd"'));
      sentAt.clear();
      return out.length === 0 ? null : summary(out);
    };
    // stop_all where served, else the same 100 robots by id.
    const probe = await post('/v1/agent/control-robot', { ...base, action: 'stop_all', wait_for_ack: true });
    const bulkKind = probe.status === 200 && probe.body.count === robots.length ? 'stop_all' : 'stop robot_ids[100]';
    if (bulkKind !== 'stop_all') log(`stop_all not served (${probe.status} ${JSON.stringify(probe.body).slice(0, 200)}); using robot_ids`);
    const bulkBody = bulkKind === 'stop_all' ? { ...base, action: 'stop_all', wait_for_ack: true } : { ...base, action: 'stop', robot_ids: allIds, wait_for_ack: true };
    const stopBulk = async () => {
      const res = await post('/v1/agent/control-robot', bulkBody);
      const ok = res.status === 200 && res.body.outcomes?.length === robots.length && res.body.outcomes.every((o) => o.delivery?.state === 'agent_received');
      return { ok, detail: ok ? null : { status: res.status, body: JSON.stringify(res.body).slice(0, 300) } };
    };

    // The gateway's own view of a phase, from its /metrics: event-loop delay (prom-client's histogram
    // starts over at each scrape, so a scrape before and after a section covers that section; its
    // floor is the 20 ms sampling period), GC by kind, and the single stops' own histograms (routing
    // to answer; first send to the robot's ack), diffed between scrapes.
    const metricsToken = readFileSync(join(dataDir, 'metrics-token'), 'utf8').trim();
    const scrape = async () => {
      const text = await (await fetch(`${ready.http}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })).text();
      /** Sum of `name`'s samples whose labels include every one of `labels`. */
      const num = (name, ...labels) => {
        let sum = 0;
        for (const m of text.matchAll(new RegExp(`^${name}(?:\\{([^}]*)\\})? (\\S+)$`, 'gm'))) if (labels.every((l) => (m[1] ?? '').includes(l))) sum += Number(m[2]);
        return sum;
      };
      const route = 'route="/v1/agent/control-robot"';
      return {
        loop: { p50: num('nodejs_eventloop_lag_p50_seconds'), p99: num('nodejs_eventloop_lag_p99_seconds'), max: num('nodejs_eventloop_lag_max_seconds') },
        gc: Object.fromEntries(['major', 'minor', 'incremental'].map((k) => [k, { s: num('nodejs_gc_duration_seconds_sum', `kind="${k}"`), n: num('nodejs_gc_duration_seconds_count', `kind="${k}"`) }])),
        http: { s: num('fleetgw_http_request_duration_seconds_sum', route), n: num('fleetgw_http_request_duration_seconds_count', route), over25: num('fleetgw_http_request_duration_seconds_bucket', route, 'le="0.025"') },
        ack: { s: num('fleetgw_command_ack_seconds_sum', 'received'), n: num('fleetgw_command_ack_seconds_count', 'received'), over25: num('fleetgw_command_ack_seconds_bucket', 'le="0.025"', 'outcome="received"') },
      };
    };
    const ms = (x) => Number((x * 1000).toFixed(1));
    const loopOf = (m) => ({ p50: ms(m.loop.p50), p99: ms(m.loop.p99), max: ms(m.loop.max) });
    /** What the gateway saw between two scrapes. */
    const gatewayView = (a, b, s) => ({
      gcMsPerS: Object.fromEntries(Object.keys(b.gc).map((k) => [k, Number(((ms(b.gc[k].s - a.gc[k].s)) / s).toFixed(1))])),
      gcCount: Object.fromEntries(Object.keys(b.gc).map((k) => [k, b.gc[k].n - a.gc[k].n])),
      controlRobotHttp: { n: b.http.n - a.http.n, meanMs: Number((ms(b.http.s - a.http.s) / Math.max(1, b.http.n - a.http.n)).toFixed(2)), over25ms: (b.http.n - a.http.n) - (b.http.over25 - a.http.over25) },
      ackReceived: { n: b.ack.n - a.ack.n, meanMs: Number((ms(b.ack.s - a.ack.s) / Math.max(1, b.ack.n - a.ack.n)).toFixed(2)), over25ms: (b.ack.n - a.ack.n) - (b.ack.over25 - a.ack.over25) },
    });
    /**
     * Where the single stops' time went, from the gateway's trace (src/api/stop-trace.ts) joined with
     * the client's round trips: mean ms per stage, over all stops and over the slowest 1% by round trip.
     * `outsideHandler` is the round trip less the handler's span (the request reaching the handler,
     * the answer leaving it: sockets, the event loop's queue, the client).
     */
    let traceRead = 0;
    const stageSplit = () => {
      let text = '';
      try { text = readFileSync(traceFile, 'utf8'); } catch { return null; }
      const rows = [];
      for (const line of text.slice(traceRead).split('\n')) {
        if (line === '') continue;
        const t = JSON.parse(line);
        const rt = roundTrips.get(t.commandId);
        if (rt === undefined) continue;
        rows.push({
          rt, delivery: deliveredIn.get(t.commandId) ?? NaN, toSent: t.sent - t.start, sentToAck: t.acked - t.sent,
          ackToCommit: t.committed - t.acked, outsideHandler: rt - (t.committed - t.start),
        });
      }
      traceRead = text.length;
      roundTrips.clear();
      deliveredIn.clear();
      if (rows.length === 0) return null;
      const mean = (rs) => Object.fromEntries(['rt', 'delivery', 'toSent', 'sentToAck', 'ackToCommit', 'outsideHandler'].map((k) => {
        const v = rs.map((r) => r[k]).filter((x) => !Number.isNaN(x));
        return [k, Number((v.reduce((a, b) => a + b, 0) / Math.max(1, v.length)).toFixed(2))];
      }));
      rows.sort((a, b) => b.rt - a.rt);
      const slow = rows.slice(0, Math.max(1, Math.floor(rows.length / 100)));
      return { n: rows.length, allMeanMs: mean(rows), slowest1pcMeanMs: mean(slow), slowestN: slow.length };
    };
    const phase = async (name) => {
      const cpu0 = cpuSeconds(gateway.pid);
      const t0 = Date.now();
      const pingBefore = await pingPong(`127.0.0.1:${echo.port}`, 2000, 300);
      // The HTTP floor: an authenticated GET answered from memory by the same gateway.
      const httpGet = await timed(2000, 300, async () => {
        const res = await post('/v1/me');
        return { ok: res.status === 200, detail: res.status };
      });
      // Gateway CPU per request: the whole process (all threads, incl. chdb and the LMDB writer) and
      // its main thread alone (where commands are handled). CPU time is the figure least bent by a
      // loaded machine.
      const cpuPer = async (n, warm, fn) => {
        const c0 = cpuSeconds(gateway.pid);
        const m0 = mainThreadCpuSeconds(gateway.pid);
        const r = await timed(n, warm, fn);
        const per = (s) => Number(((s * 1000) / (n + warm)).toFixed(3));
        return { ...r, gatewayCpuMsPerRequest: per(cpuSeconds(gateway.pid) - c0), mainThreadCpuMsPerRequest: per(mainThreadCpuSeconds(gateway.pid) - m0) };
      };
      deliveries();
      const ms0 = await scrape();
      const ts0 = Date.now();
      const single = await cpuPer(opts.single, Math.min(300, opts.single), stopOne);
      const ms1 = await scrape();
      single.gateway = { loopDelayMs: loopOf(ms1), ...gatewayView(ms0, ms1, (Date.now() - ts0) / 1000) };
      const delivery = deliveries();
      single.stages = stageSplit();
      const bulk = await cpuPer(opts.bulk, Math.min(20, opts.bulk), stopBulk);
      const pingAfter = await pingPong(`127.0.0.1:${echo.port}`, 2000, 300);
      const s = (Date.now() - t0) / 1000;
      const ms2 = await scrape();
      bulk.gateway = { loopDelayMs: loopOf(ms2), ...gatewayView(ms1, ms2, s) };
      const r = {
        name, loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '), pingBefore, httpGet, single, delivery, bulkKind, bulk, pingAfter,
        seconds: s, gatewayCores: Number(((cpuSeconds(gateway.pid) - cpu0) / s).toFixed(2)),
      };
      log(JSON.stringify(r));
      return r;
    };

    if (opts.flood > 0) {
      // Stops only (a), without and with the flood: the stops' key is past its limit at once, which an
      // urgent stop passes by design.
      const stopsNow = () => timed(opts.single, Math.min(300, opts.single), stopOne);
      const quiet = await stopsNow();
      log(JSON.stringify({ name: 'stops, no flood', single: quiet }));
      const flooder = spawnNode([SELF, ...floodRoleArgs(opts, ready.http, floodKey, floodPaths(opts['flood-paths'], init.orgId, init.fleetId))]);
      await flooder.waitJson((o) => o.event === 'flooding', 120_000);
      const cpu0 = cpuSeconds(gateway.pid);
      const t0 = Date.now();
      const flooded = await stopsNow();
      const gatewayCores = Number(((cpuSeconds(gateway.pid) - cpu0) / ((Date.now() - t0) / 1000)).toFixed(2));
      await stopChild(flooder, 'SIGTERM', 30_000);
      const floodDone = flooder.lines.map((l) => { try { return JSON.parse(l); } catch { return null; } }).find((o) => o?.event === 'done');
      const result = {
        machine, client: opts.client, command: `node bench/command-latency.mjs ${process.argv.slice(2).join(' ')}`.trim(),
        flood: { bytes: opts.flood, connections: opts['flood-connections'], rps: opts['flood-rps'], paths: opts['flood-paths'], ...floodDone },
        phases: [{ name: 'stops, no flood', single: quiet }, { name: 'stops, body flood', single: flooded, gatewayCores }],
      };
      console.log(JSON.stringify(result, null, 2));
      if (opts.json !== '') writeFileSync(opts.json, JSON.stringify(result, null, 2));
      lean?.close();
      await stopChild(robotsProc, 'SIGTERM', 10_000);
      return;
    }
    const idle = await phase('no telemetry');
    if (opts.hz === 0) {
      const result = { machine, client: opts.client, command: `node bench/command-latency.mjs ${process.argv.slice(2).join(' ')}`.trim(), phases: [idle] };
      console.log(JSON.stringify(result, null, 2));
      if (opts.json !== '') writeFileSync(opts.json, JSON.stringify(result, null, 2));
      lean?.close();
      await stopChild(robotsProc, 'SIGTERM', 10_000);
      return;
    }
    robotsProc.kill('SIGUSR2');
    await robotsProc.waitJson((o) => o.event === 'hz' && o.hz === opts.hz);
    await sleep(5000); // steady state: ingest batches flowing
    const cpuT0 = cpuSeconds(gateway.pid);
    const tT0 = Date.now();
    await sleep(2000);
    const telemetryOnlyCores = Number(((cpuSeconds(gateway.pid) - cpuT0) / ((Date.now() - tT0) / 1000)).toFixed(2));
    const loaded = await phase(`telemetry ${opts.robots} x ${opts.hz} Hz`);
    // Mixed loads: each its own option, started beside the telemetry, measured as one more phase.
    const mixed = [];
    const loadsCpus = pin(opts['loads-cpus']);
    if (opts['read-hammer'] > 0) {
      const hammer = spawnNode([SELF, '--role', 'hammer', '--http', ready.http, '--api-key', init.apiKey, '--path', `/v1/robots/${r0}`, '--conns', String(opts['read-hammer'])], { cpus: loadsCpus });
      try {
        await hammer.waitJson((o) => o.event === 'ready');
        await sleep(2000);
        const m0 = await markOf(hammer);
        const t0 = Date.now();
        const r = await phase(`telemetry + read hammer (${opts['read-hammer']} connections)`);
        const m1 = await markOf(hammer);
        const s = (Date.now() - t0) / 1000;
        r.readHammer = { connections: opts['read-hammer'], readsPerS: Math.round((m1.ok - m0.ok) / s), non200: m1.bad - m0.bad };
        log(JSON.stringify(r.readHammer));
        mixed.push(r);
      } finally {
        await stopChild(hammer, 'SIGTERM', 10_000);
      }
    }
    if (opts['stream-sockets'] > 0) {
      const subs = spawnNode([join(ROOT, 'bench', 'lib', 'fanout-subscribers.mjs'), '--mode', 'gateway', '--ws', `${ready.http.replace(/^http/, 'ws')}/v1/telemetry/stream`,
        '--http', ready.http, '--api-key', init.apiKey, '--org', init.orgId, '--fleet', init.fleetId, '--robots-file', robotsFile,
        '--subs', String(opts['stream-sockets']), '--robots-per-sub', String(opts['stream-robots-per-sub'])], { cpus: loadsCpus });
      try {
        await subs.waitJson((o) => o.event === 'ready', 120_000);
        await sleep(2000);
        const m0 = await markOf(subs);
        const t0 = Date.now();
        const r = await phase(`telemetry + ${opts['stream-sockets']} stream sockets (${opts['stream-robots-per-sub']} robots each)`);
        const m1 = await markOf(subs);
        const s = (Date.now() - t0) / 1000;
        r.streamSockets = {
          sockets: opts['stream-sockets'], robotsPerSocket: opts['stream-robots-per-sub'], messagesPerS: Math.round((m1.received - m0.received) / s),
          dropped: m1.droppedReading - m0.droppedReading, closed: m1.closedReading, sampleLatencyMs: m1.latency,
        };
        log(JSON.stringify(r.streamSockets));
        mixed.push(r);
      } finally {
        await stopChild(subs, 'SIGTERM', 10_000);
      }
    }
    robotsProc.kill('SIGUSR2');
    const result = {
      machine, client: opts.client, command: `node bench/command-latency.mjs ${process.argv.slice(2).join(' ')}`.trim(),
      robots: opts.robots, hz: opts.hz, cores: { gateway: opts['gateway-cpus'] || 'any', robots: opts['robots-cpus'] || 'any', bench: opts['bench-cpus'] || 'any' },
      phases: [idle, loaded, ...mixed], telemetryOnlyGatewayCores: telemetryOnlyCores,
      degradation: {
        singleP50: Number((loaded.single.p50 / idle.single.p50).toFixed(2)), singleP99: Number((loaded.single.p99 / idle.single.p99).toFixed(2)),
        bulkP50: Number((loaded.bulk.p50 / idle.bulk.p50).toFixed(2)), bulkP99: Number((loaded.bulk.p99 / idle.bulk.p99).toFixed(2)),
      },
    };
    lean?.close();
    await stopChild(robotsProc, 'SIGTERM', 10_000);
    const robotsDone = robotsProc.lines.map((l) => { try { return JSON.parse(l); } catch { return null; } }).find((o) => o?.event === 'done');
    result.robotsFinal = robotsDone?.stats;
    const gw = await stopChild(gateway, 'SIGTERM', 60_000);
    result.gatewayExit = gw;
    console.log(JSON.stringify(result, null, 2));
    log('phase | stop delivery p50 / p99 ms | stop round trip p50 / p99 ms | gateway main-thread CPU ms per stop | gateway cores | loop delay p99 / max ms (20 ms floor) | GC major / minor ms/s | stops > 25 ms: HTTP / ack | loadavg');
    for (const ph of result.phases) {
      const g = ph.single.gateway;
      log(`${ph.name} | ${ph.delivery?.p50} / ${ph.delivery?.p99} | ${ph.single.p50} / ${ph.single.p99} | ${ph.single.mainThreadCpuMsPerRequest} | ${ph.gatewayCores} | ${g.loopDelayMs.p99} / ${g.loopDelayMs.max} | ${g.gcMsPerS.major} / ${g.gcMsPerS.minor} | ${g.controlRobotHttp.over25ms} / ${g.ackReceived.over25ms} | ${ph.loadavg}`);
    }
    log('phase | single stops, mean ms (all / slowest 1%): round trip | delivery | handler to sent | sent to ack | ack to commit | outside the handler');
    for (const ph of result.phases) {
      const st = ph.single.stages;
      if (!st) continue;
      const k = (f) => `${st.allMeanMs[f]} / ${st.slowest1pcMeanMs[f]}`;
      log(`${ph.name} | ${k('rt')} | ${k('delivery')} | ${k('toSent')} | ${k('sentToAck')} | ${k('ackToCommit')} | ${k('outsideHandler')}`);
    }
    if (opts.json !== '') writeFileSync(opts.json, JSON.stringify(result, null, 2));
  } finally {
    if (robotsProc) await stopChild(robotsProc, 'SIGKILL', 1000);
    await stopChild(gateway, 'SIGTERM', 60_000);
    rmSync(dataDir, { recursive: true, force: true });
  }
}
