// After a telemetry run: counts the rows the gateway stored (chdb in the data dir, or a ClickHouse
// server) and checks every robot's LMDB snapshot against the newest row of that robot.
// chdb runs here on the main thread (never in a worker thread); the gateway must have exited first.
import { openStore } from '../../dist/store/lmdb.js';
import { openChdbStore } from '../../dist/telemetry/store/chdb-store.js';
import { openClickHouseStore } from '../../dist/telemetry/store/clickhouse-store.js';
// Snapshots are a format byte + row (snapshot-codec.js), objects in older stores: the benches
// also run against builds from before it, for same-run baselines.
const { decodeSnapshot } = await import('../../dist/telemetry/sample/snapshot-codec.js').catch(() => ({ decodeSnapshot: (v) => v }));

/**
 * @param {{dataDir: string, clickhouseUrl: string, fleetId: string, robots: {robotId: string}[], stopAtMs: number}} o
 * @returns rows, duplicates (rows - distinct (robot, ts_ms)), robotsWithRows, snapshots summary
 */
export async function countStored({ dataDir, clickhouseUrl, fleetId, robots, stopAtMs }) {
  const store = clickhouseUrl ? await openClickHouseStore({ url: clickhouseUrl }) : await openChdbStore({ dataDir });
  let perRobot;
  let rows;
  let distinct;
  try {
    const where = `WHERE fleet_id = '${fleetId}'`;
    const [c, u] = (await store.queryText(`SELECT count(), uniqExact(robot_id, ts_ms) FROM telemetry_samples ${where}`)).trim().split('\t');
    rows = Number(c);
    distinct = Number(u);
    perRobot = new Map();
    const text = await store.queryText(`SELECT robot_id, count(), max(ts_ms) FROM telemetry_samples ${where} GROUP BY robot_id`);
    for (const line of text.trim().split('\n')) {
      if (line === '') continue;
      const [id, n, maxTs] = line.split('\t');
      perRobot.set(id, { rows: Number(n), maxTsMs: Number(maxTs) });
    }
  } finally {
    await store.close();
  }

  const lmdb = openStore(dataDir);
  const snapshots = { ok: 0, missing: 0, notNewestRow: 0, maxAgeAtStopMs: 0, problems: [] };
  try {
    for (const { robotId } of robots) {
      const snap = decodeSnapshot(lmdb.snapshots.get(robotId));
      const r = perRobot.get(robotId);
      if (!snap) {
        snapshots.missing++;
        if (snapshots.problems.length < 5) snapshots.problems.push(`${robotId}: no snapshot`);
        continue;
      }
      const age = stopAtMs - snap.tsMs;
      snapshots.maxAgeAtStopMs = Math.max(snapshots.maxAgeAtStopMs, age);
      // The snapshot must be the robot's newest stored sample, i.e. taken when the simulator stopped.
      if (!r || snap.tsMs !== r.maxTsMs) {
        snapshots.notNewestRow++;
        if (snapshots.problems.length < 5) snapshots.problems.push(`${robotId}: snapshot ts ${snap.tsMs}, newest row ${r?.maxTsMs}`);
        continue;
      }
      if (age > 2000) {
        if (snapshots.problems.length < 5) snapshots.problems.push(`${robotId}: snapshot ${age} ms older than the stop`);
        continue;
      }
      snapshots.ok++;
    }
  } finally {
    await lmdb.close();
  }
  return { rows, duplicates: rows - distinct, robotsWithRows: perRobot.size, snapshots };
}
