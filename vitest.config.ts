import { defineConfig } from 'vitest/config';

// Forks, not threads: chdb must run on a process main thread (it crashes when a worker_thread exits),
// and tests start real servers that want their own process.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Fault tests run for minutes under load: `npm run test:faults` (vitest.faults.config.ts).
    exclude: ['test/faults/**', '**/node_modules/**'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 30_000,
    hookTimeout: 60_000,
    globalSetup: ['test/support/global-setup.ts'],
    // Every response an e2e file's HTTP helper received is validated against /openapi.json after the file.
    // In-process telemetry runs on the decoder the runner's environment names (as `fleetgw serve` would).
    setupFiles: ['test/support/openapi-responses.setup.ts', 'test/support/telemetry-env.setup.ts'],
  },
});
