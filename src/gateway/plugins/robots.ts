/**
 * The robot routes: the registry's records as the API serves them, with each robot's link state,
 * latest snapshot and usage, and the registration changes that reach into commands and missions
 * (src/fleet/robots). The records themselves are the registry's; this plugin owns no storage.
 */
import { robotAdminRoutes } from '../../api/routes/robot-admin.js';
import { robotDetailsRoutes } from '../../api/routes/robot-details.js';
import { robotRoutes } from '../../api/routes/robots.js';
import type { GatewayContext } from '../parts.js';
import { NO_STORAGE, nothing, type GatewayPlugin } from '../plugin.js';

/** After the link, commands and missions: moving or retiring a robot holds its commands and checks its runs. */
export function robotsPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'robots',
    dependsOn: ['registry', 'events', 'telemetry', 'robotlink', 'usage', 'commands', 'catalog', 'missions'],
    storage: NO_STORAGE,
    start: nothing,
    routes: () => {
      const { parts } = ctx;
      const store = parts.get('store');
      const identity = parts.get('identity');
      const snapshots = parts.get('snapshots');
      const link = parts.get('link');
      const runtime = parts.get('runtime');
      const usageMeter = parts.get('usageMeter');
      const isOnline = (id: string): boolean => link.isOnline(id);
      return [
        {
          name: 'robot-admin',
          routes: robotAdminRoutes({
            store,
            registry: parts.get('registryWrites'),
            catalog: parts.get('catalogWrites'),
            identity,
            snapshots,
            events: parts.get('events'),
            commands: parts.get('commands'),
            runs: parts.get('missions').tracker,
            link,
            isOnline,
            rostersChanged: (fleetId) => void runtime.changed(fleetId),
            log: ctx.logFor('api'),
          }),
        },
        { name: 'robots', routes: robotRoutes({ identity, snapshots, isOnline, linkConflict: (id) => link.linkConflict(id) }) },
        { name: 'robot-details', routes: robotDetailsRoutes({ store, identity, snapshots, isOnline, usage: (id) => usageMeter.usage(id) }) },
      ];
    },
    quiesce: nothing,
    stop: nothing,
  };
}
