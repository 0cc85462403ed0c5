import { it } from 'vitest';
import { startClickHouseCluster } from '../support/clickhouse-cluster.js';
async function q(url: string, sql: string): Promise<string> {
  const r = await fetch(`${url}/?database=default`, { method: 'POST', body: sql });
  return `${r.status} ${(await r.text()).trim()}`;
}
it('probe', async () => {
  const c = await startClickHouseCluster(2);
  try {
    const [a, b] = c.shards as [any, any];
    console.log(await q(a.url, "SELECT shard_num, shard_weight, replica_num, host_address, port, is_local FROM system.clusters WHERE cluster='fleetgw_test'"));
    console.log(await q(b.url, "SELECT * FROM system.macros"));
    for (const s of [a, b]) {
      console.log(await q(s.url, "CREATE TABLE t_local (k String, v Int64) ENGINE = ReplicatedMergeTree('/clickhouse/tables/{shard}/default/t_local', '{replica}') ORDER BY k SETTINGS replicated_deduplication_window = 1000"));
      console.log(await q(s.url, "CREATE TABLE IF NOT EXISTS t AS t_local ENGINE = Distributed(fleetgw_test, default, t_local, cityHash64(k))"));
    }
    console.log(await q(a.url, "INSERT INTO t_local VALUES ('x', 1), ('y', 2)"));
    console.log(await q(a.url, "INSERT INTO t_local VALUES ('x', 1), ('y', 2)"));
    console.log(await q(b.url, "INSERT INTO t_local VALUES ('z', 1)"));
    console.log(await q(b.url, "SELECT count() FROM t"));
    console.log(await q(a.url, "SELECT r, cityHash64(r) % 2 FROM (SELECT arrayJoin(['x','y','z']) AS r)"));
  } finally {
    await c.dispose();
  }
}, 120_000);
