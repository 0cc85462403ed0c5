/** Faults from the robots' health reports, and each robot's latest device health (src/fleet/safety/faults, src/fleet/robots/health). */
import { faultRoutes } from '../../api/routes/faults.js';
import { startFaultRetention } from '../../fleet/safety/faults/retention.js';
import { FaultTracker } from '../../fleet/safety/faults/tracker.js';
import { applyHealthReport } from '../../fleet/robots/health/intake.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** The fault tracker, fed by health reports; a fault at error severity or worse is an alert. */
export function faultsPlugin(ctx: GatewayContext): GatewayPlugin {
  let stopRetention = (): void => {};
  return {
    name: 'faults',
    dependsOn: ['registry', 'events', 'alerts', 'robotlink'],
    storage: {
      databases: ['faults', 'deviceHealth'],
      prefixes: { index: ['faultsByFleet', 'faultsByRobot', 'activeFaults', 'activeFaultsByRobot'] },
    },
    start: () => {
      const store = ctx.parts.get('store');
      const alerts = ctx.parts.get('alerts');
      const faults = ctx.parts.provide('faults', new FaultTracker(store, ctx.parts.get('events'), { log: ctx.logFor('fleet') }));
      // `updated` re-evaluates (a warning that became an error raises one, an error downgraded below
      // that resolves it). After a restart the robot's next full health report raises or clears
      // whatever changed meanwhile.
      faults.observe({
        raised: (f) => alerts.faults.onFaultRaised(f),
        cleared: (f) => alerts.faults.onFaultCleared(f),
        updated: (f) => alerts.faults.onFaultRaised(f),
      });
      ctx.parts.get('link').listen({ onHealthReport: (robotId, report) => applyHealthReport(store, faults, robotId, report, Date.now()) });
      stopRetention = startFaultRetention(store, { log: ctx.logFor('fleet') });
      return Promise.resolve();
    },
    routes: () => [{ name: 'faults', routes: faultRoutes({ store: ctx.parts.get('store'), identity: ctx.parts.get('identity') }) }],
    quiesce: nothing,
    stop: () => {
      stopRetention();
      return Promise.resolve();
    },
  };
}
