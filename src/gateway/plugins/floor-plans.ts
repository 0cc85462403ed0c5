/** Floor plans per fleet (src/fleet/floor-plans): images and their placement, served by the map. */
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** Owns the `floorPlans` database; nothing runs in the background, so its hooks have no work. */
export function floorPlansPlugin(_ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'floor-plans',
    dependsOn: ['store'],
    storage: { databases: ['floorPlans'], prefixes: {} },
    start: () => Promise.resolve(),
    quiesce: nothing,
    stop: nothing,
  };
}
