/**
 * A real ClickHouse cluster on loopback for tests (issue 14 part 4): Debian's ZooKeeper (standalone,
 * its own data dir and free port) and N Debian clickhouse-server 18.16 processes, one shard each
 * (one replica), whose generated configs name the cluster (`<remote_servers>`), the ZooKeeper node and
 * their `<macros>` (shard, replica) so ReplicatedMergeTree tables deduplicate retried blocks.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { portTaken, startClickHouseServer, type ClickHouseTestServer } from './clickhouse-server.js';
import { freePort, withFreshPorts } from './net.js';

/** Debian's zookeeper package puts the server (with its dependencies on the manifest classpath) here. */
export const ZOOKEEPER_JAR = '/usr/share/java/zookeeper.jar';
const JAVA = '/usr/bin/java';

/** Why a cluster cannot be started here, or null when it can. */
export function zookeeperUnavailableReason(): string | null {
  if (!existsSync(ZOOKEEPER_JAR)) return `${ZOOKEEPER_JAR} is not installed (apt-get install zookeeper)`;
  if (!existsSync(JAVA)) return `${JAVA} is not installed (the zookeeper package pulls in a JRE)`;
  return null;
}

export interface ZooKeeperTestServer {
  readonly port: number;
  dispose(): Promise<void>;
}

/** Sends a four-letter word; resolves with the answer ('' on any error). */
function fourLetter(port: number, word: string): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    let out = '';
    s.setTimeout(1_000, () => s.destroy());
    s.on('connect', () => s.write(word));
    s.on('data', (d: Buffer) => (out += d.toString()));
    s.on('close', () => resolve(out));
    s.on('error', () => resolve(''));
  });
}

/**
 * Starts a standalone ZooKeeper on a free loopback port and waits for `imok`. A process that exits
 * before answering (its port taken meanwhile) is started again on a new port, up to 3 times.
 */
export async function startZooKeeper(timeoutMs = 30_000): Promise<ZooKeeperTestServer> {
  const reason = zookeeperUnavailableReason();
  if (reason) throw new Error(reason);
  return withFreshPorts(() => startZooKeeperOnce(timeoutMs), (e) => e instanceof ZooKeeperExited);
}

class ZooKeeperExited extends Error {}

