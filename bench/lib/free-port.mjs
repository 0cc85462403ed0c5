// A loopback port that was free a moment ago (for the servers a benchmark starts on fixed ports).
import { createServer } from 'node:net';

/** Resolves with a loopback port the kernel just handed out and released. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}
