/**
 * FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS, _MIN_ROWS and _SMALL_MAX_AGE_MS: how long telemetry rows may
 * wait for their store insert. The gateway must hand them to the ingest's insert queue: with a long
 * age decoded rows stay uninserted until a flush; with the defaults a small block (here 5 rows, under
 * 20,000) waits past the 1 s age and is inserted on its own at 5 s; with a minimum of 1 row it is
 * inserted at the age even when the small-block age is 30 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNABLES, tunablesFromEnv } from '../../src/config.js';
import { startGateway, type Gateway } from '../../src/gateway/gateway.js';
import { encodeBatch } from '../telemetry/helpers.js';
import { sleep, until } from '../support/until.js';

async function withGateway(tunables: { telemetryInsertMaxAgeMs?: number; telemetryInsertMinRows?: number; telemetryInsertSmallMaxAgeMs?: number }, body: (gw: Gateway) => Promise<void>): Promise<void> {
  let dir: string | undefined;
  let gw: Gateway | undefined;
  try {
    dir = mkdtempSync(join(tmpdir(), 'fleetgw-insert-age-'));
    gw = await startGateway({ dataDir: dir, host: '127.0.0.1', httpPort: 0, grpcPort: 0, clickhouseUrl: null, tls: 'insecure', tunables });
    await body(gw);
  } finally {
    await gw?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

describe('telemetry insert age (FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS)', () => {
  it('is read from the environment, 1 s by default, and refused when not a positive integer or above 30 s', () => {
    expect(DEFAULT_TUNABLES.telemetryInsertMaxAgeMs).toBe(1_000);
    expect(tunablesFromEnv({}).telemetryInsertMaxAgeMs).toBe(1_000);
    expect(tunablesFromEnv({ FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS: '5000' }).telemetryInsertMaxAgeMs).toBe(5_000);
    expect(tunablesFromEnv({ FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS: '30000' }).telemetryInsertMaxAgeMs).toBe(30_000);
    expect(() => tunablesFromEnv({ FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS: '0' })).toThrow(/FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS must be a positive integer/);
    expect(() => tunablesFromEnv({ FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS: '30001' })).toThrow(/FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS must be at most 30000/);
  });

  it('the small-block rule: 20,000 rows and 5 s by default, bounded like the age', () => {
    expect(tunablesFromEnv({})).toMatchObject({ telemetryInsertMinRows: 20_000, telemetryInsertSmallMaxAgeMs: 5_000 });
    expect(tunablesFromEnv({ FLEETGW_TELEMETRY_INSERT_MIN_ROWS: '1', FLEETGW_TELEMETRY_INSERT_SMALL_MAX_AGE_MS: '30000' }))
      .toMatchObject({ telemetryInsertMinRows: 1, telemetryInsertSmallMaxAgeMs: 30_000 });
    expect(() => tunablesFromEnv({ FLEETGW_TELEMETRY_INSERT_MIN_ROWS: '100001' })).toThrow(/FLEETGW_TELEMETRY_INSERT_MIN_ROWS must be at most 100000/);
    expect(() => tunablesFromEnv({ FLEETGW_TELEMETRY_INSERT_SMALL_MAX_AGE_MS: '30001' })).toThrow(/FLEETGW_TELEMETRY_INSERT_SMALL_MAX_AGE_MS must be at most 30000/);
    expect(() => tunablesFromEnv({ FLEETGW_TELEMETRY_INSERT_MIN_ROWS: '0' })).toThrow(/FLEETGW_TELEMETRY_INSERT_MIN_ROWS must be a positive integer/);
  });

  it('a starting gateway gives its insert queue the age: decoded rows wait for it, or for a flush', async () => {
    const t0 = Date.now();
    await withGateway({ telemetryInsertMaxAgeMs: 30_000 }, async (gw) => {
      gw.ingest.push('age-robot', 'age-fleet', encodeBatch(t0, 5));
      // Decoded first (so "nothing inserted" below is about the age, not a slow decode)...
      await until(() => gw.ingest.stats().samplesIn === 5, 15_000, 'rows decoded');
      // Time-based on purpose (which age the queue got is what is tested): well past the default age
      // (1 s), with 30 s the rows still wait in the queue.
      await sleep(2_500);
      expect(gw.ingest.stats().inserts).toBe(0);
      expect(gw.ingest.stats().queueBytes).toBeGreaterThan(0);
      await gw.ingest.flush();
      expect(gw.ingest.stats().rowsWritten).toBe(5);
    });
    await withGateway({}, async (gw) => {
      gw.ingest.push('age-robot', 'age-fleet', encodeBatch(t0, 5));
      await until(() => gw.ingest.stats().samplesIn === 5, 15_000, 'rows decoded');
      // 5 rows is a small block: past the 1 s age it waits for more rows (time-based on purpose)...
      await sleep(2_500);
      expect(gw.ingest.stats().inserts).toBe(0);
      // ...and is inserted on its own at the small-block age (5 s; any bound far below 30 s will do).
      await until(() => gw.ingest.stats().rowsWritten === 5, 15_000, 'inserted at the small-block age');
    });
    await withGateway({ telemetryInsertMinRows: 1, telemetryInsertSmallMaxAgeMs: 30_000 }, async (gw) => {
      gw.ingest.push('age-robot', 'age-fleet', encodeBatch(t0, 5));
      // At least 1 row: the 1 s age applies, not the 30 s small-block age.
      await until(() => gw.ingest.stats().rowsWritten === 5, 15_000, 'inserted at the default age');
    });
  }, 120_000);
});
