/** What /readyz and the gRPC health service answer (readiness.ts). */
import { Readiness } from '../readiness.js';
import type { GatewayContext } from '../parts.js';
import { NO_STORAGE, nothing, noRoutes, type GatewayPlugin } from '../plugin.js';

/** Started last and quiesced first: the gateway reports not ready before anything stops. */
export function readinessPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'readiness',
    dependsOn: ['http', 'telemetry', 'missions', 'robotlink'],
    storage: NO_STORAGE,
    start: () => {
      const { parts } = ctx;
      const store = parts.get('store');
      const storeHealth = parts.get('storeHealth');
      const ingest = parts.get('ingest');
      const scheduler = parts.get('missions').scheduler;
      const grpc = parts.get('linkServer');
      parts
        .provide(
          'readiness',
          new Readiness(
            {
              // Reachable, or spooling: while the disk spool has room a store outage loses nothing and
              // slows no robot; a full spool with the store down is not ready.
              store: () => storeHealth.reachable || ingest.spoolAccepting(),
              lmdb: () => {
                // A read from a closed environment throws: a memory-mapped read, microseconds.
                store.meta.get('schemaVersion');
                return true;
              },
              scheduler: () => scheduler.running,
            },
            ctx.logFor('gateway'),
            (ready) => grpc.setServing(ready),
            { storeReachable: () => storeHealth.reachable },
          ),
        )
        .start();
      return Promise.resolve();
    },
    routes: noRoutes,
    quiesce: () => {
      ctx.parts.peek('readiness')?.stop();
      return Promise.resolve();
    },
    stop: nothing,
  };
}
