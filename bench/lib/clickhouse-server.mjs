// A private ClickHouse server for the telemetry benchmarks (`--clickhouse-url local`): Debian's
// /usr/sbin/clickhouse-server with a temp config on free ports, so the benchmark knows its pid and can
// report the store's own CPU apart from the gateway's. Same config as test/support/clickhouse-server.ts.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { get } from 'node:http';
import { freePort } from './free-port.mjs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const BIN = '/usr/sbin/clickhouse-server';
const USERS_XML = '/etc/clickhouse-server/users.xml';

function selectOne(url) {
  return new Promise((resolve, reject) => {
    const req = get(`${url}/?query=SELECT%201`, { agent: false, timeout: 1000 }, (res) => {
      let body = '';
      res.on('data', (d) => { body += d; });
      res.on('end', () => resolve(body.trim()));
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
  });
}

export { freePort };

/**
 * `ports` and `extraConfigXml` (`<remote_servers>`, `<zookeeper>`, `<macros>`): a cluster's shard
 * (bench/cluster-insert.mjs).
 * @param {{ports?: {http: number, tcp: number}, extraConfigXml?: string}} [opts]
 * @returns {Promise<{url: string, pid: number, dispose: () => Promise<void>}>}
 */
export async function startClickHouse(opts = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-bench-ch-'));
  const [httpPort, tcpPort] = opts.ports ? [opts.ports.http, opts.ports.tcp] : [await freePort(), await freePort()];
  const config = join(dir, 'config.xml');
  writeFileSync(config, `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${dir}/server.log</log><errorlog>${dir}/server.err.log</errorlog></logger>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <listen_host>127.0.0.1</listen_host>
  <path>${dir}/data/</path>
  <tmp_path>${dir}/tmp/</tmp_path>
  <user_files_path>${dir}/user_files/</user_files_path>
  <format_schema_path>${dir}/format_schemas/</format_schema_path>
  <users_config>${USERS_XML}</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <mark_cache_size>5368709120</mark_cache_size>
${opts.extraConfigXml ?? ''}
</yandex>
`);
  const proc = spawn(BIN, [`--config-file=${config}`], { cwd: dir, stdio: ['ignore', 'ignore', 'ignore'] });
  const kill = () => proc.kill('SIGKILL');
  process.once('exit', kill);
  const url = `http://127.0.0.1:${httpPort}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`clickhouse-server exited with ${proc.exitCode}`);
    try {
      if ((await selectOne(url)) === '1') break;
    } catch { /* not up yet */ }
    if (Date.now() > deadline) throw new Error('clickhouse-server did not answer within 30 s');
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: proc.pid,
    dispose: async () => {
      process.removeListener('exit', kill);
      if (proc.exitCode === null) {
        const exited = new Promise((r) => proc.once('exit', r));
        proc.kill('SIGKILL');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
