/** The telemetry pipe: ingest, decode workers, the sample store and its health (src/telemetry). */
import { telemetryHistoryRoutes } from '../../api/routes/telemetry-history.js';
import { utilizationRoutes } from '../../api/routes/utilization.js';
import { createTelemetryIngest } from '../../telemetry/ingest/index.js';
import { latestSnapshots } from '../../telemetry/snapshots/index.js';
import { StoreHealth } from '../../telemetry/store/index.js';
import { HeapGrowthPolicy } from '../heap-growth.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** Owns the latest snapshot of each robot; the sample store's health is probed from here on. */
export function telemetryPlugin(ctx: GatewayContext): GatewayPlugin {
  let stopHeapGrowth = (): void => {};
  return {
    name: 'telemetry',
    dependsOn: ['registry', 'stream', 'alerts', 'usage', 'metrics'],
    storage: { databases: ['snapshots'], prefixes: {} },
    start: async () => {
      const { opts, tunables: t, parts } = ctx;
      const metrics = parts.get('metrics');
      const alerts = parts.get('alerts');
      const usageMeter = parts.get('usageMeter');
      parts.provide('snapshots', latestSnapshots(parts.get('store')));
      // Process-wide, before the telemetry path allocates; follows the telemetry rate (heap-growth.ts).
      const heapGrowth = new HeapGrowthPolicy(t.heapGrowingPercentLowLoad, t.heapGrowingPercent);
      const ingest = parts.provide(
        'ingest',
        await createTelemetryIngest({
          store: parts.get('store'),
          dataDir: opts.dataDir,
          ...(opts.telemetrySpoolMaxBytes !== undefined ? { spoolMaxBytes: opts.telemetrySpoolMaxBytes } : {}),
          highWaterBytes: t.telemetryHighWaterBytes,
          lowWaterBytes: Math.floor(t.telemetryHighWaterBytes / 4),
          ...(opts.clickhouseUrl !== null ? { clickhouseUrl: opts.clickhouseUrl } : {}),
          ...(opts.clickhouseAuth !== undefined ? { clickhouseAuth: opts.clickhouseAuth } : {}),
          ...(opts.clickhouseCluster !== undefined ? { clickhouseCluster: opts.clickhouseCluster } : {}),
          ...(opts.telemetry?.clickhouseInsertFormat !== undefined ? { clickhouseInsertFormat: opts.telemetry.clickhouseInsertFormat } : {}),
          live: parts.get('hub'),
          foxglove: parts.get('foxglove'),
          // At most once a second per robot (the snapshot interval), never per sample.
          onSnapshot: (robotId, value) => {
            alerts.telemetry.onSnapshot(robotId, value);
            usageMeter.observe(robotId, value);
          },
          insert: {
            maxAgeMs: t.telemetryInsertMaxAgeMs,
            minRows: t.telemetryInsertMinRows,
            smallMaxAgeMs: t.telemetryInsertSmallMaxAgeMs,
            onInsert: (a) => {
              metrics.insertDone(a.ok, a.durationMs);
              parts.peek('storeHealth')?.noteInsert(a.ok, a.durationMs);
            },
          },
          log: ctx.logFor('telemetry'),
        }),
      );
      // Inserts report to it (above), the probe runs from here on: /readyz never queries the store itself.
      const storeHealth = parts.provide('storeHealth', new StoreHealth(ingest.sampleStore, ctx.logFor('telemetry')));
      // A server that did not answer at start (or refused): the gateway serves without it, and reports it.
      const setUpError = ingest.sampleStore.setUpError;
      if (setUpError !== null) storeHealth.note(false, setUpError);
      storeHealth.start();
      const heapLog = ctx.logFor('gateway');
      stopHeapGrowth = heapGrowth.follow(
        () => ingest.stats().samplesIn,
        (percent, rate) => {
          heapLog.info({ heapGrowingPercent: percent, samplesPerS: Math.round(rate) }, `V8 heap growing percent set to ${percent} for telemetry at ${Math.round(rate)} samples/s`);
        },
        undefined,
        (atPeak) => ingest.setPeakLoad(atPeak),
      );
      ingest.onBackpressure((paused) => metrics.backpressure(paused));
    },
    routes: () => {
      const { tunables: t, parts } = ctx;
      const store = parts.get('store');
      const identity = parts.get('identity');
      const log = ctx.logFor('api');
      // Bound-parameter reads on the telemetry store. The served gateway builds these routes after its
      // start opened the store; only the offline document (openapi-document.ts) has no ingest.
      const sampleStore = parts.peek('ingest')?.sampleStore;
      const select = sampleStore !== undefined ? sampleStore.select.bind(sampleStore) : null;
      return [
        { name: 'utilization', routes: utilizationRoutes({ store, identity, select, log }) },
        { name: 'telemetry-history', routes: telemetryHistoryRoutes({ identity, select, log, exportMaxBytes: t.historyExportMaxBytes, maxExports: t.historyExports }) },
      ];
    },
    quiesce: nothing,
    stop: async () => {
      stopHeapGrowth();
      ctx.parts.peek('storeHealth')?.stop();
      // Drains what is queued into the store (or the spool) and ends the decode workers.
      await ctx.parts.peek('ingest')?.close();
    },
  };
}
