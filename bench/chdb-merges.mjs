// Benchmark (telemetry target 2: bench/notes/telemetry-ingest.md): what the embedded chdb store spends merging the parts the gateway
// writes, by merge selector base (migration 3 sets 20; the engine's default, 5, is the baseline in the
// same run) and by part size (1,000 rows: 100 robots x 10 Hz cut every second; 5,000: the same robots
// with the 5 s small-block age; 10,000: 1,000 robots cut every second).
// Each case runs in its own child process (chdb's merge threads are per process), opens the store the
// gateway opens (dist/telemetry/store/chdb-store.js, every migration applied), sets the base, then inserts
// --parts parts of --rows rows, one every --period-ms (faster than real time: 100 ms stands for 1 s;
// the merge work per part inserted is what is compared), waits --settle-s, and reports the CPU of chdb's
// MergeMutate threads per part inserted, the active parts left, their highest merge level, and the CPU
// of one robot's history read over everything (more parts cost reads a little more).
//
//   node bench/chdb-merges.mjs [--bases 5,20,50] [--rows 1000,5000,10000] [--parts 300] [--period-ms 100] [--settle-s 3]
// Needs `npm run build` (it uses dist/). Figures: bench/README.md#chdb-merges.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineInfo, parseArgs, ROOT, threadCpu, threadCpuByName } from './lib/procs.mjs';

const opts = parseArgs(process.argv.slice(2), {
  bases: '5,20,50', rows: '1000,5000,10000', parts: 300, 'period-ms': 100, 'settle-s': 3, one: '',
});
const ROBOTS_FOR = (rows) => (rows >= 10_000 ? 1_000 : 100);

/** One case, in this process: prints one JSON line. */
async function runOne(base, rows) {
  const { openChdbStore } = await import(join(ROOT, 'dist/telemetry/store/chdb-store.js'));
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-merges-'));
  try {
    const store = await openChdbStore({ dataDir: dir });
    await store.queryText(`ALTER TABLE telemetry_samples MODIFY SETTING merge_selector_base = ${base}`);
    const robots = ROBOTS_FOR(rows);
    const t0ms = Date.UTC(2026, 11, 1, 12);
    const before = threadCpu(process.pid);
    const start = performance.now();
    for (let i = 0; i < opts.parts; i++) {
      const wait = start + i * opts['period-ms'] - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      // One second of samples from `robots` robots at 10 Hz per part (the gateway's cut), values that vary
      // like a robot's so the codecs do real work; the timestamps advance one part's span per part.
      const base0 = t0ms + i * (rows / robots) * 100;
      await store.queryText(`INSERT INTO telemetry_samples (robot_id, fleet_id, ts_ms, received_at_ms, lat, lon, elevation_m, pose_x_m, pose_y_m, pose_z_m, heading_deg, speed_mps, yaw_rate_dps, battery_pct, voltage_v, charging, mode, estop, gps_fix, mission_run_id, mission_state, progress_pct, step_index, remaining_distance_m, eta_s, health_level, faults, cpu_temp_c)
        SELECT concat('robot-', toString(number % ${robots})), 'depot', ${base0} + intDiv(number, ${robots}) * 100, ${base0} + intDiv(number, ${robots}) * 100 + 3,
          52.1 + (number % 97) * 1e-5, 4.3 + (number % 89) * 1e-5, 12.5, (number % 300) * 0.1, (number % 200) * 0.1, 0, number % 360, 1.2, 0.5,
          80 - (number % 10) * 0.01, 48.1, 0, 'auto', 0, 3, 'run-1', 'running', 42.5, 3, 120.5, 60.2, 'ok', [], 55.5
        FROM numbers(${rows})`);
    }
    await new Promise((r) => setTimeout(r, opts['settle-s'] * 1000));
    const after = threadCpu(process.pid);
    const byName = threadCpuByName(before, after);
    const merge = byName.filter((t) => t.name.startsWith('MergeMutate')).reduce((s, t) => s + t.cpuS, 0);
    const [active, totalRows, maxLevel] = (await store.queryText("SELECT count(), sum(rows), max(level) FROM system.parts WHERE table = 'telemetry_samples' AND active")).trim().split('\t').map(Number);
    // After the settle time the merges are done: the process's CPU during the read is the read's.
    const q0 = process.cpuUsage();
    const w0 = performance.now();
    await store.queryText("SELECT count(), avg(speed_mps) FROM telemetry_samples WHERE fleet_id = 'depot' AND robot_id = 'robot-7'");
    const qWallMs = performance.now() - w0;
    const q = process.cpuUsage(q0);
    await store.close();
    process.stdout.write(`${JSON.stringify({
      base, rows, parts: opts.parts, periodMs: opts['period-ms'],
      mergeCpuS: Number(merge.toFixed(2)), mergeCpuMsPerPart: Number((merge * 1000 / opts.parts).toFixed(1)),
      mergeCpuUsPerRow: Number((merge * 1e6 / (opts.parts * rows)).toFixed(2)),
      activeParts: active, rowsStored: totalRows, maxLevel, readOneRobotMs: Number(qWallMs.toFixed(1)), readOneRobotProcessCpuMs: Number(((q.user + q.system) / 1000).toFixed(1)),
      topThreads: byName.slice(0, 5),
    })}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (opts.one !== '') {
  const [base, rows] = opts.one.split(',').map(Number);
  await runOne(base, rows);
} else {
  process.stderr.write(`${JSON.stringify(machineInfo())}\n`);
  const self = fileURLToPath(import.meta.url);
  for (const rows of opts.rows.split(',').map(Number)) {
    for (const base of opts.bases.split(',').map(Number)) {
      const line = execFileSync(process.execPath, [self, '--one', `${base},${rows}`, '--parts', String(opts.parts), '--period-ms', String(opts['period-ms']), '--settle-s', String(opts['settle-s'])], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
      process.stdout.write(line);
    }
  }
}
