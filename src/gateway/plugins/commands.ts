/** Robot commands: records, the outbox, the audit index, seq reservations (src/commands). */
import { AdvertisedProfiles } from '../../commands/advertised.js';
import { CommandService } from '../../commands/service.js';
import type { GatewayContext } from '../parts.js';
import { nothing, type GatewayPlugin } from '../plugin.js';

/** The command service: loads the outbox at start, flushes its write-behind at stop. */
export function commandsPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'commands',
    dependsOn: ['robotlink', 'alerts', 'metrics'],
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
    quiesce: nothing,
    stop: async () => {
      await ctx.parts.peek('commands')?.close();
    },
  };
}
