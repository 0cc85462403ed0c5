/**
 * Many depots on one ClickHouse cluster (issue 14 part 4, docs/scale-out.md): ZooKeeper and two
 * clickhouse-server 18.16 shards on loopback, two `fleetgw serve --clickhouse-cluster` depots (their
 * own LMDB, their own robots), `fleetgw sim` robots on each. A query through the Distributed table
 * sees each depot's rows exactly once (rows per (robot, ts)); then one shard is stopped (SIGKILL) for
 * FLEETGW_FAULT_CLUSTER_OUTAGE_S (default 20 s) under load and started again: both depots spool, replay
 * in order, and the count is checked again: 0 lost, 0 duplicated. Half-way through the outage depot 1's
 * gateway is killed (SIGKILL) with blocks in its spool whose shard-1 part is already stored, and
 * started again at once, while the shard is still down (it sets that shard up when it is back): its
 * replay after the restart remembers nothing, so only the shard's block-hash deduplication keeps
 * those parts from being stored twice.
 */
import { readFileSync, rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startClickHouseCluster, zookeeperUnavailableReason, type ClickHouseTestCluster } from '../support/clickhouse-cluster.js';
import { clickhouseServerUnavailableReason, type ClickHouseTestServer } from '../support/clickhouse-server.js';
import type { RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';
import { allOnline, freePort, metric, metrics, provision, report, serve, sim, sleep, streamedFor, type Depot, type RunningSim, type StoredCounts } from './support.js';

const DEPOTS = 2;
const ROBOTS = 10;
const HZ = 10;
const OUTAGE_S = Number(process.env.FLEETGW_FAULT_CLUSTER_OUTAGE_S ?? 20);
const DB = 'fleet';
const reason = zookeeperUnavailableReason() ?? clickhouseServerUnavailableReason();

async function sql(url: string, query: string, timeoutMs = 30_000): Promise<string> {
  // Bounded: a shard that hangs must fail the test with its report, not run it into the test timeout.
  const res = await fetch(`${url}/?database=${DB}`, { method: 'POST', body: query, signal: AbortSignal.timeout(timeoutMs) });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse query failed: ${res.status} ${text}`);
  return text.trim();
}

function robotIds(depot: Depot): string[] {
  return (JSON.parse(readFileSync(depot.robotsFile, 'utf8')) as { robotId: string }[]).map((r) => r.robotId);
}

/** A depot's rows through the Distributed table (any shard answers for all). */
async function countDepot(url: string, ids: readonly string[]): Promise<StoredCounts> {
  const text = await sql(url, `SELECT count(), uniqExact(robot_id, ts_ms) FROM telemetry_samples WHERE robot_id IN (${ids.map((id) => `'${id}'`).join(', ')})`);
  const [rows, distinct] = text.split('\t').map(Number) as [number, number];
  return { rows, distinct, duplicated: rows - distinct };
}

/** What failed, as a line: the report must never be lost to an error of its own. */
const why = (e: unknown): string => `? (${e instanceof Error ? e.message : String(e)})`;

/** The drain's counters, one scrape per depot. */
const DRAIN_METRICS = ['fleetgw_telemetry_spool_backlog_blocks', 'fleetgw_telemetry_spool_bytes', 'fleetgw_telemetry_samples_replayed_total', 'fleetgw_telemetry_samples_spooled_total'] as const;

/**
 * Each shard's replica state and last errors, each depot's spool counters and last store log lines,
 * and the drain's progress since the shard came back: what a drain that does not finish needs to
 * tell "slow" from "stuck" (CI failed once there with only the timeout to go on). Everything runs at
 * once with short timeouts, well inside the test's own.
 */
async function drainState(depots: readonly Running[], shards: readonly ClickHouseTestServer[], progress: readonly string[]): Promise<string> {
  const shardLines = await Promise.all(shards.map(async (s, i) => {
    const replica = await sql(s.url, 'SELECT database, table, is_readonly, is_session_expired, queue_size, inserts_in_queue FROM system.replicas', 5_000).catch(why);
    // 18.x follows each error with its stack trace: keep the errors' own lines.
    const errors = s.errorLog(2_000).split('\n').filter((l) => l.includes('<Error>') || l.includes('Code:')).slice(-4);
    return [`shard ${i + 1} replicas (database, table, is_readonly, is_session_expired, queue_size, inserts_in_queue): ${replica.replaceAll('\n', '; ')}`,
      ...errors.map((l) => `  ${l.slice(0, 400)}`)];
  }));
  const depotLines = await Promise.all(depots.map(async (d, i) => {
    if (d.gw === null) return [`depot ${i + 1}: not running`];
    const gw = d.gw;
    const m = await metrics(gw, d.depot, DRAIN_METRICS, 5_000).then((v) => DRAIN_METRICS.map((n) => `${n.replace('fleetgw_telemetry_', '')} ${v[n]}`).join(', '), why);
    const lines = gw.stderr().split('\n').filter((l) => /telemetry|clickhouse|shard/i.test(l)).slice(-8);
    return [`depot ${i + 1}: ${m}`, ...lines.map((l) => `  ${l.slice(0, 600)}`)];
  }));
  return [...shardLines.flat(), ...depotLines.flat(), 'progress since the shard came back:', ...progress.map((l) => `  ${l}`)].join('\n');
}

interface Running {
  depot: Depot;
  ids: string[];
  port: number;
  args: string[];
  gw: RunningGateway | null;
  robots: RunningSim | null;
}

describe.skipIf(reason !== null && process.env.CI !== 'true')(`many depots on one ClickHouse cluster${reason !== null ? ` (skipped: ${reason})` : ''}`, () => {
  let cluster: ClickHouseTestCluster | null = null;
  const depots: Running[] = [];
  afterAll(async () => {
    for (const d of depots) {
      await d.robots?.stop().catch(() => undefined);
      await d.gw?.stop('SIGKILL');
      rmSync(d.depot.dataDir, { recursive: true, force: true });
    }
    await cluster?.dispose();
  });

  it(`${DEPOTS} depots x ${ROBOTS} robots x ${HZ} Hz, shard 2 down ${OUTAGE_S} s: each depot's rows exactly once through the Distributed table`, async () => {
    cluster = await startClickHouseCluster(2);
    const [shard1, shard2] = cluster.shards as [NonNullable<ClickHouseTestCluster['shards'][0]>, NonNullable<ClickHouseTestCluster['shards'][0]>];
    const shardUrls = cluster.shards.map((s) => s.url).join(',');
    for (let i = 0; i < DEPOTS; i++) {
      const depot = await provision(ROBOTS);
      const port = await freePort();
      // Each depot reads through a different shard (any of them serves the Distributed table).
      const readVia = cluster.shards[i % cluster.shards.length]!;
      const args = ['--clickhouse-url', `${readVia.url}/${DB}`, '--clickhouse-cluster', cluster.name, '--clickhouse-shard-urls', shardUrls];
      const running: Running = { depot, ids: robotIds(depot), port, args, gw: null, robots: null };
      depots.push(running);
      running.gw = await serve(depot, port, args);
      running.robots = sim(depot, port, HZ);
    }
    for (const d of depots) await allOnline(d.gw!, d.depot);
    expect(new Set(depots.flatMap((d) => d.ids)).size).toBe(DEPOTS * ROBOTS);
    // Before the fault: both depots' rows are there, once (what reached the store so far). At this
    // light load a block waits up to 5 s for its insert (FLEETGW_TELEMETRY_INSERT_SMALL_MAX_AGE_MS).
    for (const d of depots) {
      let before = await countDepot(shard2.url, d.ids);
      await until(async () => (before = await countDepot(shard2.url, d.ids)).distinct > 0, 20_000, 'the depot\'s first rows on shard 2', 250);
      expect(before.duplicated).toBe(0);
    }

    await shard2.stop('SIGKILL');
    const downAt = Date.now();
    const spoolPeak = depots.map(() => 0);
    const spooled = depots.map(() => 0);
    const killed = depots[0]!;
    let spoolBytesAtKill = 0;
    let restartMs = -1;
    let spooledBeforeKill = 0;
    // Time-based on purpose: the outage's length is the fault; its figures are sampled once a second.
    while (Date.now() - downAt < OUTAGE_S * 1000) {
      await sleep(1_000);
      for (const [i, d] of depots.entries()) {
        spoolPeak[i] = Math.max(spoolPeak[i]!, await metric(d.gw!, d.depot, 'fleetgw_telemetry_spool_bytes'));
        // The killed depot's counter restarts with its process: both lives count.
        spooled[i] = (d === killed ? spooledBeforeKill : 0) + await metric(d.gw!, d.depot, 'fleetgw_telemetry_samples_spooled_total');
      }
      if (restartMs < 0 && Date.now() - downAt >= OUTAGE_S * 500) {
        spoolBytesAtKill = await metric(killed.gw!, killed.depot, 'fleetgw_telemetry_spool_bytes');
        spooledBeforeKill = await metric(killed.gw!, killed.depot, 'fleetgw_telemetry_samples_spooled_total');
        await killed.gw!.stop('SIGKILL');
        const t0 = Date.now();
        killed.gw = await serve(killed.depot, killed.port, killed.args);
        restartMs = Date.now() - t0;
      }
    }
    await shard2.start();
    const upAt = Date.now();
    // Time from the shard's return until each depot's spool is empty.
    const drainMs = depots.map(() => -1);
    // Each depot's backlog and replayed rows every 10 s: progress tells a slow drain from a stuck one.
    const progress: string[] = [];
    let nextProgressAt = upAt;
    try {
      while (drainMs.some((ms) => ms < 0)) {
        // A scrape that fails (a gateway stalled on a loaded machine) is noted, and only the deadline fails the test.
        const seen = await Promise.all(depots.map((d) => metrics(d.gw!, d.depot, DRAIN_METRICS, 10_000).catch((e: unknown) => why(e))));
        const now = Date.now();
        for (const [i, m] of seen.entries()) {
          if (drainMs[i]! < 0 && typeof m !== 'string' && m.fleetgw_telemetry_spool_backlog_blocks === 0 && m.fleetgw_telemetry_samples_replayed_total! > 0) drainMs[i] = now - upAt;
        }
        if (now >= nextProgressAt) {
          progress.push(`${Math.round((now - upAt) / 1000)} s: ${seen.map((m, i) => `depot ${i + 1} ${typeof m === 'string' ? `scrape failed ${m}` : `backlog ${m.fleetgw_telemetry_spool_backlog_blocks} replayed ${m.fleetgw_telemetry_samples_replayed_total}`}`).join(', ')}`);
          nextProgressAt = now + 10_000;
        }
        if (now - upAt > 120_000) throw new Error('spools not drained within 120 s of the shard coming back');
        await sleep(250); // the poll interval
      }
    } catch (e) {
      throw new Error(`${e instanceof Error ? e.message : String(e)}:\n${await drainState(depots, cluster.shards, progress)}`, { cause: e });
    }
    const replayed = await Promise.all(depots.map((d) => metric(d.gw!, d.depot, 'fleetgw_telemetry_samples_replayed_total')));
    // The killed depot's robots back, and their resends of what was not acknowledged read (two
    // seconds of telemetry past them).
    await allOnline(killed.gw!, killed.depot);
    await streamedFor(killed.gw!, killed.depot, HZ, 2, await metric(killed.gw!, killed.depot, 'fleetgw_telemetry_samples_received_total'));

    const results: { lost: number; stored: StoredCounts }[] = [];
    for (const [i, d] of depots.entries()) {
      const sent = await d.robots!.stop();
      d.robots = null;
      expect(await d.gw!.stop('SIGTERM')).toBe(0);
      d.gw = null;
      // Through the Distributed table on shard 1, which never went down.
      const stored = await countDepot(shard1.url, d.ids);
      const { lost } = report(`cluster depot ${i + 1}`, sent, stored, {
        shards: cluster.shards.length, outageS: OUTAGE_S, spooledSamples: spooled[i]!, replayedSamples: replayed[i]!, spoolPeakBytes: spoolPeak[i]!, drainMs: drainMs[i]!,
        ...(d === killed ? { killedMidOutage: 1, spoolBytesAtKill, restartMs } : {}),
      });
      results.push({ lost, stored });
    }
    // Every row on the shard that owns its robot (the Distributed table's sharding expression).
    const misplaced = await Promise.all(cluster.shards.map((s, i) => sql(s.url, `SELECT count() FROM telemetry_samples_local WHERE cityHash64(robot_id) % ${cluster!.shards.length} != ${i}`)));
    const perShard = await Promise.all(cluster.shards.map((s) => sql(s.url, 'SELECT count() FROM telemetry_samples_local')));
    // Blocks a shard dropped as already stored (18.16's counter; shard 2's restarted with it). On
    // shard 1 these are the parts the killed depot's restarted gateway replayed from its spool.
    const deduped = await Promise.all(cluster.shards.map((s) => sql(s.url, "SELECT sum(value) FROM system.events WHERE event = 'DuplicatedInsertedBlocks'")));
    const killedOnShard1 = Number(await sql(shard1.url, `SELECT count() FROM telemetry_samples_local WHERE robot_id IN (${killed.ids.map((id) => `'${id}'`).join(', ')})`));
    console.log(`[faults] ${JSON.stringify({ test: 'cluster shards', rowsPerShard: perShard.map(Number), misplaced: misplaced.map(Number), duplicateBlocksDropped: deduped.map(Number) })}`);
    expect(misplaced).toEqual(cluster.shards.map(() => '0'));
    // The crash path was exercised: the replay re-sent stored parts and shard 1 dropped them.
    if (killedOnShard1 > 0) expect(Number(deduped[0])).toBeGreaterThan(0);
    expect(spoolBytesAtKill).toBeGreaterThan(0);
    for (const [i, r] of results.entries()) {
      expect(spooled[i]).toBeGreaterThan(0);
      // The restarted gateway replays what its predecessor spooled (its own counter starts at 0).
      if (depots[i] === killed) expect(replayed[i]).toBeGreaterThan(0);
      else expect(replayed[i]).toBeGreaterThanOrEqual(spooled[i]!);
      expect(r.stored.duplicated).toBe(0);
      expect(r.lost).toBe(0);
    }
  });
});
