/** Loopback port helpers shared by tests that start real servers. */
import { createServer, type AddressInfo } from 'node:net';

/**
 * Ports are drawn from below Linux's default ephemeral range (32768-60999). A port from `listen(0)`
 * lies inside it, and between the moment it is chosen and the moment a child server binds it, any
 * outgoing connection on the machine (a robot reconnecting, an HTTP client, a ZooKeeper session) may
 * be given it as its local port: CI on ec73e32 lost a clickhouse-server shard to "Address already in
 * use" (exit 70) that way. Outgoing connections never take a port below the range.
 */
const LOW = 20_000;
const HIGH = 32_767;
/**
 * Each vitest worker (VITEST_POOL_ID 1, 2, ...; the main process, where global setup runs, has none:
 * 0) draws from its own slice of the range, so two test files running at once never choose the same
 * port: a chosen port may wait seconds before its server binds it (a cluster's shards start one after
 * another).
 */
const SLICES = 8;
const SLICE = Math.floor((HIGH - LOW + 1) / SLICES);
const poolId = Number(process.env.VITEST_POOL_ID ?? 0);
const sliceLow = LOW + ((Number.isInteger(poolId) && poolId >= 0 ? poolId : 0) % SLICES) * SLICE;
/** Never hand out the same port twice in one process (a closed test socket frees it at once). */
const handedOut = new Set<number>();

/** The port bound, or null when it is taken; other errors (EMFILE, ...) are thrown. */
function tryListen(port: number): Promise<number | null> {
  const srv = createServer();
  return new Promise((resolve, reject) => {
    srv.once('error', (e: NodeJS.ErrnoException) => (e.code === 'EADDRINUSE' ? resolve(null) : reject(e)));
    srv.listen(port, '127.0.0.1', () => {
      const bound = (srv.address() as AddressInfo).port;
      srv.close(() => resolve(bound));
    });
  });
}

/**
 * Runs `start` (which chooses its ports afresh) up to 3 times while it fails with an error `retry`
 * accepts: a port chosen by {@link freePort} may be taken before the server binds it.
 */
export async function withFreshPorts<T>(start: () => Promise<T>, retry: (e: unknown) => boolean): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (e) {
      if (attempt >= 3 || !retry(e)) throw e;
    }
  }
}

/**
 * A TCP port on 127.0.0.1 that was free a moment ago, below the ephemeral range, in this worker's
 * slice and not returned before by this process; falls back to the kernel's choice (`listen(0)`) if
 * 200 draws find none.
 * @throws on an error other than a taken port (EMFILE, ...)
 */
export async function freePort(): Promise<number> {
  for (let i = 0; i < 200; i++) {
    const port = sliceLow + Math.floor(Math.random() * SLICE);
    if (handedOut.has(port)) continue;
    if ((await tryListen(port)) === port) {
      handedOut.add(port);
      return port;
    }
  }
  for (let i = 0; i < 100; i++) {
    const port = await tryListen(0);
    if (port !== null && !handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
  throw new Error('no free loopback port found');
}
