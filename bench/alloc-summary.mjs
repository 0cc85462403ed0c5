// Summarizes an allocation profile from bench/lib/alloc-sampler.mjs: bytes allocated per second in
// all, by the function that allocated them (self), and including what the functions they called
// allocated (inclusive, each function counted once per stack).
//
//   node bench/alloc-summary.mjs FILE [--top 25]
import { readFileSync } from 'node:fs';

const args = process.argv.slice(2);
const file = args[0];
const top = args[1] === '--top' ? Number(args[2]) : 25;
if (!file) {
  console.error('usage: node bench/alloc-summary.mjs FILE [--top N]');
  process.exit(2);
}
const { seconds, profile } = JSON.parse(readFileSync(file, 'utf8'));
const name = (n) => `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.split('/').at(-1)}:${n.callFrame.lineNumber + 1}`;
const self = new Map();
const inclusive = new Map();
const add = (m, k, v) => m.set(k, (m.get(k) ?? 0) + v);
/** Walks the tree; returns the bytes allocated at and below `node`. */
function walk(node, onStack) {
  const key = name(node);
  add(self, key, node.selfSize);
  const first = !onStack.has(key);
  if (first) onStack.add(key);
  let total = node.selfSize;
  for (const c of node.children ?? []) total += walk(c, onStack);
  if (first) {
    onStack.delete(key);
    add(inclusive, key, total);
  }
  return total;
}
const total = walk(profile.head, new Set());
const kbs = (b) => `${(b / seconds / 1024).toFixed(1).padStart(8)} KB/s`;
console.log(`${file}: ${kbs(total).trim()} allocated over ${seconds} s`);
for (const [title, m] of [['self', self], ['inclusive', inclusive]]) {
  console.log(`\n${title}:`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${kbs(v)}  ${k}`);
}
