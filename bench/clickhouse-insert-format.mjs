// Benchmark (telemetry target 1: bench/notes/telemetry-ingest.md): what a ClickHouse server spends per row on the gateway's inserts
// as RowBinary (the baseline: what the decoders write) and as Native (native-insert.ts: the same rows
// converted by the addon), and what the conversion costs the gateway.
//
// Starts a private clickhouse-server (bench/lib/clickhouse-server.mjs), creates the gateway's table
// (telemetry/schema/samples.<flavor>.sql, through the store the gateway opens), makes --blocks x --rows
// rows (--robots robots interleaved, a sample per robot per ms, values that move like a robot's) and
// exports them as RowBinary blocks, the shape the insert queue sends at peak load. Then, alternated
// --reps times: a fresh table, every block inserted one after the other as RowBinary, or converted to
// Native by the addon and inserted so. Per round: the server's CPU per row (from /proc) for the inserts
// and until its merges have settled, the wall time, and for Native this process's CPU per row spent
// converting (the conversion runs on libuv threads: process.cpuUsage counts them).
//
//   node bench/clickhouse-insert-format.mjs [--blocks 10] [--rows 200000] [--robots 401] [--reps 3]
// Needs `npm run build` and `npm run build:native`. Figures: bench/README.md#clickhouse-insert-formats.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startClickHouse } from './lib/clickhouse-server.mjs';
import { machineInfo, parseArgs, ROOT } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), { blocks: 10, rows: 200_000, robots: 401, reps: 3, 'run-samples': 100, formats: 'RowBinary,Native,Native-as-sent' });
// Row order in a block: runs of --run-samples consecutive samples of one robot (one robot's message),
// the robots' runs interleaved, as the decode tasks deliver them. `Native` is what the gateway sends
// (converted and ordered by the table's key), `Native-as-sent` the conversion without the ordering.
const { openClickHouseStore } = await import(join(ROOT, 'dist/telemetry/store/clickhouse-store.js'));
const { NativeInsert } = await import(join(ROOT, 'dist/telemetry/store/native-insert.js'));
const { INSERT_COLUMNS, INSERT_COLUMN_LIST } = await import(join(ROOT, 'dist/telemetry/store/columns.js'));
const { loadNative } = await import(join(ROOT, 'dist/telemetry/decode/native.js'));
const binding = loadNative().binding;
if (binding === null) throw new Error(`the addon is needed: ${loadNative().reason}`);

