// What writing to a ClickHouse cluster costs, against one server, in the same run.
// Starts Debian's ZooKeeper and two clickhouse-server shards (ReplicatedMergeTree + Distributed, what
// `fleetgw serve --clickhouse-cluster` creates) and a standalone server (the single-server store), then
// drives the gateway's own stores (dist/telemetry) with identical RowBinary blocks:
//   (a) blocks of --rows rows (--robots robots), sequentially: wall time per block, gateway CPU per row
//       (the split by shard included), server CPU per row (all shards), ZooKeeper CPU per block;
//   (b) small blocks (--small-rows) as fast as 2 in flight go for --seconds: inserts/s, the part rate
//       a shard can take (each insert is a part).
// Figures: bench/README.md#clickhouse-cluster-inserts, docs/scale-out.md.
//
//   npm run build && node bench/cluster-insert.mjs [--rows 20000] [--robots 200] [--blocks 30] [--small-rows 1000] [--seconds 15]
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startClickHouse } from './lib/clickhouse-server.mjs';
import { cpuSeconds, machineInfo, parseArgs, ROOT } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { rows: 20_000, robots: 200, blocks: 30, 'small-rows': 1_000, seconds: 15 });
const dist = (p) => import(join(ROOT, 'dist', p));
const { ByteWriter } = await dist('telemetry/byte-writer.js');
const { writeRowFromValues } = await dist('telemetry/row-rowbinary.js');
const { SAMPLE_FIELDS } = await dist('telemetry/sample-table.js');
const { openClickHouseStore } = await dist('telemetry/clickhouse-store.js');
const { openClickHouseClusterStore } = await dist('telemetry/clickhouse-cluster-store.js');

function fourLetter(port, word) {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let out = '';
    s.setTimeout(1000, () => s.destroy());
    s.on('connect', () => s.write(word));
    s.on('data', (d) => { out += d; });
    s.on('close', () => resolve(out));
    s.on('error', () => resolve(''));
  });
}

async function startZooKeeper() {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-zk-'));
  const port = await freePort();
  writeFileSync(join(dir, 'zoo.cfg'), `tickTime=2000\ndataDir=${dir}/data\nclientPort=${port}\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n4lw.commands.whitelist=ruok\n`);
  const proc = spawn('/usr/bin/java', ['-Xmx256m', '-cp', '/usr/share/java/zookeeper.jar', 'org.apache.zookeeper.server.ZooKeeperServerMain', join(dir, 'zoo.cfg')], { stdio: 'ignore' });
  process.once('exit', () => proc.kill('SIGKILL'));
  const deadline = Date.now() + 30_000;
  while ((await fourLetter(port, 'ruok')) !== 'imok') {
    if (Date.now() > deadline) throw new Error('ZooKeeper did not start');
    await new Promise((r) => setTimeout(r, 200));
  }
  return { port, pid: proc.pid, dispose: async () => { proc.kill('SIGKILL'); await new Promise((r) => proc.once('exit', r)); rmSync(dir, { recursive: true, force: true }); } };
}

/** Distinct rows per block (ts moves on), `robots` robots in runs, as the decode workers write them. */
let tsBase = 1_700_000_000_000;
function block(rows, robots) {
  const w = new ByteWriter(rows * 200);
  const per = Math.max(1, Math.floor(rows / robots));
  for (let r = 0; r < robots; r++) {
    for (let i = 0; i < per; i++) {
      const ts = tsBase + i * 10;
      const v = {};
      for (const f of SAMPLE_FIELDS) {
        v[f.column] = f.column === 'robot_id' ? `bench-robot-${r}` : f.rowType === 'String' ? 'x' : f.rowType === 'Int64' ? ts
          : f.rowType === 'UInt8' ? false : f.rowType === 'Array(String)' ? [] : f.rowType === 'Enum8' ? 1 : 1.5;
      }
      writeRowFromValues(w, v);
    }
  }
  tsBase += per * 10 + 1_000;
  return { bytes: w.copyOut(), rows: per * robots };
}

