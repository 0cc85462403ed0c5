/** The correlated event log (src/events). */
import { eventRoutes } from '../../api/routes/events.js';
import { EventLog } from '../../events/log.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** One event log per store: its seq counter must be the only one. */
export function eventsPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'events',
    dependsOn: ['store', 'registry'],
    storage: { databases: ['events'], prefixes: { meta: ['eventSeq'] } },
    start: () => {
      ctx.parts.provide('events', new EventLog(ctx.parts.get('store')));
      return Promise.resolve();
    },
    routes: () => [{ name: 'events', routes: eventRoutes({ store: ctx.parts.get('store'), identity: ctx.parts.get('identity'), events: ctx.parts.get('events') }) }],
    quiesce: nothing,
    stop: nothing,
  };
}
