// Child-process plumbing shared by the benchmarks: spawn with optional CPU pinning, wait for a JSON
// line, read a process's CPU time from /proc, and kill every child on exit or error.
import { spawn, execFileSync } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FLEETGW = join(ROOT, 'bin', 'fleetgw.js');

const children = new Set();
let hooked = false;

function killAll() {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) {
      try { c.kill('SIGKILL'); } catch { /* already gone */ }
    }
  }
}

function hookExit() {
  if (hooked) return;
  hooked = true;
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM']) {
    process.on(sig, () => { killAll(); process.exit(130); });
  }
  process.on('uncaughtException', (e) => { console.error(e); killAll(); process.exit(1); });
  process.on('unhandledRejection', (e) => { console.error(e); killAll(); process.exit(1); });
}

/**
 * Spawns `node args...`, pinned with `taskset -c cpus` when `cpus` is given (taskset execs node, so
 * the pid is node's). stdout lines are kept in `child.lines`; stderr goes to `child.stderrText`, or to
 * the open file descriptor `stderrFd` (a file never blocks the child's synchronous log writes, as a pipe
 * the parent drains late can).
 */
export function spawnNode(args, { cpus, env, cwd = ROOT, stderrFd } = {}) {
  hookExit();
  const cmd = cpus !== undefined && cpus !== null ? 'taskset' : process.execPath;
  const argv = cpus !== undefined && cpus !== null ? ['-c', String(cpus), process.execPath, ...args] : args;
  const child = spawn(cmd, argv, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', stderrFd ?? 'pipe'] });
  children.add(child);
  child.lines = [];
  child.stderrText = '';
  const waiters = [];
  // Lines that are not JSON (a V8 --trace-gc line, a stray print) are not kept with the child's
  // reports; BENCH_TEXT_LOG=<file> appends them there for diagnosis.
  const textLog = process.env.BENCH_TEXT_LOG;
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (!line.startsWith('{')) {
      if (textLog) appendFileSync(textLog, `${child.pid} ${line}\n`);
      return;
    }
    child.lines.push(line);
    for (const w of [...waiters]) w(line);
  });
  child.stderr?.on('data', (d) => {
    child.stderrText += d.toString();
    if (child.stderrText.length > 1e6) child.stderrText = child.stderrText.slice(-5e5);
  });
  child.exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    children.delete(child);
    resolve({ code, signal });
  }));
  /** Resolves with the first stdout JSON object for which `pred` is true (also past lines). */
  child.waitJson = (pred, timeoutMs = 30_000) => new Promise((resolve, reject) => {
    const test = (line) => {
      let obj;
      try { obj = JSON.parse(line); } catch { return false; }
      if (!pred(obj)) return false;
      clearTimeout(t);
      waiters.splice(waiters.indexOf(test), 1);
      resolve(obj);
      return true;
    };
    const t = setTimeout(() => {
      waiters.splice(waiters.indexOf(test), 1);
      reject(new Error(`timeout waiting for a line from pid ${child.pid}; stderr: ${child.stderrText.slice(-2000)}`));
    }, timeoutMs);
    waiters.push(test);
    for (const l of child.lines) if (test(l)) return;
    void child.exited.then(({ code, signal }) => {
      if (waiters.includes(test)) {
        clearTimeout(t);
        waiters.splice(waiters.indexOf(test), 1);
        reject(new Error(`pid ${child.pid} exited (${code ?? signal}) first; stderr: ${child.stderrText.slice(-2000)}`));
      }
    });
  });
  return child;
}

/** Sends `signal` and waits for the exit (SIGKILL after `timeoutMs`). */
export async function stopChild(child, signal = 'SIGTERM', timeoutMs = 60_000) {
  if (child.exitCode !== null || child.signalCode !== null) return child.exited;
  child.kill(signal);
  const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const r = await child.exited;
  clearTimeout(t);
  return r;
}

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;

/** utime+stime of a process (all its threads) in seconds, from /proc/<pid>/stat. */
export function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the ")" of comm: state is field 3, utime 14, stime 15 (1-based).
  const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(rest[11]) + Number(rest[12])) / CLK_TCK;
}

/**
 * Busy and total CPU seconds from /proc/stat: `all` for the machine, `cpus[i]` per core. Busy time
 * of a core over an interval, minus what our processes used, is what other tenants took.
 */
export function machineCpu() {
  const parse = (line) => {
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    return { busy: (total - f[3] - f[4]) / CLK_TCK, total: total / CLK_TCK };
  };
  const lines = readFileSync('/proc/stat', 'utf8').split('\n');
  return { all: parse(lines[0]), cpus: lines.filter((l) => /^cpu\d/.test(l)).map(parse) };
}