async function startZooKeeperOnce(timeoutMs: number): Promise<ZooKeeperTestServer> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-zk-'));
  const port = await freePort();
  const cfg = join(dir, 'zoo.cfg');
  // forceSync=no: a test ZooKeeper need not survive a power cut, and every ReplicatedMergeTree insert
  // waits for ZooKeeper's log write, which it fsyncs by default (a group of writes at a time): on a
  // slow or shared disk that would slow the shards' inserts, and the cluster tests time the gateway's
  // drain, not the disk.
  writeFileSync(cfg, [
    'tickTime=2000', `dataDir=${dir}/data`, `clientPort=${port}`, 'clientPortAddress=127.0.0.1',
    'admin.enableServer=false', '4lw.commands.whitelist=ruok', 'maxClientCnxns=200', 'forceSync=no', '',
  ].join('\n'));
  const proc: ChildProcess = spawn(JAVA, ['-Xmx256m', '-cp', ZOOKEEPER_JAR, 'org.apache.zookeeper.server.ZooKeeperServerMain', cfg],
    { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  proc.stderr?.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2_000)));
  let exited: string | null = null;
  proc.once('exit', (code, signal) => (exited = `code ${code} signal ${signal} ${stderr.trim()}`));
  const killOnExit = (): void => {
    proc.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const dispose = async (): Promise<void> => {
    process.removeListener('exit', killOnExit);
    if (exited === null) {
      await new Promise<void>((resolve) => {
        proc.once('exit', () => resolve());
        proc.kill('SIGKILL');
      });
    }
    rmSync(dir, { recursive: true, force: true });
  };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if ((await fourLetter(port, 'ruok')) === 'imok') return { port, dispose };
    if (exited !== null || Date.now() > deadline) {
      await dispose();
      const why = `ZooKeeper did not start on 127.0.0.1:${port}: ${exited ?? `no imok within ${timeoutMs} ms`}`;
      throw exited !== null ? new ZooKeeperExited(why) : new Error(why);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

export interface ClickHouseTestCluster {
  /** The `<remote_servers>` name. */
  readonly name: string;
  readonly zookeeper: ZooKeeperTestServer;
  /** In shard order (shard_num 1, 2, …). */
  readonly shards: ClickHouseTestServer[];
  dispose(): Promise<void>;
}

/**
 * Waits until `server` reads ZooKeeper. A server answers HTTP before its ZooKeeper session is up, and
 * on a loaded machine the first ReplicatedMergeTree DDL then failed with "All connection tries failed
 * while connecting to ZooKeeper" (CI, 2026-12-01): the tests are about the cluster, not that race.
 * @throws when it cannot within `timeoutMs`, with the server's last answer
 */
async function waitForZooKeeperSession(server: ClickHouseTestServer, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const res = await fetch(`${server.url}/`, { method: 'POST', body: "SELECT count() FROM system.zookeeper WHERE path = '/'" });
      if (res.ok) return;
      last = (await res.text()).trim();
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    if (Date.now() > deadline) throw new Error(`ClickHouse at ${server.url} did not reach ZooKeeper within ${timeoutMs} ms: ${last}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * ZooKeeper plus `shards` servers, each one shard with one replica, all naming cluster `name`. The
 * shards' ports are chosen before any starts (each config names all of them); when one was taken
 * meanwhile, all shards start again on new ports (up to 3 times).
 */
export async function startClickHouseCluster(shards: number, name = 'fleetgw_test'): Promise<ClickHouseTestCluster> {
  const zookeeper = await startZooKeeper();
  let started: ClickHouseTestServer[];
  try {
    started = await withFreshPorts(() => startShards(shards, name, zookeeper.port), portTaken);
  } catch (e) {
    await zookeeper.dispose();
    throw e;
  }
  return {
    name,
    zookeeper,
    shards: started,
    async dispose() {
      for (const s of started) await s.dispose();
      await zookeeper.dispose();
    },
  };
}

/** Starts the shards on new ports; on failure stops those it started. */
async function startShards(shards: number, name: string, zookeeperPort: number): Promise<ClickHouseTestServer[]> {
  const started: ClickHouseTestServer[] = [];
  try {
    const ports: { http: number; tcp: number }[] = [];
    for (let i = 0; i < shards; i++) ports.push({ http: await freePort(), tcp: await freePort() });
    const remote = `<remote_servers><${name}>${ports.map((p) =>
      `<shard><weight>1</weight><internal_replication>true</internal_replication><replica><host>127.0.0.1</host><port>${p.tcp}</port></replica></shard>`).join('')}</${name}></remote_servers>`;
    const zk = `<zookeeper><node><host>127.0.0.1</host><port>${zookeeperPort}</port></node><session_timeout_ms>10000</session_timeout_ms></zookeeper>`;
    for (let i = 0; i < shards; i++) {
      // interserver_http_port: replicas fetch parts from each other through it (one replica here, but
      // a ReplicatedMergeTree server announces it in ZooKeeper).
      const interserver = await freePort();
      const extra = `${remote}\n${zk}\n<macros><shard>${String(i + 1).padStart(2, '0')}</shard><replica>r1</replica></macros>
<interserver_http_port>${interserver}</interserver_http_port><interserver_http_host>127.0.0.1</interserver_http_host>`;
      started.push(await startClickHouseServer({ ports: ports[i]!, extraConfigXml: extra, readyTimeoutMs: 30_000 }));
    }
    for (const s of started) await waitForZooKeeperSession(s, 30_000);
    return started;
  } catch (e) {
    for (const s of started) await s.dispose();
    throw e;
  }
}
