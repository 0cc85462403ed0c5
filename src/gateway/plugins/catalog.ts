/** The mission catalog: features, templates, each fleet's operation and its live runtime (src/missions/catalog). */
import { OperationRuntime } from '../../missions/catalog/runtime.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** Loads every fleet's operation before the scheduler may fire (the dispatch gate reads it). */
export function catalogPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'catalog',
    dependsOn: ['store', 'registry'],
    storage: {
      databases: ['features', 'templates', 'operations'],
      prefixes: { index: ['featuresByFleet', 'templatesByFleet', 'templatesByFeature'] },
    },
    start: () => {
      ctx.parts.provide('runtime', new OperationRuntime(ctx.parts.get('store'), { log: ctx.logFor('missions') })).loadAll();
      return Promise.resolve();
    },
    quiesce: nothing,
    stop: () => {
      ctx.parts.peek('runtime')?.close();
      return Promise.resolve();
    },
  };
}
