/**
 * Starts a real ClickHouse server for tests: Debian's /usr/sbin/clickhouse-server (18.16 here) with a
 * temp config (free http/tcp ports on 127.0.0.1, temp data path, the system users.xml). It answers in
 * well under a second. stop()/start() keep the same ports and data (for outage tests); dispose()
 * stops it and removes its directory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, withFreshPorts } from './net.js';

export const CLICKHOUSE_SERVER_BIN = '/usr/sbin/clickhouse-server';
const USERS_XML = '/etc/clickhouse-server/users.xml';

export interface ClickHouseTestServer {
  readonly url: string;
  readonly httpPort: number;
  /** Native protocol port (what a cluster's `<remote_servers>` names). */
  readonly tcpPort: number;
  /** The users file the server reads (a test's own when it passed `usersXml`; the server reloads it when it changes). */
  readonly usersConfigPath: string;
  /**
   * Stops the process, data stays. SIGTERM lets it shut down cleanly (it waits for open client
   * connections, up to seconds); SIGKILL is an instant crash, fine for outage tests. SIGKILL after 10 s.
   */
  stop(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  /** Starts it again on the same ports and data. */
  start(): Promise<void>;
  /** Kills the server (its data is thrown away anyway) and removes the temp directory. */
  dispose(): Promise<void>;
  /** The last `lines` lines (default 20) of its error log (what a failed test reports about the server). */
  errorLog(lines?: number): string;
}

/** Why a local server cannot be started here, or null when it can. */
export function clickhouseServerUnavailableReason(): string | null {
  if (!existsSync(CLICKHOUSE_SERVER_BIN)) return `${CLICKHOUSE_SERVER_BIN} is not installed (apt-get install clickhouse-server)`;
  if (!existsSync(USERS_XML)) return `${USERS_XML} is missing`;
  return null;
}

/**
 * `SELECT 1` over a fresh connection: a keep-alive socket left in a pool would make the server wait
 * for it (seconds) on shutdown.
 */
function selectOne(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = get(`${url}/?query=SELECT%201`, { agent: false, timeout: 1_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve(res.statusCode === 200 ? body.trim() : `HTTP ${res.statusCode}`));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

/** Resolves once `url` answers `SELECT 1`. */
export async function waitForClickHouse(url: string, timeoutMs: number, exited?: () => string | null): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const gone = exited?.();
    if (gone) throw new Error(`clickhouse-server exited: ${gone}`);
    try {
      if ((await selectOne(url)) === '1') return;
      last = 'unexpected answer';
    } catch (e) {
      last = e instanceof Error ? e.message : String(e);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`ClickHouse at ${url} not ready after ${timeoutMs} ms (${last})`);
}

/** Marks a start that failed because a chosen port was taken (the caller may retry with new ports). */
export const PORT_TAKEN = 'Address already in use';

/**
 * The server's error log, last `lines` lines (20 by default): why it exited (exit code 70 alone says
 * nothing). The retry on a taken port looks for {@link PORT_TAKEN} in it.
 */
function errLogTail(dir: string, lines = 20): string {
  try {
    return readFileSync(join(dir, 'server.err.log'), 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

type StartOptions = Parameters<typeof startOnce>[0];

/**
 * Starts a private server and waits until it answers. When it chose its ports itself and one was
 * taken between choosing and binding, it tries again on new ones (up to 3 times).
 */
export async function startClickHouseServer(opts: StartOptions = {}): Promise<ClickHouseTestServer> {
  return withFreshPorts(() => startOnce(opts), (e) => opts.ports === undefined && portTaken(e));
}

/** The error of a start that failed because a chosen port was taken. */
export function portTaken(e: unknown): boolean {
  return e instanceof Error && e.message.includes(PORT_TAKEN);
}

async function startOnce(opts: {
  readyTimeoutMs?: number;
  usersXml?: string;
  /** Ports chosen beforehand (a cluster's servers name each other's in their configs). */
  ports?: { http: number; tcp: number };
  /** Extra top-level config elements (`<remote_servers>`, `<zookeeper>`, `<macros>`: clickhouse-cluster.ts). */
  extraConfigXml?: string;
} = {}): Promise<ClickHouseTestServer> {
  const reason = clickhouseServerUnavailableReason();
  if (reason) throw new Error(reason);
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-ch-'));
  // A test that needs users with passwords passes its own users.xml (users, profiles, quotas).
  const usersConfig = opts.usersXml === undefined ? USERS_XML : join(dir, 'users.xml');
  if (opts.usersXml !== undefined) writeFileSync(usersConfig, opts.usersXml);
  const [httpPort, tcpPort] = opts.ports !== undefined ? [opts.ports.http, opts.ports.tcp] : [await freePort(), await freePort()];
  const config = join(dir, 'config.xml');
  writeFileSync(
    config,
    `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${dir}/server.log</log><errorlog>${dir}/server.err.log</errorlog></logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>${usersConfig}</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>5368709120</mark_cache_size>
${opts.extraConfigXml ?? ''}
</yandex>
`,
  );
  const url = `http://127.0.0.1:${httpPort}`;
  const readyTimeoutMs = opts.readyTimeoutMs ?? 60_000;
  let child: ChildProcess | null = null;
  let exitInfo: string | null = null;
  const killOnExit = (): void => {
    child?.kill('SIGKILL');
  };

  const start = async (): Promise<void> => {
    if (child) return;
    exitInfo = null;
    const proc = spawn(CLICKHOUSE_SERVER_BIN, [`--config-file=${config}`], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2_000);
    });
    proc.once('exit', (code, signal) => {
      exitInfo = `code ${code} signal ${signal} ${stderr.trim()} ${errLogTail(dir)}`;
      if (child === proc) {
        child = null;
        process.removeListener('exit', killOnExit);
      }
    });
    child = proc;
    process.once('exit', killOnExit);
    await waitForClickHouse(url, readyTimeoutMs, () => exitInfo);
  };

  const stop = async (signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> => {
    const proc = child;
    if (!proc) return;
    process.removeListener('exit', killOnExit);
    await new Promise<void>((resolve) => {
      const t = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      proc.once('exit', () => {
        clearTimeout(t);
        resolve();
      });
      proc.kill(signal);
    });
    child = null;
  };

  try {
    await start();
  } catch (e) {
    await stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return {
    url,
    httpPort,
    tcpPort,
    usersConfigPath: usersConfig,
    start,
    stop,
    errorLog: (lines?: number) => errLogTail(dir, lines),
    dispose: async () => {
      await stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
