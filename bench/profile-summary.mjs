// Summarizes V8 .cpuprofile files (from `node --cpu-prof`): top functions by self time, and self
// time grouped by source (our dist/ files, each node_modules package, node internals, GC, idle).
//
//   node bench/profile-summary.mjs FILE_OR_DIR... [--top 25]
// A directory means every .cpuprofile in it (one per thread: the main thread and each worker).
// Waiting counts as idle: V8's "(idle)" and piscina's atomicsWaitLoop (a worker blocked in
// Atomics.wait for its next task: on the stack, but not using the CPU).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT } from './lib/procs.mjs';

const args = process.argv.slice(2);
let top = 25;
const files = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--top') top = Number(args[++i]);
  else if (statSync(args[i]).isDirectory()) {
    for (const f of readdirSync(args[i]).sort()) if (f.endsWith('.cpuprofile')) files.push(join(args[i], f));
  } else files.push(args[i]);
}
if (files.length === 0) {
  console.error('usage: node bench/profile-summary.mjs FILE_OR_DIR... [--top N]');
  process.exit(2);
}

/** Where a frame's code lives, coarse enough to sum: dist/<area>/<file>, a package, node:..., or (gc). */
function source(url, fn) {
  if (!url) return fn.startsWith('(') ? fn : '(native)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = url.slice(nm + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  if (url.startsWith('node:')) return url;
  const path = url.replace(/^file:\/\//, '');
  return path.startsWith(ROOT) ? relative(ROOT, path) : path;
}

const IDLE = new Set(['(idle)', 'atomicsWaitLoop']);

function summarize(file) {
  const prof = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const selfUs = new Map();
  for (let i = 0; i < prof.samples.length; i++) {
    selfUs.set(prof.samples[i], (selfUs.get(prof.samples[i]) ?? 0) + (prof.timeDeltas[i] ?? 0));
  }
  const fns = new Map();
  const srcs = new Map();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const { callFrame: cf } = byId.get(id);
    const name = cf.functionName || '(anonymous)';
    total += us;
    if (IDLE.has(name)) idle += us;
    const src = source(cf.url, name);
    const key = `${name}  ${src}${cf.url ? `:${cf.lineNumber + 1}` : ''}`;
    fns.set(key, (fns.get(key) ?? 0) + us);
    srcs.set(src, (srcs.get(src) ?? 0) + us);
  }
  const busy = total - idle;
  const pct = (us) => `${((100 * us) / Math.max(1, busy)).toFixed(1).padStart(5)}%`;
  const ms = (us) => `${(us / 1000).toFixed(0).padStart(7)} ms`;
  console.log(`\n== ${relative(process.cwd(), file)}: ${(total / 1e6).toFixed(1)} s profiled, ${(busy / 1e6).toFixed(1)} s busy (not idle); % of busy`);
  console.log('-- by source');
  // A source's share excludes its idle frames (piscina's wait loop).
  const idleIn = (k) => [...fns].filter(([f]) => f.startsWith('atomicsWaitLoop  ') && f.includes(`  ${k}:`)).reduce((a, [, x]) => a + x, 0);
  const busyBySrc = [...srcs].filter(([k]) => k !== '(idle)').map(([k, v]) => [k, v - idleIn(k)]).filter(([, v]) => v > 0);
  for (const [k, v] of busyBySrc.sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${ms(v)} ${pct(v)}  ${k}`);
  console.log(`-- top ${top} functions by self time`);
  for (const [k, v] of [...fns].filter(([k]) => !IDLE.has(k.split('  ')[0])).sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${ms(v)} ${pct(v)}  ${k}`);
}

for (const f of files) summarize(f);
