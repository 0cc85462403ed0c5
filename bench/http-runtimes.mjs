// Server CPU per request of `fleetgw serve` on each supported Node and the uWS build it loads, in one
// run, alternating runtimes round by round so drift hits all. GET /v1/robots/{id} with auth, wrk with
// keep-alive connections; the server on one core, wrk on the other; CPU time of the server process
// from /proc (robust to other tenants' load, unlike req/s). Figures: docs/uws-builds.md.
//
//   node bench/http-runtimes.mjs --runtime node20=node --runtime node22=.ci/cache/node-22/bin/node \
//        [--runtime 'node24=chroot:DIR:/opt/node24/bin/node'] [--duration 8] [--rounds 3] [--connections 50]
//
// A `chroot:DIR:NODE` runtime runs NODE inside the root DIR (Debian 13 for Node 24, .ci/debian13-node.sh
// makes one): run the whole script in a mount namespace where DIR has /proc, /dev and the project
// bind-mounted at its own path (the wrapper in docs/uws-builds.md). The data dir is under bench/out so
// both sides see it.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { adminJson, cpuSeconds, FLEETGW, machineInfo, ROOT } from './lib/procs.mjs';

const runtimes = [];
const opts = { duration: 8, rounds: 3, connections: 50, 'server-cpus': '0', 'wrk-cpus': '1' };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i += 2) {
  const key = argv[i].replace(/^--/, '');
  if (key === 'runtime') {
    const [label, spec] = argv[i + 1].split(/=(.*)/s);
    runtimes.push({ label, spec });
  } else opts[key] = typeof opts[key] === 'number' ? Number(argv[i + 1]) : argv[i + 1];
}
if (runtimes.length === 0) throw new Error('give at least one --runtime label=NODE or label=chroot:DIR:NODE');

/** Starts the gateway on one runtime; resolves with its pid and ready line. */
function startGateway({ spec }, dataDir) {
  const args = [FLEETGW, 'serve', '--data-dir', dataDir, '--port', '0', '--grpc-port', '0', '--insecure-http'];
  const cmd = spec.startsWith('chroot:')
    ? (() => { const [, dir, node] = spec.split(':'); return ['chroot', dir, '/usr/bin/env', `PATH=${node.replace(/\/node$/, '')}:/usr/bin:/bin`, 'sh', '-c', `cd ${ROOT} && exec "$@"`, 'sh', node, ...args]; })()
    : [spec, ...args];
  const child = spawn('taskset', ['-c', opts['server-cpus'], ...cmd], {
    cwd: ROOT,
    env: { ...process.env, FLEETGW_RATE_LIMIT_RPS: '100000000', FLEETGW_RATE_LIMIT_BURST: '100000000', FLEETGW_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'ignore'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      for (const line of out.split('\n')) {
        try {
          const msg = JSON.parse(line);
          if (msg.event === 'ready') resolve({ child, ready: msg });
        } catch { /* not yet a line */ }
      }
    });
    child.on('exit', (code) => reject(new Error(`gateway (${spec}) exited ${code} before ready`)));
  });
}

function wrk(url, key, seconds) {
  const args = ['-c', opts['wrk-cpus'], 'wrk', '-t1', `-c${opts.connections}`, `-d${seconds}s`, '-H', `Authorization: Bearer ${key}`, url];
  return new Promise((resolve, reject) => {
    const p = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.stderr.on('data', (d) => { out += d; });
    p.on('exit', (code) => {
      const total = /(\d+) requests in/.exec(out);
      const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(out);
      if (code !== 0 || !total) return reject(new Error(`wrk failed (${code}) on ${url}: ${out}`));
      resolve({ requests: Number(total[1]), non2xx: Number(non2xx?.[1] ?? 0) });
    });
  });
}

const outDir = join(ROOT, 'bench', 'out');
mkdirSync(outDir, { recursive: true });
const base = mkdtempSync(join(outDir, 'http-runtimes-'));
const running = [];
try {
  for (const [i, rt] of runtimes.entries()) {
    const dataDir = join(base, `gw${i}`);
    const init = adminJson(['init', '--data-dir', dataDir, '--org', 'bench', '--fleet', 'bench']);
    const robot = adminJson(['add-robot', '--data-dir', dataDir, '--fleet', init.fleetId, '--name', 'bench-1']);
    const { child, ready } = await startGateway(rt, dataDir);
    running.push({ ...rt, child, url: `${ready.http}/v1/robots/${robot.robotId}`, key: init.apiKey, uws: ready.uws, samples: [] });
  }
  for (const r of running) await wrk(r.url, r.key, 2);
  for (let round = 1; round <= opts.rounds; round++) {
    for (const r of running) {
      const cpu0 = cpuSeconds(r.child.pid);
      const w = await wrk(r.url, r.key, opts.duration);
      const cpu = cpuSeconds(r.child.pid) - cpu0;
      if (w.non2xx > 0) throw new Error(`${r.label}: ${w.non2xx} non-2xx answers`);
      r.samples.push({ requests: w.requests, cpu });
      process.stderr.write(`round ${round} ${r.label.padEnd(8)} ${(w.requests / opts.duration).toFixed(0).padStart(7)} req/s  ${((cpu / w.requests) * 1e6).toFixed(2)} us CPU/req\n`);
    }
  }
  const machine = machineInfo();
  for (const r of running) {
    const req = r.samples.reduce((a, s) => a + s.requests, 0);
    const cpu = r.samples.reduce((a, s) => a + s.cpu, 0);
    const perRound = r.samples.map((s) => ((s.cpu / s.requests) * 1e6).toFixed(2));
    console.log(JSON.stringify({ runtime: r.label, uws: r.uws, requests: req, cpuUsPerRequest: Number(((cpu / req) * 1e6).toFixed(2)), perRound, nproc: machine.nproc, date: machine.date }));
  }
} finally {
  for (const r of running) r.child.kill('SIGTERM');
  await new Promise((res) => setTimeout(res, 1500));
  for (const r of running) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
}