async function measure(name, store, serverPids, zkPid) {
  const blocks = Array.from({ length: opts.blocks }, () => block(opts.rows, opts.robots));
  const cpu0 = process.cpuUsage();
  const srv0 = serverPids.map(cpuSeconds);
  const zk0 = zkPid ? cpuSeconds(zkPid) : 0;
  const ms = [];
  let rows = 0;
  for (const [i, b] of blocks.entries()) {
    const t = performance.now();
    await store.insert([b.bytes], b.bytes.length, b.rows, `${name}-${i}`);
    ms.push(performance.now() - t);
    rows += b.rows;
  }
  const cpu = process.cpuUsage(cpu0);
  const srv = serverPids.map(cpuSeconds).reduce((a, c, i) => a + c - srv0[i], 0);
  ms.sort((a, b) => a - b);
  // Small blocks, 2 in flight, for --seconds: the insert (part) rate.
  const end = Date.now() + opts.seconds * 1000;
  let inserts = 0;
  let n = 0;
  const small = () => block(opts['small-rows'], 10);
  await Promise.all([0, 1].map(async () => {
    while (Date.now() < end) {
      const b = small();
      await store.insert([b.bytes], b.bytes.length, b.rows, `${name}-s${n++}`);
      inserts++;
    }
  }));
  return {
    store: name,
    rowsPerBlock: blocks[0].rows,
    blockMsP50: +ms[Math.floor(ms.length / 2)].toFixed(1),
    blockMsMax: +ms[ms.length - 1].toFixed(1),
    gatewayUsPerRow: +(((cpu.user + cpu.system) / rows)).toFixed(3),
    serverUsPerRow: +((srv * 1e6) / rows).toFixed(3),
    zkCpuMsPerBlock: zkPid ? +(((cpuSeconds(zkPid) - zk0) * 1e3) / (blocks.length + inserts)).toFixed(2) : null,
    smallInsertsPerS: +(inserts / opts.seconds).toFixed(1),
    smallRows: opts['small-rows'],
  };
}

const info = machineInfo();
const zk = await startZooKeeper();
const name = 'bench';
const ports = [];
for (let i = 0; i < 2; i++) ports.push({ http: await freePort(), tcp: await freePort() });
const remote = `<remote_servers><${name}>${ports.map((p) => `<shard><weight>1</weight><internal_replication>true</internal_replication><replica><host>127.0.0.1</host><port>${p.tcp}</port></replica></shard>`).join('')}</${name}></remote_servers>`;
const shards = [];
for (let i = 0; i < 2; i++) {
  shards.push(await startClickHouse({
    ports: ports[i],
    extraConfigXml: `${remote}<zookeeper><node><host>127.0.0.1</host><port>${zk.port}</port></node></zookeeper><macros><shard>0${i + 1}</shard><replica>r1</replica></macros><interserver_http_port>${await freePort()}</interserver_http_port><interserver_http_host>127.0.0.1</interserver_http_host>`,
  }));
}
const single = await startClickHouse();
const results = [];
try {
  const s1 = await openClickHouseStore({ url: `${single.url}/bench` });
  results.push(await measure('single server (MergeTree)', s1, [single.pid], null));
  await s1.close();
  const c = await openClickHouseClusterStore({ url: `${shards[0].url}/bench`, cluster: name, shardUrls: shards.map((s) => s.url) });
  results.push(await measure('cluster, 2 shards (ReplicatedMergeTree, ZooKeeper)', c, shards.map((s) => s.pid), zk.pid));
  await c.close();
} finally {
  for (const s of [...shards, single]) await s.dispose();
  await zk.dispose();
}
console.log(JSON.stringify({ ...info, loadavgAfter: machineInfo().loadavg, opts, results }, null, 2));
