/** Tracked objects: robot detections matched into objects, their expiry (src/fleet/site/objects). */
import { objectRoutes } from '../../api/routes/objects.js';
import { ObjectTracker } from '../../fleet/site/objects/tracker.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** The object tracker listens to the robots' detections and sweeps expired objects. */
export function objectsPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'objects',
    dependsOn: ['registry', 'events', 'robotlink', 'idempotency'],
    storage: { databases: ['objects'], prefixes: { index: ['objectsByFleet', 'objectsByTrack', 'objectExpiry'] } },
    start: () => {
      const { parts } = ctx;
      parts.provide('objects', new ObjectTracker(parts.get('store'), parts.get('events'), parts.get('link'), { ttlMs: ctx.tunables.objectTtlMs, log: ctx.logFor('objects') }));
      return Promise.resolve();
    },
    routes: () => {
      const { parts } = ctx;
      return [{ name: 'objects', routes: objectRoutes({ store: parts.get('store'), identity: parts.get('identity'), objects: parts.get('objects'), idempotency: parts.get('idempotency') }) }];
    },
    quiesce: nothing,
    stop: async () => {
      await ctx.parts.peek('objects')?.close();
    },
  };
}
