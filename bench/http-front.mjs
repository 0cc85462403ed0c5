// What per-request cost the answers to uWS's own protocol errors add
// (docs/http-hardening.md): server CPU per request, from /proc, for a bare uWS app (`bare`), the same with
// the head deadline the gateway runs (`deadline`), and the bare app behind the cheapest front TCP layer
// in Node (`proxy`: bytes piped both ways, no parsing). Keep-alive connections and a new connection per
// request (`Connection: close`; wrk then counts a read error per request, the server's close, so only
// status errors and timeouts are reported). Servers pinned to one core, wrk to the other; modes alternate each round.
//
//   node bench/http-front.mjs [--duration 5] [--rounds 3] [--connections 50] [--server-cpus 0] [--wrk-cpus 1]
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { cpuSeconds, parseArgs, ROOT, spawnNode, stopChild } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { duration: 5, rounds: 3, connections: 50, 'server-cpus': '0', 'wrk-cpus': '1' });
const MODES = ['bare', 'deadline', 'proxy'];

function wrk(url, close) {
  const args = ['-c', opts['wrk-cpus'], 'wrk', '-t1', `-c${opts.connections}`, `-d${opts.duration}s`, '-s', join(ROOT, 'bench', 'lib', 'wrk-report.lua')];
  if (close) args.push('-H', 'Connection: close');
  args.push(url);
  return new Promise((resolve, reject) => {
    const p = spawn('taskset', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    p.stdout.on('data', (d) => { out += d; });
    p.on('error', reject);
    p.on('exit', () => {
      const m = /WRK_JSON (.*)/.exec(out);
      if (!m) reject(new Error(`wrk failed: ${out}`));
      else resolve(JSON.parse(m[1]));
    });
  });
}

const results = [];
for (let round = 0; round < opts.rounds; round++) {
  const order = round % 2 === 0 ? MODES : [...MODES].reverse();
  for (const mode of order) {
    for (const close of [false, true]) {
      const child = spawnNode([join(ROOT, 'bench', 'lib', 'front-server.mjs'), mode], { cpus: opts['server-cpus'] });
      const { port } = await child.waitJson((j) => typeof j.port === 'number');
      const url = `http://127.0.0.1:${port}/v1/robots/x`;
      await wrk(url, close); // warm-up, same length
      const cpu0 = cpuSeconds(child.pid);
      const r = await wrk(url, close);
      const cpu = cpuSeconds(child.pid) - cpu0;
      await stopChild(child);
      const row = {
        round, mode, connection: close ? 'close' : 'keep-alive', requests: r.requests, reqPerS: Math.round(r.requests / (r.duration_us / 1e6)),
        cpuUsPerReq: Number(((cpu * 1e6) / r.requests).toFixed(2)), statusErrors: r.status_errors, timeouts: r.timeouts,
      };
      results.push(row);
      console.log(JSON.stringify(row));
    }
  }
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
for (const connection of ['keep-alive', 'close']) {
  for (const mode of MODES) {
    const rows = results.filter((x) => x.mode === mode && x.connection === connection);
    console.log(`${connection.padEnd(10)} ${mode.padEnd(8)} CPU us/req median ${median(rows.map((x) => x.cpuUsPerReq))} [${Math.min(...rows.map((x) => x.cpuUsPerReq))}-${Math.max(...rows.map((x) => x.cpuUsPerReq))}]  req/s median ${median(rows.map((x) => x.reqPerS))}`);
  }
}
