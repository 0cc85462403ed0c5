/** Identity records (organizations, fleets, robots) and their indexes (src/store/identity.ts, robot-names.ts, vda5050-index.ts). */
import { ensureRobotNameIndex } from '../../store/robot-names.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** The fleet and robot registry; robots registered before the name index existed get their keys at start. */
export function registryPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'registry',
    dependsOn: ['store'],
    storage: {
      databases: ['orgs', 'fleets', 'robots'],
      prefixes: { index: ['fleetsByOrg', 'robotsByFleet', 'robotsByName', 'robotsByVda5050'], meta: ['robotNameIndex', 'vda5050Bindings'] },
    },
    // resolve() reads only the name index, so it must be complete before anything serves a name.
    start: () => ensureRobotNameIndex(ctx.parts.get('store')),
    quiesce: nothing,
    stop: nothing,
  };
}
