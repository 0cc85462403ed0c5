/** Robot usage totals: distance and operating time from telemetry snapshots (src/fleet/robots/details). */
import { UsageMeter } from '../../fleet/robots/details/usage-meter.js';
import type { GatewayContext } from '../parts.js';
import { nothing, noRoutes, type GatewayPlugin } from '../plugin.js';

/** The usage meter: fed by the ingest's snapshots and finished runs, saved periodically and at stop. */
export function usagePlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'usage',
    dependsOn: ['store'],
    storage: { databases: ['robotUsage'], prefixes: {} },
    start: () => {
      ctx.parts.provide('usageMeter', new UsageMeter(ctx.parts.get('store'), { log: ctx.logFor('fleet') })).start();
      return Promise.resolve();
    },
    routes: noRoutes,
    quiesce: nothing,
    stop: async () => {
      await ctx.parts.peek('usageMeter')?.stop();
    },
  };
}
