/** Identity records (organizations, fleets, robots) and their indexes (src/store/identity.ts, robot-names.ts, vda5050-index.ts). */
import { fleetRoutes } from '../../api/routes/fleets.js';
import { orgRoutes } from '../../api/routes/orgs.js';
import { identityReads } from '../../store/identity-reads.js';
import { ensureRobotNameIndex } from '../../store/robot-names.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';
import { registryWrites } from '../../store/registry-writes.js';

/**
 * The fleet and robot registry; robots registered before the name index existed get their keys at
 * start. Provides `identity`, the reads every other module makes of its records.
 */
export function registryPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'registry',
    dependsOn: ['store'],
    storage: {
      databases: ['orgs', 'fleets', 'robots'],
      prefixes: { index: ['fleetsByOrg', 'robotsByFleet', 'robotsByName', 'robotsByVda5050'], meta: ['robotNameIndex', 'vda5050Bindings'] },
    },
    // resolve() reads only the name index, so it must be complete before anything serves a name.
    start: async () => {
      const store = ctx.parts.get('store');
      await ensureRobotNameIndex(store);
      ctx.parts.provide('identity', identityReads(store));
      ctx.parts.provide('registryWrites', registryWrites(store));
    },
    routes: () => {
      const store = ctx.parts.get('store');
      const identity = ctx.parts.get('identity');
      return [
        { name: 'fleets', routes: fleetRoutes({ store }) },
        { name: 'orgs', routes: orgRoutes({ store, identity }) },
      ];
    },
    quiesce: nothing,
    stop: nothing,
  };
}
