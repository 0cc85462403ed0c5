/** Robot commands: records, the outbox, the audit index, seq reservations (src/commands). */
import { commandReadRoutes } from '../../api/routes/command-read.js';
import { controlRobotRoutes } from '../../api/routes/control-robot.js';
import { robotCommandRoutes } from '../../api/routes/robot-commands.js';
import { robotConfigRoutes } from '../../api/routes/robot-config.js';
import { AdvertisedProfiles } from '../../commands/advertised.js';
import { CommandService } from '../../commands/service.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** The command service: loads the outbox at start, flushes its write-behind at stop. */
export function commandsPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'commands',
    dependsOn: ['registry', 'robotlink', 'alerts', 'metrics'],
    storage: { databases: ['commands', 'outbox', 'audit'], prefixes: { meta: ['commandSeq'] } },
    start: () => {
      const { parts } = ctx;
      const link = parts.get('link');
      const metrics = parts.get('metrics');
      parts.provide('advertised', new AdvertisedProfiles(link));
      parts.provide(
        'commands',
        new CommandService({
          ...ctx.opts.overrides?.commands,
          store: parts.get('store'),
          link,
          log: ctx.logFor('commands'),
          observer: { state: (action, state) => metrics.commandState(action, state), acked: (outcome, ms) => metrics.commandAcked(outcome, ms) },
          exhaustion: parts.get('alerts').commands,
        }),
      );
      return Promise.resolve();
    },
    routes: () => {
      const commands = ctx.parts.get('commands');
      const identity = ctx.parts.get('identity');
      const deps = { identity, commands };
      return [
        { name: 'control-robot', routes: controlRobotRoutes(deps) },
        { name: 'robot-commands', routes: robotCommandRoutes(deps) },
        { name: 'robot-config', routes: robotConfigRoutes(deps) },
        { name: 'command-read', routes: commandReadRoutes({ ...deps, store: ctx.parts.get('store') }) },
      ];
    },
    quiesce: nothing,
    stop: async () => {
      await ctx.parts.peek('commands')?.close();
    },
  };
}
