import { defineConfig } from 'vitest/config';

// `npm run test:faults` (issue 14 part 1): kill -9 of the gateway, a ClickHouse outage and a full
// disk spool, through the real processes. Apart from `npm test` because they run for minutes and one
// at a time (they load the machine on purpose); .ci/run runs both.
export default defineConfig({
  test: {
    include: ['test/faults/**/*.test.ts'],
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
    testTimeout: 300_000,
    hookTimeout: 120_000,
    globalSetup: ['test/support/global-setup.ts'],
  },
});
