import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort, withFreshPorts } from './net.js';
import { PORT_TAKEN, startClickHouseServer, clickhouseServerUnavailableReason } from './clickhouse-server.js';

describe('test ports', () => {
  it('are bindable, below the ephemeral range (no outgoing connection takes them), never handed out twice', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 200; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const p of ports) expect(p).toBeLessThan(32_768);
  });

  it('a start whose port was taken is tried again, at most 3 times; any other failure at once', async () => {
    let calls = 0;
    const taken = (): Promise<number> => {
      calls++;
      return calls < 3 ? Promise.reject(new Error(PORT_TAKEN)) : Promise.resolve(calls);
    };
    expect(await withFreshPorts(taken, (e) => e instanceof Error && e.message === PORT_TAKEN)).toBe(3);
    calls = 0;
    const always = (): Promise<number> => { calls++; return Promise.reject(new Error(PORT_TAKEN)); };
    await expect(withFreshPorts(always, () => true)).rejects.toThrow(PORT_TAKEN);
    expect(calls).toBe(3);
    calls = 0;
    await expect(withFreshPorts(always, () => false)).rejects.toThrow(PORT_TAKEN);
    expect(calls).toBe(1);
  });

  it.skipIf(clickhouseServerUnavailableReason() !== null && process.env.CI !== 'true')(
    'a ClickHouse server whose chosen port is taken fails with the reason from its error log', async () => {
      const taken = createServer();
      const port = await freePort();
      await new Promise<void>((r) => taken.listen(port, '127.0.0.1', r));
      try {
        // The native port: the harness's readiness probe goes to the HTTP one, not to this listener.
        const err = await startClickHouseServer({ ports: { http: await freePort(), tcp: port } }).then(
          async (s) => { await s.dispose(); return null; }, (e: unknown) => e);
        expect(err).toBeInstanceOf(Error);
        expect((err as Error).message).toContain(PORT_TAKEN);
        expect((err as Error).message).toContain(String(port));
      } finally {
        await new Promise<void>((r) => taken.close(() => r()));
      }
    });
});
