import { it, expect } from 'vitest';
import { openStore } from '../../src/store/lmdb.js';
import { createTelemetryIngest } from '../../src/telemetry/ingest.js';
import { encodeBatch, tempDir } from './helpers.js';
it('debug', async () => {
  for (let attempt = 0; attempt < 5; attempt++) {
  const tmp = tempDir('dbg');
  const store = openStore(tmp.dir);
  const ingest = await createTelemetryIngest({ store, dataDir: tmp.dir, threads: 1, maxBatchFrames: 50 });
  const t0 = 1_700_000_000_000;
  for (let f = 0; f < 40; f++) for (let r = 0; r < 3; r++) ingest.push(`robot-${r}`, 'fleet-a', encodeBatch(t0 + f * 1_000 + r, 25, f * 25));
  await ingest.flush();
  const q = await ingest.sampleStore.queryText("SELECT robot_id, count(), uniqExact(ts_ms), min(ts_ms)-1700000000000, countIf(ts_ms = 1700000007032) FROM telemetry_samples GROUP BY robot_id ORDER BY robot_id");
  console.log(attempt, q);
  const q2 = await ingest.sampleStore.queryText("SELECT robot_id, ts_ms - 1700000000000, lat FROM telemetry_samples WHERE robot_id = 'robot-2' AND ts_ms BETWEEN 1700000007000 AND 1700000007100 ORDER BY ts_ms");
  console.log(q2);
  await ingest.close(); await store.close(); tmp.remove();
  }
  expect(1).toBe(1);
});
