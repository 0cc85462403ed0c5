/**
 * `fleetgw serve --clickhouse-url` pointing at a host that accepts the connection and never answers
 * (what a server dropping packets, or a hung one, looks like to the client): the start must not wait
 * for the client's request timeout. The gateway is ready within a few seconds, reports the store
 * down, and stops on SIGTERM. Real process; the "server" is a local socket that holds connections.
 */
import { rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeDataDir, startGatewayProcess, type RunningGateway } from '../support/gateway.js';
import { until } from '../support/until.js';

describe('the gateway starts while its ClickHouse server accepts and never answers', () => {
  let silent: Server;
  const sockets: Socket[] = [];
  let port = 0;
  let d: ReturnType<typeof makeDataDir>;
  let gw: RunningGateway | null = null;

  beforeAll(async () => {
    silent = createServer((s) => {
      sockets.push(s);
      s.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    port = (silent.address() as { port: number }).port;
    d = makeDataDir('fleetgw-store-silent-');
  });

  afterAll(async () => {
    await gw?.stop('SIGKILL');
    for (const s of sockets) s.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
    if (d) rmSync(d.dataDir, { recursive: true, force: true });
  });

  it('is ready without waiting for the store, reports it down, and stops on SIGTERM', async () => {
    const started = Date.now();
    gw = await startGatewayProcess(d.dataDir, ['--insecure-http', '--clickhouse-url', `http://127.0.0.1:${port}/silent_depot`]);
    // Loose safety bound (the client's request timeout is 30 s): the start waits ~2 s for the store.
    expect(Date.now() - started).toBeLessThan(20_000);
    // The set-up attempt reached the silent server: the store really was being waited on.
    expect(sockets.length).toBeGreaterThan(0);
    expect(gw.ready).toMatchObject({ telemetryStore: 'clickhouse', telemetrySchemaVersion: null });
    await until(async () => {
      const res = await fetch(`${gw!.ready.http}/readyz`);
      return res.status === 200 && ((await res.json()) as { status: string }).status === 'degraded';
    }, 20_000, 'readyz says degraded');
    // Nor does the stop wait for the set-up attempt still out (loose bound, as above).
    const stopping = Date.now();
    expect(await gw.stop('SIGTERM')).toBe(0);
    expect(Date.now() - stopping).toBeLessThan(20_000);
    gw = null;
  }, 60_000);
});
