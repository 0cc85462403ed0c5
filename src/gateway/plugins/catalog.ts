/** The mission catalog: features, templates, each fleet's operation and its live runtime (src/missions/catalog). */
import { controlOperationRoutes } from '../../api/routes/control-operation.js';
import { featureRoutes } from '../../api/routes/features.js';
import { templateRoutes } from '../../api/routes/templates.js';
import { NOTHING_ADVERTISED, type AdvertisedCapabilities } from '../../missions/catalog/robot-capabilities.js';
import { catalogReads } from '../../missions/catalog/catalog-reads.js';
import { OperationRuntime } from '../../missions/catalog/runtime.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';
import { catalogWrites } from '../../missions/catalog/catalog-writes.js';

/** Loads every fleet's operation before the scheduler may fire (the dispatch gate reads it); serves features, templates and the operation. */
export function catalogPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'catalog',
    dependsOn: ['store', 'registry', 'events', 'idempotency', 'field-rules'],
    storage: {
      databases: ['features', 'templates', 'operations'],
      prefixes: { index: ['featuresByFleet', 'templatesByFleet', 'templatesByFeature'] },
    },
    start: () => {
      const store = ctx.parts.get('store');
      ctx.parts.provide('catalog', catalogReads(store));
      ctx.parts.provide('catalogWrites', catalogWrites(store));
      ctx.parts.provide('runtime', new OperationRuntime(store, { log: ctx.logFor('missions') })).loadAll();
      return Promise.resolve();
    },
    routes: () => {
      const { parts } = ctx;
      const store = parts.get('store');
      const identity = parts.get('identity');
      const events = parts.get('events');
      const idempotency = parts.get('idempotency');
      const runtime = parts.get('runtime');
      // Roster checks count a robot's capabilities as the dispatcher does: registered plus advertised.
      // The dispatcher (missions) builds on this catalog, so it is read per check, once it exists.
      const advertised: AdvertisedCapabilities = {
        advertisedCapabilities: (robotId) => (parts.peek('missions')?.tracker ?? NOTHING_ADVERTISED).advertisedCapabilities(robotId),
      };
      return [
        { name: 'features', routes: featureRoutes({ store, identity, events, idempotency, fieldRules: parts.get('fieldRules') }) },
        { name: 'templates', routes: templateRoutes({ store, identity, events, idempotency, runtime, advertised }) },
        { name: 'control-operation', routes: controlOperationRoutes({ store, identity, events, runtime, advertised, log: ctx.logFor('api') }) },
      ];
    },
    quiesce: nothing,
    stop: () => {
      ctx.parts.peek('runtime')?.close();
      return Promise.resolve();
    },
  };
}
