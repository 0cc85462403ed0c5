/**
 * The disk spool filled to its bound (issue 14 part 1): the ClickHouse server is down long enough
 * for a 1 MiB spool to fill. Then blocks wait in memory, and at the memory high-water mark (1 MiB
 * here, FLEETGW_TELEMETRY_HIGH_WATER_BYTES) the gateway stops reading robot telemetry: the robots are
 * slowed, the gateway drops nothing. The agents hold what they cannot send in their bounded queues,
 * dropping the oldest and counting it (the documented policy). When the server is back the spool is
 * replayed, reads resume, and the store holds every sample except the counted drops, each once.
 * 100 robots x 50 Hz, so the agents' queues (5 s of samples) overflow within the test.
 */
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startClickHouseServer, type ClickHouseTestServer } from '../support/clickhouse-server.js';
import type { RunningGateway } from '../support/gateway.js';
import { allOnline, countClickHouse, freePort, metric, metricReaches, provision, report, serve, sim, sleep, type Depot } from './support.js';

const ROBOTS = 100;
const HZ = 50;
const SPOOL_MB = 1;
const HIGH_WATER = 1024 * 1024;
const OUTAGE_S = 20;
const skipReason = inject('clickhouseSkipReason');

describe.skipIf(inject('clickhouseUrl') === null)(`a full disk spool${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  let depot: Depot | null = null;
  let gw: RunningGateway | null = null;
  let server: ClickHouseTestServer | null = null;
  afterAll(async () => {
    await gw?.stop('SIGKILL');
    await server?.dispose();
    if (depot) rmSync(depot.dataDir, { recursive: true, force: true });
  });

  it(`spool of ${SPOOL_MB} MiB full during a ${OUTAGE_S} s outage: robots slowed, drops only at the agents and counted`, async () => {
    server = await startClickHouseServer();
    depot = await provision(ROBOTS);
    const port = await freePort();
    gw = await serve(depot, port, ['--clickhouse-url', `${server.url}/faults`, '--telemetry-spool-mb', String(SPOOL_MB)],
      { FLEETGW_TELEMETRY_HIGH_WATER_BYTES: String(HIGH_WATER) });
    const robots = sim(depot, port, HZ);
    await allOnline(gw, depot);
    // Rows reaching the server before it goes down.
    await metricReaches(gw, depot, 'fleetgw_telemetry_samples_stored_total', 1, 'the first rows stored');
    await server.stop('SIGKILL');
    const downAt = Date.now();
    let spoolPeak = 0;
    let pausedSeen = 0;
    let notReadySeen = false;
    // Time-based on purpose: the outage's length is the fault; its figures are sampled twice a second.
    while (Date.now() - downAt < OUTAGE_S * 1000) {
      await sleep(500);
      spoolPeak = Math.max(spoolPeak, await metric(gw, depot, 'fleetgw_telemetry_spool_bytes'));
      pausedSeen = Math.max(pausedSeen, await metric(gw, depot, 'fleetgw_telemetry_backpressure'));
      // Store down and spool full: neither reachable nor spooling, so not ready.
      if ((await fetch(`${gw.ready.http}/readyz`)).status === 503) notReadySeen = true;
    }
    const fullWaits = await metric(gw, depot, 'fleetgw_telemetry_spool_full_waits_total');
    await server.start();
    const upAt = Date.now();
    for (;;) {
      const backlog = await metric(gw, depot, 'fleetgw_telemetry_spool_backlog_blocks');
      const paused = await metric(gw, depot, 'fleetgw_telemetry_backpressure');
      if (backlog === 0 && paused === 0) break;
      if (Date.now() - upAt > 120_000) throw new Error('spool not drained within 120 s of the server coming back');
      await sleep(500); // the poll interval
    }
    const drainMs = Date.now() - upAt;
    // The agents send what they queued while slowed. Still a fixed time: nothing the gateway shows
    // tells when the agents' queues are empty (the sim reports them only at its stop).
    await sleep(5_000);
    const sent = await robots.stop();
    // What the gateway read (a figure below `sent` is lost on the way, not in the gateway).
    const received = await metric(gw, depot, 'fleetgw_telemetry_samples_received_total');
    expect(await gw.stop('SIGTERM')).toBe(0);
    gw = null;
    const stored = await countClickHouse(server.url, 'faults');
    const { lost, droppedCounted } = report('spool-full', sent, stored, {
      spoolBoundBytes: SPOOL_MB * 1024 * 1024, spoolPeakBytes: spoolPeak, spoolFullWaits: fullWaits, backpressure: pausedSeen, drainMs, outageS: OUTAGE_S, received,
    });
    // The bound holds: an empty spool takes any one block, so the peak passes it by about a block
    // (0.87 MB in docs/operations.md's run; blocks are far below their 48 MiB bound here).
    expect(spoolPeak).toBeGreaterThan(0.5 * SPOOL_MB * 1024 * 1024);
    expect(spoolPeak).toBeLessThan(SPOOL_MB * 1024 * 1024 + 16 * 1024 * 1024);
    expect(fullWaits).toBeGreaterThan(0);
    expect(pausedSeen).toBe(1);
    expect(notReadySeen).toBe(true);
    expect(droppedCounted).toBeGreaterThan(0);
    expect(stored.duplicated).toBe(0);
    expect(lost).toBe(0);
  });
});
