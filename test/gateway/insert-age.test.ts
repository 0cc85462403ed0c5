/**
 * FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS: how long telemetry rows may wait for their store insert. The
 * gateway must hand it to the ingest's insert queue: with a long age a few rows stay uninserted
 * until a flush, with the default (1 s) they are inserted on their own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TUNABLES, tunablesFromEnv } from '../../src/config.js';
import { startGateway, type Gateway } from '../../src/gateway/gateway.js';
import { encodeBatch } from '../telemetry/helpers.js';
import { sleep } from '../support/until.js';

async function withGateway(tunables: { telemetryInsertMaxAgeMs?: number }, body: (gw: Gateway) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'fleetgw-insert-age-'));
  const gw = await startGateway({ dataDir: dir, host: '127.0.0.1', httpPort: 0, grpcPort: 0, clickhouseUrl: null, tls: 'insecure', tunables });
  try {
    await body(gw);
  } finally {
    await gw.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('telemetry insert age (FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS)', () => {
  it('is read from the environment, 1 s by default, and refused when not a positive integer', () => {
    expect(DEFAULT_TUNABLES.telemetryInsertMaxAgeMs).toBe(1_000);
    expect(tunablesFromEnv({}).telemetryInsertMaxAgeMs).toBe(1_000);
    expect(tunablesFromEnv({ FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS: '5000' }).telemetryInsertMaxAgeMs).toBe(5_000);
    expect(() => tunablesFromEnv({ FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS: '0' })).toThrow(/FLEETGW_TELEMETRY_INSERT_MAX_AGE_MS/);
  });

  it('a starting gateway gives its insert queue the age: rows wait for it, or for a flush', async () => {
    const t0 = Date.now();
    await withGateway({ telemetryInsertMaxAgeMs: 60_000 }, async (gw) => {
      gw.ingest.push('age-robot', 'age-fleet', encodeBatch(t0, 5));
      // Well past the default age (1 s) and the batch age: with 60 s nothing is inserted yet.
      await sleep(3_000);
      expect(gw.ingest.stats().inserts).toBe(0);
      await gw.ingest.flush();
      expect(gw.ingest.stats().rowsWritten).toBe(5);
    });
    await withGateway({}, async (gw) => {
      gw.ingest.push('age-robot', 'age-fleet', encodeBatch(t0, 5));
      await sleep(3_000);
      expect(gw.ingest.stats().rowsWritten).toBe(5);
    });
  }, 60_000);
});
