/** The live telemetry stream: tickets, the stream hub, the Foxglove hub and the key revocation sweep (src/telemetry). */
import { streamTicketRoutes } from '../../api/routes/stream-tickets.js';
import { FoxgloveHub } from '../../telemetry/foxglove/index.js';
import { STREAM_PATH, startKeyRevocationSweep } from '../../telemetry/live/index.js';
import { StreamHub } from '../../telemetry/live/index.js';
import { TicketIssuer } from '../../telemetry/live/index.js';
import type { GatewayContext } from '../parts.js';
import { NO_STORAGE, nothing, type GatewayPlugin } from '../plugin.js';

/** Live sockets are admitted by ticket and closed when their key stops being usable. */
export function streamPlugin(ctx: GatewayContext): GatewayPlugin {
  let stopKeySweep = (): void => {};
  return {
    name: 'stream',
    dependsOn: ['auth', 'registry'],
    storage: NO_STORAGE,
    start: () => {
      const keys = ctx.parts.get('keys');
      const t = ctx.tunables;
      const keyUsable = (apiKeyId: string, nowMs: number): boolean => keys.keyUsable(apiKeyId, nowMs);
      const tickets = ctx.parts.provide('tickets', new TicketIssuer({ keyUsable }));
      const hub = ctx.parts.provide(
        'hub',
        new StreamHub({ tickets, maxSockets: t.streamMaxSockets, maxSocketsPerKey: t.streamMaxSocketsPerKey, maxSocketsPerOrg: t.streamMaxSocketsPerOrg }),
      );
      // The Foxglove endpoint (docs/foxglove.md): its sockets are admitted, bounded and revoked by `hub`.
      ctx.parts.provide('foxglove', new FoxgloveHub({ hub }));
      stopKeySweep = startKeyRevocationSweep({ hub, tickets, keyUsable, log: ctx.logFor('telemetry') });
      return Promise.resolve();
    },
    routes: () => {
      const { parts } = ctx;
      // The stream is served by the http plugin, which starts later: its URL is read per ticket.
      const streamUrl = (): string => {
        const http = parts.peek('http');
        return http === undefined ? '' : `${http.url.replace(/^http/, 'ws')}${STREAM_PATH}`;
      };
      return [{ name: 'stream-tickets', routes: streamTicketRoutes({ identity: parts.get('identity'), tickets: parts.get('tickets'), streamUrl }) }];
    },
    quiesce: nothing,
    stop: () => {
      stopKeySweep();
      ctx.parts.peek('hub')?.close();
      return Promise.resolve();
    },
  };
}
