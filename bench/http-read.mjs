// Benchmark (a): GET /v1/robots/{id} with auth on the real gateway vs a bare uWS handler returning
// the same bytes, in one run, alternating (bare, gateway, bare, gateway, ...) so drift hits both.
// Both servers are pinned to one core, wrk to the other. Usage and figures: bench/README.md#http-read.
//
//   node bench/http-read.mjs [--duration 10] [--connections 50] [--threads 1] [--rounds 2]
//                            [--warmup 2] [--server-cpus 0] [--wrk-cpus 1] [--cpu-prof DIR] [--keep]
// --cpu-prof DIR starts the gateway under `node --cpu-prof` (profile written at its SIGTERM);
// summarize with bench/profile-summary.mjs.
import { spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { runSimFleet } from '../dist/sim/index.js';
import {
  adminJson, busyBetween, cpuSeconds, FLEETGW, machineCpu, machineInfo, parseArgs, ROOT, spawnNode, stopChild, threadCpu,
  threadCpuByName,
} from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), {
  duration: 10, connections: 50, threads: 1, rounds: 2, warmup: 2, 'server-cpus': '0', 'wrk-cpus': '1', 'cpu-prof': '', keep: false,
});

/** Runs wrk pinned to `wrk-cpus`; returns its report line and Requests/sec. */
function runWrk(url, seconds, apiKey) {
  const args = [
    '-c', opts['wrk-cpus'], 'wrk', `-t${opts.threads}`, `-c${opts.connections}`, `-d${seconds}s`,
    '-s', join(ROOT, 'bench', 'lib', 'wrk-report.lua'),
  ];
  if (apiKey) args.push('-H', `Authorization: Bearer ${apiKey}`);
  args.push(url);
  return new Promise((resolve, reject) => {
    const p = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { err += d; });
    p.on('error', reject);
    p.on('exit', (code) => {
      const m = /WRK_JSON (.*)/.exec(out);
      if (code !== 0 || !m) return reject(new Error(`wrk failed (${code}): ${err}${out}`));
      const r = JSON.parse(m[1]);
      r.rps = r.requests / (r.duration_us / 1e6);
      r.non2xx = r.status_errors;
      resolve(r);
    });
  });
}

async function getJson(url, apiKey) {
  const res = await fetch(url, { headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {} });
  return { status: res.status, text: await res.text() };
}

