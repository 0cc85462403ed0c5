// Micro: what a plugin's write scope (src/store/write-scope.ts) costs. The owner's own databases are the
// environment's handles (a write through the scope is the same call); a read of another module's
// database goes through a proxy (one trap and a cached bound method); a write to the shared `meta`
// goes through a proxy whose write checks the key's prefix against the plugin's claims. Measures µs per
// operation: puts inside one write transaction (no commit in the loop) and gets, raw handle vs the scope.
//
//   npm run -s build && node bench/micro/write-scope.mjs [--n 200000] [--rounds 5]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../dist/store/lmdb.js';
import { writeScope } from '../../dist/store/write-scope.js';
import { parseArgs } from '../lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { n: 200_000, rounds: 5 });
const dir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-scope-'));
const store = openStore(dir);
// The claim of the commands plugin (src/gateway/plugins/commands.ts); missions' eight index prefixes are the most one plugin claims.
const commands = writeScope(store, 'commands', { databases: ['commands', 'outbox', 'audit'], prefixes: { meta: ['commandSeq'] } }, { ownerOf: () => 'registry', ownerOfKey: () => undefined });
const missionsPrefixes = ['schedulesByFleet', 'activeSchedules', 'schedulesByTemplate', 'runsByFleet', 'runsByRobot', 'runsBySchedule', 'activeRunsByTemplate', 'activeRuns'];
const missions = writeScope(store, 'missions', { databases: ['schedules', 'fires', 'runs'], prefixes: { index: missionsPrefixes } }, { ownerOf: () => 'registry', ownerOfKey: () => undefined });
const value = { robotId: 'r', state: 'sent', seq: 1 };

/** Best µs per op of each of `a` and `b` (n ops a call), the two alternated `rounds` times so load and warm-up hit both alike. */
function pair(a, b) {
  const min = [Infinity, Infinity];
  for (let r = 0; r < opts.rounds; r++) {
    [a, b].forEach((fn, k) => {
      const t = performance.now();
      fn();
      min[k] = Math.min(min[k], ((performance.now() - t) * 1000) / opts.n);
    });
  }
  return { raw: Number(min[0].toFixed(3)), scoped: Number(min[1].toFixed(3)) };
}
const putAll = (s) => () => s.root.transactionSync(() => {
  for (let i = 0; i < opts.n; i++) s.commands.putSync(`k${i % 1000}`, value);
});
// The command path's seq write (src/commands/seq-counter.ts: `commandSeq/<robotId>` in meta).
const seqKeys = Array.from({ length: 1000 }, (_, i) => `commandSeq/robot-${i}`);
const putSeq = (s) => () => s.root.transactionSync(() => {
  for (let i = 0; i < opts.n; i++) s.meta.putSync(seqKeys[i % 1000], i);
});
// The last of missions' prefixes: the longest scan of one plugin's claims.
const runKeys = Array.from({ length: 1000 }, (_, i) => `activeRuns/run-${i}`);
const putRun = (s) => () => s.root.transactionSync(() => {
  for (let i = 0; i < opts.n; i++) s.index.putSync(runKeys[i % 1000], true);
});
const getSeq = (db) => () => {
  for (let i = 0; i < opts.n; i++) db.get(seqKeys[i % 1000]);
};
const getAll = (db) => () => {
  for (let i = 0; i < opts.n; i++) db.get(`k${i % 1000}`);
};
let out;
try {
  putAll(store)();
  await store.root.transaction(() => {
    for (let i = 0; i < 1000; i++) store.robots.putSync(`k${i}`, value);
  });
  out = {
    ownPutUs: pair(putAll(store), putAll(commands)),
    ownGetUs: pair(getAll(store.commands), getAll(commands.commands)),
    foreignGetUs: pair(getAll(store.robots), getAll(commands.robots)),
    sharedPutUs: pair(putSeq(store), putSeq(commands)),
    sharedPutLastOf8Us: pair(putRun(store), putRun(missions)),
    sharedGetUs: pair(getSeq(store.meta), getSeq(commands.meta)),
  };
} finally {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
console.log(JSON.stringify({
  command: `node bench/micro/write-scope.mjs ${process.argv.slice(2).join(' ')}`.trim(), n: opts.n, ...out,
  loadavg: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
}));
