/** `fleetgw serve --clickhouse-cluster` option checks (exit 2) and no shard reachable at start (exit 1, named). */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { fleetgw } from '../support/cli.js';
import { freePort } from '../support/net.js';

const dataDir = mkdtempSync(join(tmpdir(), 'fleetgw-cluster-cli-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function serve(extra: string[]): { status: number | null; stderr: string } {
  return fleetgw(['serve', '--data-dir', dataDir, '--insecure-http', '--port', '0', '--grpc-port', '0', '--log-level', 'warn', ...extra]);
}

describe('fleetgw serve --clickhouse-cluster', () => {
  const a = 'http://127.0.0.1:18123';
  const b = 'http://127.0.0.1:18124';
  it.each([
    [['--clickhouse-url', `${a}/f`, '--clickhouse-cluster', 'c'], /--clickhouse-cluster and --clickhouse-shard-urls go together/],
    [['--clickhouse-cluster', 'c', '--clickhouse-shard-urls', `${a},${b}`], /--clickhouse-cluster needs --clickhouse-url/],
    [['--clickhouse-url', `${a}/f`, '--clickhouse-cluster', 'c-1', '--clickhouse-shard-urls', `${a},${b}`], /--clickhouse-cluster must be a plain identifier/],
    [['--clickhouse-url', `${a}/f`, '--clickhouse-cluster', 'c', '--clickhouse-shard-urls', `${a},${a}/`], /lists a server twice/],
    [['--clickhouse-url', 'http://127.0.0.1:18125/f', '--clickhouse-cluster', 'c', '--clickhouse-shard-urls', `${a},${b}`], /--clickhouse-url must be one of --clickhouse-shard-urls/],
    [['--clickhouse-url', `${a}/f`, '--clickhouse-cluster', 'c', '--clickhouse-shard-urls', `${a},ftp://x`], /--clickhouse-shard-urls: .*http\(s\)/],
  ])('refuses %j (exit 2)', (extra, message) => {
    const r = serve(extra);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('does not start while no shard answers, and names the first (exit 1)', async () => {
    const [p1, p2] = [await freePort(), await freePort()];
    const r = serve(['--clickhouse-url', `http://127.0.0.1:${p1}/f`, '--clickhouse-cluster', 'c', '--clickhouse-shard-urls', `http://127.0.0.1:${p1},http://127.0.0.1:${p2}`]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`ClickHouse shard 1 at 127.0.0.1:${p1}`);
  }, 60_000);
});
