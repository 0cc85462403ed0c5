/**
 * Fault tests through the real processes (issue 14 part 1): `fleetgw serve` and `fleetgw sim` as
 * child processes on loopback, the robots provisioned straight into LMDB (what `fleetgw admin
 * add-robot` does, without 100 process starts), rows counted per (robot, ts) in the store afterwards.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { openStore } from '../../src/store/lmdb.js';
import { addRobot, createFleet, createOrg } from '../../src/store/identity.js';
import { openChdbStore } from '../../src/telemetry/store/chdb-store.js';
import type { SimFleetStats } from '../../src/sim/fleet.js';
import { FLEETGW_BIN } from '../support/cli.js';
import { startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

export interface Depot {
  dataDir: string;
  robotsFile: string;
  robots: number;
}

/** A data dir with one fleet of `count` robots, and the robots file `fleetgw sim` reads. */
export async function provision(count: number): Promise<Depot> {
  const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-faults-'));
  const store = openStore(dataDir);
  const robots: { robotId: string; robotToken: string }[] = [];
  try {
    const org = createOrg(store, 'faults');
    const fleet = createFleet(store, org.orgId, 'faults');
    for (let i = 0; i < count; i++) {
      const r = addRobot(store, { fleetId: fleet.fleetId, name: `f-${i}`, capabilities: ['stop'], active: true });
      robots.push({ robotId: r.record.robotId, robotToken: r.robotToken });
    }
  } finally {
    await store.close();
  }
  const robotsFile = join(dataDir, 'robots.json');
  writeFileSync(robotsFile, JSON.stringify(robots), { mode: 0o600 });
  return { dataDir, robotsFile, robots: count };
}

/**
 * A free loopback port below the ephemeral range (the gateway restarts on the same robot link port,
 * as a service would, and while it is down a robot's reconnect could otherwise be given it as its
 * local port).
 */
export { freePort } from '../support/net.js';

/** `fleetgw serve` on a fixed robot link port (plain HTTP on loopback). */
export async function serve(depot: Depot, grpcPort: number, extra: string[] = [], env: NodeJS.ProcessEnv = {}): Promise<RunningGateway> {
  // The later --grpc-port wins over the harness's `--grpc-port 0`.
  const gw = await startGatewayProcess(depot.dataDir, ['--insecure-http', '--grpc-port', String(grpcPort), ...extra], env);
  // CI runs some of these tests on the JS decoder (FLEETGW_TELEMETRY_DECODER=js): make sure it is the one running.
  const asked = env.FLEETGW_TELEMETRY_DECODER ?? process.env.FLEETGW_TELEMETRY_DECODER;
  if ((asked === 'js' || asked === 'native' || asked === 'reference') && gw.ready.telemetryDecoder !== asked) {
    await gw.stop('SIGKILL');
    throw new Error(`FLEETGW_TELEMETRY_DECODER=${asked}, but the gateway runs the ${gw.ready.telemetryDecoder} decoder`);
  }
  return gw;
}

export interface RunningSim {
  proc: ChildProcess;
  /** SIGTERM; resolves with the robots' totals from the `sim-stopped` line. */
  stop(): Promise<SimFleetStats>;
}

/** `fleetgw sim` with every robot of the depot. */
export function sim(depot: Depot, grpcPort: number, hz: number): RunningSim {
  const proc = spawn(process.execPath, [FLEETGW_BIN, 'sim', '--grpc', `127.0.0.1:${grpcPort}`, '--robots-file', depot.robotsFile, '--hz', String(hz),
    '--stop-on-link-loss-ms', '0', '--log-level', 'warn'], { stdio: ['ignore', 'pipe', 'pipe'] });
  proc.stderr?.resume();
  let stats: SimFleetStats | null = null;
  createInterface({ input: proc.stdout }).on('line', (line) => {
    try {
      const msg = JSON.parse(line) as { event?: string } & SimFleetStats;
      if (msg.event === 'sim-stopped') stats = msg;
    } catch {
      // not JSON
    }
  });
  const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
  return {
    proc,
    async stop() {
      proc.kill('SIGTERM');
      await exited;
      if (stats === null) throw new Error('fleetgw sim printed no sim-stopped line');
      return stats;
    },
  };
}

/** What the store holds: rows, distinct (robot, ts) pairs, and rows beyond the first per pair. */
export interface StoredCounts {
  rows: number;
  distinct: number;
  duplicated: number;
}

const COUNT_SQL = 'SELECT count(), uniqExact(robot_id, ts_ms) FROM telemetry_samples';

