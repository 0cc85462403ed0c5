/** Floor plans per fleet (src/fleet/floor-plans): images and their placement, served by the map. */
import { floorPlanRoutes } from '../../api/routes/floor-plan.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** Owns the `floorPlans` database and serves its routes; nothing runs in the background, so its hooks have no work. */
export function floorPlansPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'floor-plans',
    dependsOn: ['store', 'registry'],
    storage: { databases: ['floorPlans'], prefixes: {} },
    start: () => Promise.resolve(),
    routes: () => [{ name: 'floor-plan', routes: floorPlanRoutes({ store: ctx.parts.get('store'), identity: ctx.parts.get('identity') }) }],
    quiesce: nothing,
    stop: nothing,
  };
}