async function main() {
  const machine = machineInfo();
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-http-'));
  let gateway;
  let bare;
  try {
    const init = adminJson(['init', '--data-dir', dataDir, '--org', 'bench', '--fleet', 'bench']);
    const robot = adminJson(['add-robot', '--data-dir', dataDir, '--fleet', init.fleetId, '--name', 'bench-1']);

    const profFlags = opts['cpu-prof'] !== '' ? ['--cpu-prof', `--cpu-prof-dir=${resolve(opts['cpu-prof'])}`] : [];
    // The log (one access line per request) goes to a file, as journald drains a service's stderr
    // promptly: a pipe this busy process reads late makes the gateway retry partial writes and charges
    // that to its CPU (seen: 10 µs per request).
    const logFd = openSync(join(dataDir, 'gateway.log'), 'w');
    gateway = spawnNode([...profFlags, FLEETGW, 'serve', '--data-dir', dataDir, '--port', '0', '--grpc-port', '0', '--insecure-http'], {
      cpus: opts['server-cpus'],
      env: { FLEETGW_RATE_LIMIT_RPS: '100000000', FLEETGW_RATE_LIMIT_BURST: '100000000' },
      stderrFd: logFd,
    });
    closeSync(logFd);
    const ready = await gateway.waitJson((o) => o.event === 'ready', 60_000);
    const robotUrl = `${ready.http}/v1/robots/${robot.robotId}`;

    // Give the robot a telemetry snapshot, so the record served is a full one.
    const sim = runSimFleet({ grpc: ready.grpc, robots: [robot], hz: 10 });
    const deadline = Date.now() + 20_000;
    let record;
    for (;;) {
      await new Promise((r) => setTimeout(r, 250));
      const r = await getJson(robotUrl, init.apiKey);
      if (r.status !== 200) throw new Error(`gateway answered ${r.status}: ${r.text}`);
      record = JSON.parse(r.text);
      if (record.latitude !== null && record.batteryPct !== null) break;
      if (Date.now() > deadline) throw new Error(`no snapshot after 20 s: ${r.text}`);
    }
    await sim.stop();
    const check = await getJson(robotUrl, init.apiKey);
    if (check.status !== 200) throw new Error(`check before: ${check.status}`);
    const body = check.text;
    const bodyFile = join(dataDir, 'robot.json');
    writeFileSync(bodyFile, body);

    bare = spawnNode([join(ROOT, 'bench', 'lib', 'bare-uws.mjs'), bodyFile], { cpus: opts['server-cpus'] });
    const bareReady = await bare.waitJson((o) => o.event === 'ready');
    const bareUrl = `http://127.0.0.1:${bareReady.port}/v1/robots/${robot.robotId}`;
    const bareCheck = await getJson(bareUrl);
    if (bareCheck.status !== 200 || bareCheck.text !== body) throw new Error('bare server check failed');
    const unauth = await getJson(robotUrl);
    if (unauth.status !== 401) throw new Error(`gateway without a key answered ${unauth.status}, expected 401`);

    const targets = [
      { name: 'bare', url: bareUrl, key: null, pid: bare.pid },
      { name: 'gateway', url: robotUrl, key: init.apiKey, pid: gateway.pid },
    ];
    process.stderr.write(`http-read: body ${Buffer.byteLength(body)} B; warm-up ${opts.warmup} s each\n`);
    if (opts.warmup > 0) for (const t of targets) await runWrk(t.url, opts.warmup, t.key);

    const runs = [];
    for (let round = 1; round <= opts.rounds; round++) {
      for (const t of targets) {
        const cpu0 = cpuSeconds(t.pid);
        const threads0 = threadCpu(t.pid);
        const m0 = machineCpu();
        const r = await runWrk(t.url, opts.duration, t.key);
        const m1 = machineCpu();
        const serverCores = (cpuSeconds(t.pid) - cpu0) / (r.duration_us / 1e6);
        const busy = busyBetween(m0, m1);
        // Server CPU per request: robust to other tenants' load (wall-clock req/s is not).
        const serverCpuUsPerRequest = (serverCores * (r.duration_us / 1e6) * 1e6) / Math.max(1, r.requests);
        const threads = threadCpuByName(threads0, threadCpu(t.pid)).slice(0, 6);
        const run = { round, target: t.name, ...r, serverCores, serverCpuUsPerRequest, coreBusy: busy.cpus, serverCpuSecondsByThread: threads };
        runs.push(run);
        process.stderr.write(
          `  round ${round} ${t.name.padEnd(7)} ${r.rps.toFixed(0).padStart(7)} req/s  p50 ${(r.lat_p50_us / 1000).toFixed(2)} ms` +
          `  p99 ${(r.lat_p99_us / 1000).toFixed(2)} ms  non-2xx ${r.non2xx}  server ${serverCores.toFixed(2)} cores,` +
          ` ${serverCpuUsPerRequest.toFixed(1)} us CPU/req` +
          `  core busy ${busy.cpus.map((b) => `${(b * 100).toFixed(0)}%`).join('/')}\n`,
        );
      }
    }
    const after = await getJson(robotUrl, init.apiKey);
    if (after.status !== 200 || JSON.parse(after.text).id !== robot.robotId) throw new Error(`check after: ${after.status}`);

    const sum = (name, f) => runs.filter((r) => r.target === name).reduce((a, r) => a + f(r), 0);
    const rps = (name) => sum(name, (r) => r.requests) / sum(name, (r) => r.duration_us / 1e6);
    const bareRps = rps('bare');
    const gwRps = rps('gateway');
    const gwErrors = sum('gateway', (r) => r.non2xx + r.connect_errors + r.read_errors + r.write_errors + r.timeouts);
    const result = {
      bench: 'http-read',
      machine,
      options: opts,
      bodyBytes: Buffer.byteLength(body),
      bareRps: Math.round(bareRps),
      gatewayRps: Math.round(gwRps),
      ratio: Number((gwRps / bareRps).toFixed(3)),
      perRoundRatios: Array.from({ length: opts.rounds }, (_, i) => {
        const b = runs.find((r) => r.round === i + 1 && r.target === 'bare');
        const g = runs.find((r) => r.round === i + 1 && r.target === 'gateway');
        return Number((g.rps / b.rps).toFixed(3));
      }),
      bareCpuUsPerRequest: Number((sum('bare', (r) => r.serverCpuUsPerRequest * r.requests) / sum('bare', (r) => r.requests)).toFixed(1)),
      gatewayCpuUsPerRequest: Number((sum('gateway', (r) => r.serverCpuUsPerRequest * r.requests) / sum('gateway', (r) => r.requests)).toFixed(1)),
      gatewayNon2xxOrErrors: gwErrors,
      target: 'ratio >= 0.5',
      targetMet: gwRps / bareRps >= 0.5 && gwErrors === 0,
      runs,
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    process.stderr.write(
      `http-read: bare ${result.bareRps} req/s, gateway ${result.gatewayRps} req/s, ratio ${result.ratio}` +
      ` (server CPU per request: bare ${result.bareCpuUsPerRequest} us, gateway ${result.gatewayCpuUsPerRequest} us)` +
      ` (target >= 0.5: ${result.targetMet ? 'met' : 'NOT met'}), gateway errors ${gwErrors}\n`,
    );
    if (gwErrors > 0) process.exitCode = 1;
  } finally {
    if (bare) await stopChild(bare, 'SIGTERM', 5000);
    if (gateway) {
      const { code } = await stopChild(gateway, 'SIGTERM', 30_000);
      if (code !== 0) process.stderr.write(`gateway exited with ${code}: ${gateway.stderrText.slice(-2000)}\n`);
    }
    if (!opts.keep) rmSync(dataDir, { recursive: true, force: true });
    else process.stderr.write(`data dir kept: ${dataDir}\n`);
  }
}

await main();
