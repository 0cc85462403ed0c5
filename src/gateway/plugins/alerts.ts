/** Alerts: the lifecycle service and its sources (src/fleet/safety/alerts). */
import { alertRoutes, alertView } from '../../api/routes/alerts.js';
import { FleetAlerts } from '../../fleet/safety/alerts/index.js';
import type { GatewayContext } from '../parts.js';
import { nothing, noRoutes, type GatewayPlugin } from '../plugin.js';

/**
 * Built early (the ingest's snapshot hook and the command service's exhaustion observer feed it);
 * its sources subscribe once the robot link and the command service exist (`alertSourcesPlugin`).
 */
export function alertsPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'alerts',
    dependsOn: ['registry', 'events', 'stream'],
    storage: { databases: ['alerts'], prefixes: { index: ['alertsByFleet', 'alertsByRobot', 'alertsUnresolved'] } },
    start: () => {
      const t = ctx.tunables;
      const alerts = ctx.parts.provide(
        'alerts',
        new FleetAlerts({
          store: ctx.parts.get('store'),
          events: ctx.parts.get('events'),
          settings: { offlineAfterMs: t.alertOfflineAfterS * 1000, batteryLowPct: t.alertBatteryLowPct, batteryClearPct: t.alertBatteryClearPct, linkConflictClearMs: t.linkConflictClearMs },
          log: ctx.logFor('alerts'),
        }),
      );
      // New and changed alerts go out on the live stream at once (docs/telemetry-stream.md, alert messages).
      const hub = ctx.parts.get('hub');
      alerts.service.observe((a, change) => hub.publishAlert(a.fleetId, a.robotId, JSON.stringify({ op: 'alert', change, alert: alertView(a) })));
      return Promise.resolve();
    },
    routes: () => [{ name: 'alerts', routes: alertRoutes({ store: ctx.parts.get('store'), identity: ctx.parts.get('identity'), alerts: ctx.parts.get('alerts').service }) }],
    quiesce: nothing,
    stop: async () => {
      await ctx.parts.peek('alerts')?.close();
    },
  };
}

/**
 * The alert sources that read the robot link and command records. After the link-conflict events
 * (robotlink) and before the scheduler starts (its start-up misfires are schedule events).
 */
export function alertSourcesPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'alert-sources',
    dependsOn: ['alerts', 'robotlink', 'commands'],
    storage: { databases: [], prefixes: {} },
    start: () => {
      const commands = ctx.parts.get('commands');
      ctx.parts.get('alerts').start(ctx.parts.get('link'), (commandId) => commands.get(commandId));
      return Promise.resolve();
    },
    routes: noRoutes,
    quiesce: nothing,
    // The alerts plugin's close stops the sources too.
    stop: nothing,
  };
}