const ch = await startClickHouse();
const q = async (sql, body) => {
  const r = await fetch(`${ch.url}/?query=${encodeURIComponent(sql)}`, { method: 'POST', ...(body ? { body } : {}) });
  const b = Buffer.from(await r.arrayBuffer());
  if (!r.ok) throw new Error(`${sql.slice(0, 100)}: ${b.toString()}`);
  return b;
};
const serverCpuS = () => {
  const f = readFileSync(`/proc/${ch.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};
const selfCpuS = () => { const u = process.cpuUsage(); return (u.user + u.system) / 1e6; };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

try {
  // The table exactly as the gateway creates it (its migrations), then the same structure as `src`.
  const store = await openClickHouseStore({ url: ch.url, insertFormat: 'rowbinary' });
  const flavor = store.flavor;
  await store.close();
  const ddl = (await q('SHOW CREATE TABLE telemetry_samples')).toString().trim().replaceAll('\\n', '\n').replaceAll("\\'", "'");
  const total = opts.blocks * opts.rows;
  const R = opts.robots;
  await q(ddl.replace('default.telemetry_samples', 'src').replace(/CREATE TABLE\s+telemetry_samples/, 'CREATE TABLE src'));
  await q(`INSERT INTO src ${INSERT_COLUMN_LIST} SELECT concat('robot-', toString(number % ${R})), 'fleet-a',
    1700000000000 + intDiv(number, ${R}), 1700000000000 + intDiv(number, ${R}) + 3,
    52.1 + sin(number / ${R * 100}) / 100, 4.3 + cos(number / ${R * 100}) / 100, 10 + (number % 7) / 10,
    sin(number / ${R * 10}) * 50, cos(number / ${R * 10}) * 50, 0, (intDiv(number, ${R}) % 360), 1.5, 0.2,
    80 - number / 1e7, 48.1, 0, 'autonomous', 0, 4, concat('run-', toString(number % ${R})), 'running',
    (number % 1000) / 10, 5, 100.5, 60, 'ok', arrayFilter(x -> number % 50 = 0, ['motor_overtemp']), 55.5 FROM numbers(${total})`);
  const per = opts.rows / R;
  const blocks = [];
  const blockRows = [];
  for (let i = 0; i < opts.blocks; i++) {
    const where = `ts_ms >= ${1700000000000 + Math.round(i * per)} AND ts_ms < ${i === opts.blocks - 1 ? 2e12 : 1700000000000 + Math.round((i + 1) * per)}`;
    blocks.push(await q(`SELECT ${INSERT_COLUMNS.join(', ')} FROM src WHERE ${where} ORDER BY intDiv(ts_ms, ${opts['run-samples']}), robot_id, ts_ms FORMAT RowBinary`));
    blockRows.push(Number((await q(`SELECT count() FROM src WHERE ${where}`)).toString().trim()));
  }
  const rowBytes = blocks.reduce((n, b) => n + b.length, 0) / total;
  const rowsOf = (i) => blockRows[i];
  const conv = { Native: new NativeInsert(binding), 'Native-as-sent': new NativeInsert(binding, 2, false) };
  const settle = async () => {
    for (;;) {
      if ((await q('SELECT count() FROM system.merges')).toString().trim() === '0') return;
      await sleep(200);
    }
  };
  const rounds = [];
  for (let rep = 0; rep < opts.reps; rep++) {
    for (const format of String(opts.formats).split(',')) {
      await q('DROP TABLE IF EXISTS telemetry_samples');
      await q(ddl);
      await sleep(500);
      const s0 = serverCpuS();
      const t0 = performance.now();
      let convertS = 0;
      for (let i = 0; i < blocks.length; i++) {
        if (format === 'RowBinary') {
          await q(`INSERT INTO telemetry_samples ${INSERT_COLUMN_LIST} FORMAT RowBinary`, blocks[i]);
        } else {
          const c0 = selfCpuS();
          const n = await conv[format].convert([blocks[i]], blocks[i].length, rowsOf(i));
          convertS += selfCpuS() - c0;
          if ('error' in n) throw new Error(`conversion refused: ${n.error}`);
          await q(`INSERT INTO telemetry_samples ${INSERT_COLUMN_LIST} FORMAT Native`, n.body);
          n.release();
        }
      }
      const wallS = (performance.now() - t0) / 1000;
      const s1 = serverCpuS();
      await settle();
      await sleep(1000);
      const s2 = serverCpuS();
      const stored = Number((await q('SELECT count() FROM telemetry_samples')).toString().trim());
      if (stored !== total) throw new Error(`${format}: ${stored} rows stored, not ${total}`);
      const r = {
        rep, format,
        serverUsPerRowInserting: +((s1 - s0) * 1e6 / total).toFixed(2),
        serverUsPerRowWithMerges: +((s2 - s0) * 1e6 / total).toFixed(2),
        rowsPerSWall: Math.round(total / wallS),
        convertUsPerRow: format !== 'RowBinary' ? +(convertS * 1e6 / total).toFixed(3) : null,
      };
      rounds.push(r);
      process.stderr.write(`${JSON.stringify(r)}\n`);
    }
  }
  const pick = (f, k) => rounds.filter((r) => r.format === f).map((r) => r[k]);
  const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  console.log(JSON.stringify({
    bench: 'clickhouse-insert-format', machine: machineInfo(), options: opts, server: (await q('SELECT version()')).toString().trim(), flavor,
    rowBinaryBytesPerRow: +rowBytes.toFixed(1),
    median: {
      rowBinary: { serverUsPerRowWithMerges: med(pick('RowBinary', 'serverUsPerRowWithMerges')), rowsPerSWall: med(pick('RowBinary', 'rowsPerSWall')) },
      native: { serverUsPerRowWithMerges: med(pick('Native', 'serverUsPerRowWithMerges')), rowsPerSWall: med(pick('Native', 'rowsPerSWall')), convertUsPerRow: med(pick('Native', 'convertUsPerRow')) },
    },
    rounds,
  }, null, 1));
} finally {
  await ch.dispose();
}
