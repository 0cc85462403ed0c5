/**
 * kill -9 of the gateway, 10 times in a row at random moments, under 100 robots x 10 Hz (issue 14
 * part 1): the agents keep what the gateway has not acknowledged as durable and resend it after the
 * restart; the gateway drops what it already had (by robot, epoch and batch seq) and replays its
 * spool. Expected: 0 lost, 0 duplicated rows per (robot, ts). Embedded chdb store (its inserts carry
 * the block's deduplication token, so a block inserted just before a kill is not stored twice).
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../support/gateway.js';
import { allOnline, countChdb, freePort, metric, metricReaches, provision, report, serve, sim, sleep, streamedFor, type Depot } from './support.js';

const ROBOTS = 100;
const HZ = 10;
const KILLS = Number(process.env.FLEETGW_FAULT_KILLS ?? 10);

describe('kill -9 of the gateway under load', () => {
  let depot: Depot | null = null;
  let gw: RunningGateway | null = null;
  afterAll(async () => {
    await gw?.stop('SIGKILL');
    if (depot) rmSync(depot.dataDir, { recursive: true, force: true });
  });

  it(`${KILLS} kills at random moments, ${ROBOTS} robots x ${HZ} Hz: nothing lost, nothing duplicated`, async () => {
    depot = await provision(ROBOTS);
    const port = await freePort();
    gw = await serve(depot, port);
    const robots = sim(depot, port, HZ);
    // Streaming, and the store taking rows, before the first kill.
    await allOnline(gw, depot);
    await metricReaches(gw, depot, 'fleetgw_telemetry_samples_stored_total', 1, 'the first rows stored');
    const upMs: number[] = [];
    for (let k = 0; k < KILLS; k++) {
      // A random moment: anywhere in a block's life (batching, spool write, insert, checkpoint).
      // Time-based on purpose: the kill's moment is random in time, not tied to any state.
      const wait = 1_000 + Math.floor(Math.random() * 3_000);
      await sleep(wait);
      await gw.stop('SIGKILL');
      const t0 = Date.now();
      gw = await serve(depot, port);
      upMs.push(Date.now() - t0);
    }
    // Every agent back (each on its own backoff) and its resends read (two seconds of telemetry past
    // them), then a clean stop of the robots (each half-closes its stream: the gateway has read all
    // it wrote), then of the gateway.
    await allOnline(gw, depot);
    await streamedFor(gw, depot, HZ, 2, await metric(gw, depot, 'fleetgw_telemetry_samples_received_total'));
    const sent = await robots.stop();
    expect(await gw.stop('SIGTERM')).toBe(0);
    gw = null;
    const stored = await countChdb(depot.dataDir);
    const { lost } = report('kill-gateway', sent, stored, { kills: KILLS, robots: ROBOTS, hz: HZ, restartMsMax: Math.max(...upMs) });
    expect(sent.batchesResent).toBeGreaterThan(0);
    expect(stored.duplicated).toBe(0);
    expect(lost).toBe(0);
  });
});