function parseCounts(text: string): StoredCounts {
  const [rows, distinct] = text.trim().split('\t').map(Number) as [number, number];
  return { rows, distinct, duplicated: rows - distinct };
}

/** Counts rows in the embedded store of a stopped gateway. */
export async function countChdb(dataDir: string): Promise<StoredCounts> {
  const store = await openChdbStore({ dataDir });
  try {
    return parseCounts(await store.queryText(COUNT_SQL));
  } finally {
    await store.close();
  }
}

/** Counts rows in a ClickHouse server's database. */
export async function countClickHouse(url: string, database: string): Promise<StoredCounts> {
  const res = await fetch(`${url}/?database=${database}`, { method: 'POST', body: COUNT_SQL });
  if (!res.ok) throw new Error(`ClickHouse count failed: ${res.status} ${await res.text()}`);
  return parseCounts(await res.text());
}

/** Reads one sample value of a gateway metric (0 when absent). */
export async function metric(gw: RunningGateway, depot: Depot, name: string): Promise<number> {
  return (await metrics(gw, depot, [name]))[name]!;
}

/**
 * Reads several unlabelled gateway metrics from one scrape (0 for an absent one).
 * @throws when the gateway does not answer within `timeoutMs` (bounded: a hung gateway fails the
 *   test with its report instead of running it into the test timeout)
 */
export async function metrics(gw: RunningGateway, depot: Depot, names: readonly string[], timeoutMs = 30_000): Promise<Record<string, number>> {
  const token = readFileSync(join(depot.dataDir, 'metrics-token'), 'utf8').trim();
  const text = await (await fetch(`${gw.ready.http}/metrics`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(timeoutMs) })).text();
  const lines = text.split('\n');
  const out: Record<string, number> = {};
  for (const name of names) {
    const line = lines.find((l) => l.startsWith(`${name} `));
    out[name] = line === undefined ? 0 : Number(line.slice(name.length + 1));
  }
  return out;
}

/** The figures a fault test prints (docs/operations.md quotes them). */
export function report(test: string, sent: SimFleetStats, stored: StoredCounts, extra: Record<string, number | string> = {}): { lost: number; droppedCounted: number } {
  const produced = sent.samplesSent + sent.samplesDropped + sent.samplesQueued;
  const droppedCounted = sent.samplesDropped + sent.samplesUnackedDropped;
  const lost = produced - droppedCounted - stored.distinct;
  const line = {
    test, produced, sent: sent.samplesSent, stored: stored.distinct, duplicated: stored.duplicated, lost,
    droppedCounted, queueDropped: sent.samplesDropped, unackedDropped: sent.samplesUnackedDropped, heldAtStop: sent.samplesQueued,
    batchesResent: sent.batchesResent, ...extra,
  };
  console.log(`[faults] ${JSON.stringify(line)}`);
  return { lost, droppedCounted };
}

/**
 * Waits until a gateway metric counter reaches `atLeast` (polling its /metrics): the robots' and the
 * store's progress, which a loaded machine slows down, rather than a fixed time.
 */
export async function metricReaches(gw: RunningGateway, depot: Depot, name: string, atLeast: number, what: string, timeoutMs = 120_000): Promise<number> {
  let seen = 0;
  await until(async () => (seen = await metric(gw, depot, name).catch(() => 0)) >= atLeast, timeoutMs, `${what} (${name} ${seen} of ${atLeast})`, 250);
  return seen;
}

/**
 * Waits until the gateway has read `seconds` of every robot's telemetry (on average) past `from`
 * samples received. A robot's reopened stream carries its unacknowledged batches first, so samples
 * read after every robot is back online come after its resends.
 */
export async function streamedFor(gw: RunningGateway, depot: Depot, hz: number, seconds: number, from = 0): Promise<void> {
  await metricReaches(gw, depot, 'fleetgw_telemetry_samples_received_total', from + seconds * depot.robots * hz, `${seconds} s of every robot's telemetry read`);
}

/** Waits until every robot is online again (after a restart the agents reconnect on their backoff). */
export async function allOnline(gw: RunningGateway, depot: Depot, timeoutMs = 60_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const n = await metric(gw, depot, 'fleetgw_robots_online').catch(() => 0);
    if (n === depot.robots) return;
    if (Date.now() > end) throw new Error(`only ${n} of ${depot.robots} robots online after ${timeoutMs} ms`);
    await sleep(250); // the poll interval
  }
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