/** Busy fraction (0..1 per core) between two machineCpu() readings. */
export function busyBetween(a, b) {
  const f = (x, y) => (y.total - x.total > 0 ? (y.busy - x.busy) / (y.total - x.total) : 0);
  return { all: f(a.all, b.all), cpus: b.cpus.map((c, i) => f(a.cpus[i], c)) };
}

/** Runs `fleetgw admin ... --json` and returns the parsed answer. */
export function adminJson(args) {
  return JSON.parse(execFileSync(process.execPath, [FLEETGW, 'admin', ...args, '--json'], { cwd: ROOT }).toString());
}

/** Facts the README asks for with every figure. */
export function machineInfo() {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  const model = /model name\s*:\s*(.*)/.exec(cpuinfo)?.[1] ?? 'unknown';
  return {
    date: new Date().toISOString(),
    nproc: Number(execFileSync('nproc').toString().trim()),
    cpuModel: model,
    node: process.version,
    loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  };
}

/** Minimal `--name value` / `--flag` parser over defaults (numbers stay numbers). */
export function parseArgs(argv, defaults) {
  const out = { ...defaults };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('--')) throw new Error(`unexpected argument ${a}`);
    const key = a.slice(2);
    if (!(key in defaults)) throw new Error(`unknown option ${a}; options: ${Object.keys(defaults).map((k) => `--${k}`).join(' ')}`);
    if (typeof defaults[key] === 'boolean') { out[key] = true; continue; }
    const v = argv[++i];
    if (v === undefined) throw new Error(`${a} needs a value`);
    out[key] = typeof defaults[key] === 'number' ? Number(v) : v;
    if (typeof defaults[key] === 'number' && !Number.isFinite(out[key])) throw new Error(`${a} must be a number`);
  }
  return out;
}

/** CPU seconds per thread of a process: Map tid -> {name, cpu} from /proc/<pid>/task/<tid>/stat. */
export function threadCpu(pid) {
  const out = new Map();
  let tids = [];
  try { tids = readdirSync(`/proc/${pid}/task`); } catch { return out; }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      // The main thread shares its name ("node") with workers and libuv threads: tell it apart.
      const name = tid === String(pid) ? 'main thread' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { name, cpu: (Number(rest[11]) + Number(rest[12])) / CLK_TCK });
    } catch { /* thread ended */ }
  }
  return out;
}

/**
 * CPU seconds used between two threadCpu() readings, summed by thread name with digits folded
 * (e.g. all "QueryPipelineEx" threads together), largest first. Threads that ended in between are
 * not counted (their time is in the process total only).
 */
export function threadCpuByName(a, b) {
  const sums = new Map();
  for (const [tid, t] of b) {
    const used = t.cpu - (a.get(tid)?.cpu ?? 0);
    const key = t.name.replace(/\d+/g, '#');
    sums.set(key, (sums.get(key) ?? 0) + used);
  }
  return [...sums].filter(([, v]) => v > 0).sort((x, y) => y[1] - x[1]).map(([name, cpuS]) => ({ name, cpuS: Number(cpuS.toFixed(2)) }));
}

/** Resident set size of a process in bytes (VmRSS from /proc/<pid>/status); 0 when it is gone. */
export function rssBytes(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds between two threadCpu() readings of the gateway, grouped by role:
 * - main: the main thread (tid = pid);
 * - decode: the decode workers (tids from the ingest's stats, `decodeThreadIds`);
 * - v8Platform: threads that existed before the gateway loaded anything (V8's platform workers: GC
 *   helper tasks and concurrent compilation), given as `startupTids` by bench/lib/gateway-child.mjs;
 * - otherNode: the remaining threads named "node" (libuv's pool: chdb queries, spool writes; lmdb);
 * - named: threads with their own names (chdb's engine threads), by name with digits folded.
 */
export function threadGroups(pid, a, b, { startupTids = [], decodeTids = [] } = {}) {
  const startup = new Set(startupTids.map(String));
  const decode = new Set(decodeTids.map(String));
  const groups = { main: 0, decode: 0, v8Platform: 0, otherNode: 0, named: 0 };
  const named = new Map();
  for (const [tid, t] of b) {
    const used = t.cpu - (a.get(tid)?.cpu ?? 0);
    if (tid === String(pid)) groups.main += used;
    else if (decode.has(tid)) groups.decode += used;
    else if (startup.has(tid)) groups.v8Platform += used;
    else if (t.name === 'node') groups.otherNode += used;
    else {
      groups.named += used;
      const key = t.name.replace(/\d+/g, '#');
      named.set(key, (named.get(key) ?? 0) + used);
    }
  }
  for (const k of Object.keys(groups)) groups[k] = Number(groups[k].toFixed(2));
  return {
    ...groups,
    namedByName: [...named].filter(([, v]) => v > 0.005).sort((x, y) => y[1] - x[1]).map(([name, cpuS]) => ({ name, cpuS: Number(cpuS.toFixed(2)) })),
  };
}
