/** Schedules, their fires, the dispatcher and mission runs (src/missions/scheduling, src/missions/runs). */
import { agentReadRoutes } from '../../api/routes/agent-read.js';
import { missionRuntimeRoutes } from '../../api/routes/mission-runtime.js';
import { missionToolRoutes } from '../../api/routes/mission-tools.js';
import { startMissionRetention } from '../../missions/retention.js';
import { attachToRuntime, MissionScheduling, runtimeGate } from '../../missions/scheduling/scheduling-service.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** The mission runtime: resumes open fires and arms the scheduler at start; retention of fires and runs. */
export function missionsPlugin(ctx: GatewayContext): GatewayPlugin {
  let stopRetention = (): void => {};
  return {
    name: 'missions',
    dependsOn: ['registry', 'events', 'telemetry', 'robotlink', 'commands', 'catalog', 'usage', 'metrics', 'alert-sources', 'idempotency'],
    storage: {
      databases: ['schedules', 'fires', 'runs'],
      prefixes: {
        index: ['schedulesByFleet', 'activeSchedules', 'schedulesByTemplate', 'runsByFleet', 'runsByRobot', 'runsBySchedule', 'activeRunsByTemplate', 'activeRuns'],
      },
    },
    start: async () => {
      const { parts } = ctx;
      const overrides = ctx.opts.overrides ?? {};
      const metrics = parts.get('metrics');
      const runtime = parts.get('runtime');
      const usageMeter = parts.get('usageMeter');
      const missions = parts.provide(
        'missions',
        new MissionScheduling({
          store: parts.get('store'),
          identity: parts.get('identity'),
          snapshots: parts.get('snapshots'),
          catalog: parts.get('catalog'),
          catalogWrites: parts.get('catalogWrites'),
          events: parts.get('events'),
          link: parts.get('link'),
          commands: parts.get('commands'),
          gate: runtimeGate(runtime),
          log: ctx.logFor('missions'),
          onLateness: (outcome, ms) => metrics.schedulerLateness(outcome, ms),
          ...(overrides.clock !== undefined ? { clock: overrides.clock } : {}),
          ...(overrides.missionPassIntervalMs !== undefined ? { passIntervalMs: overrides.missionPassIntervalMs } : {}),
        }),
      );
      attachToRuntime(missions, runtime);
      // Missions completed and failed per robot, counted as runs finish (robot details).
      missions.tracker.onChange((run, previous) => usageMeter.runFinished(run, previous));
      await missions.start();
      stopRetention = startMissionRetention(parts.get('store'), { events: parts.get('events'), log: ctx.logFor('missions') });
    },
    routes: () => {
      const { parts } = ctx;
      const store = parts.get('store');
      const identity = parts.get('identity');
      const missions = parts.get('missions');
      const link = parts.get('link');
      return [
        { name: 'mission-tools', routes: missionToolRoutes({ store, identity, catalog: parts.get('catalog'), catalogWrites: parts.get('catalogWrites'), events: parts.get('events'), idempotency: parts.get('idempotency'), missions, runtime: parts.get('runtime') }) },
        { name: 'mission-runtime', routes: missionRuntimeRoutes({ store, identity, catalog: parts.get('catalog'), missions, link }) },
        { name: 'agent-read', routes: agentReadRoutes({ store, identity, snapshots: parts.get('snapshots'), link, missions, advertised: parts.get('advertised'), commands: parts.get('commands') }) },
      ];
    },
    quiesce: nothing,
    stop: () => {
      stopRetention();
      ctx.parts.peek('missions')?.stop();
      return Promise.resolve();
    },
  };
}
