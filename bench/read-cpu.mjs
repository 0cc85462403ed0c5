// Benchmark: gateway CPU per authenticated REST read (GET /v1/robots/{id}, access log on, written to
// a file as journald would drain it), beside a bare uWS server answering the same bytes and, with
// --base, the same read on another build (a `git worktree` of an earlier commit, built). Rounds
// alternate between the targets (bare, head, base, bare, head, base, ...) so drift on a shared machine
// hits each alike. The load is a closed loop of --conns keep-alive connections from another process
// (command-latency.mjs's read hammer). CPU is read from /proc/<pid>/stat (whole process) and
// /proc/<pid>/task/<pid>/stat (main thread); CPU per read is the figure to compare, not reads/s.
//
//   npm run build && node bench/read-cpu.mjs [--base /path/to/other/checkout] [--conns 8]
//       [--seconds 10] [--rounds 3] [--cpu-prof DIR] [--json FILE]
// --cpu-prof DIR runs the head gateway under `node --cpu-prof` (summarize with bench/profile-summary.mjs);
// the profiler's own cost then inflates head's figures, so take CPU per read from a run without it.
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { adminJson, cpuSeconds, FLEETGW, machineInfo, parseArgs, ROOT, spawnNode, stopChild } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { base: '', conns: 8, seconds: 10, rounds: 3, 'cpu-prof': '', json: '' });
const HAMMER = join(ROOT, 'bench', 'command-latency.mjs');
const log = (s) => process.stderr.write(`${s}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const clk = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

function mainThreadCpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / clk;
}

async function markOf(child) {
  const before = child.lines.length;
  child.kill('SIGUSR1');
  for (const t0 = Date.now(); Date.now() - t0 < 10_000; await sleep(10)) {
    for (let i = before; i < child.lines.length; i++) {
      const o = JSON.parse(child.lines[i]);
      if (o.event === 'mark') return o;
    }
  }
  throw new Error(`no mark from ${child.pid}`);
}

/** Starts one gateway from `fleetgw` (a checkout's bin/fleetgw.js) with a key and a robot. */
async function gatewayFrom(name, fleetgw, dirs, nodeFlags = []) {
  const dataDir = mkdtempSync(join(tmpdir(), `fleetgw-bench-read-${name}-`));
  dirs.push(dataDir);
  const init = adminJson(['init', '--data-dir', dataDir, '--org', 'bench', '--fleet', 'bench']);
  const robot = adminJson(['add-robot', '--data-dir', dataDir, '--fleet', init.fleetId, '--name', 'bench-1']);
  const logFd = openSync(join(dataDir, 'gateway.log'), 'w');
  const gw = spawnNode([...nodeFlags, fleetgw, 'serve', '--data-dir', dataDir, '--host', '127.0.0.1', '--port', '0', '--grpc-port', '0', '--insecure-http'], {
    env: { FLEETGW_RATE_LIMIT_RPS: '100000000', FLEETGW_RATE_LIMIT_BURST: '100000000' },
    stderrFd: logFd,
  });
  closeSync(logFd);
  const ready = await gw.waitJson((o) => o.event === 'ready', 60_000);
  const path = `/v1/robots/${robot.robotId}`;
  const res = await fetch(`${ready.http}${path}`, { headers: { authorization: `Bearer ${init.apiKey}` } });
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${name}: ${res.status} ${body}`);
  return { name, proc: gw, pid: gw.pid, http: ready.http, apiKey: init.apiKey, path, body, dataDir };
}

const dirs = [];
const targets = [];
try {
  const machine = machineInfo();
  const prof = opts['cpu-prof'] !== '' ? ['--cpu-prof', `--cpu-prof-dir=${resolve(opts['cpu-prof'])}`] : [];
  const head = await gatewayFrom('head', FLEETGW, dirs, prof);
  targets.push(head);
  if (opts.base !== '') targets.push(await gatewayFrom('base', join(resolve(opts.base), 'bin', 'fleetgw.js'), dirs));
  const bodyFile = join(head.dataDir, 'robot.json');
  writeFileSync(bodyFile, head.body);
  const bare = spawnNode([join(ROOT, 'bench', 'lib', 'bare-uws.mjs'), bodyFile]);
  const bareReady = await bare.waitJson((o) => o.event === 'ready');
  targets.unshift({ name: 'bare uWS', proc: bare, pid: bare.pid, http: `http://127.0.0.1:${bareReady.port}`, apiKey: 'none', path: head.path });

  const runs = [];
  for (let round = 1; round <= opts.rounds; round++) {
    for (const t of targets) {
      const hammer = spawnNode([HAMMER, '--role', 'hammer', '--http', t.http, '--api-key', t.apiKey, '--path', t.path, '--conns', String(opts.conns)]);
      try {
        await hammer.waitJson((o) => o.event === 'ready');
        await sleep(1000);
        const m0 = await markOf(hammer);
        const c0 = cpuSeconds(t.pid);
        const mt0 = mainThreadCpuSeconds(t.pid);
        const t0 = Date.now();
        await sleep(opts.seconds * 1000);
        const m1 = await markOf(hammer);
        const c1 = cpuSeconds(t.pid);
        const mt1 = mainThreadCpuSeconds(t.pid);
        const s = (Date.now() - t0) / 1000;
        const reads = m1.ok - m0.ok;
        const r = {
          round, target: t.name, readsPerS: Math.round(reads / s), non200: m1.bad - m0.bad,
          cpuUsPerRead: Number((((c1 - c0) * 1e6) / reads).toFixed(2)), mainThreadCpuUsPerRead: Number((((mt1 - mt0) * 1e6) / reads).toFixed(2)),
          serverCores: Number(((c1 - c0) / s).toFixed(2)), loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
        };
        runs.push(r);
        log(JSON.stringify(r));
      } finally {
        await stopChild(hammer, 'SIGTERM', 10_000);
      }
    }
  }
  const byTarget = {};
  for (const t of targets) {
    const rs = runs.filter((r) => r.target === t.name);
    const med = (f) => rs.map(f).sort((a, b) => a - b)[Math.floor(rs.length / 2)];
    byTarget[t.name] = { cpuUsPerReadMedian: med((r) => r.cpuUsPerRead), mainThreadCpuUsPerReadMedian: med((r) => r.mainThreadCpuUsPerRead), readsPerSMedian: med((r) => r.readsPerS) };
  }
  const result = { machine, command: `node bench/read-cpu.mjs ${process.argv.slice(2).join(' ')}`.trim(), conns: opts.conns, seconds: opts.seconds, runs, byTarget };
  console.log(JSON.stringify(result, null, 2));
  if (opts.json !== '') writeFileSync(opts.json, JSON.stringify(result, null, 2));
} finally {
  for (const t of targets) await stopChild(t.proc, 'SIGTERM', 30_000);
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
}
