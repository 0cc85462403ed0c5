/** The robot link's gRPC server and what the gateway hangs on it (src/robotlink). */
import { recordLinkConflicts } from '../../events/link-conflict.js';
import { LinkSet } from '../../protocol/link-set.js';
import { startRobotLinkServer } from '../../robotlink/server.js';
import type { GatewayContext } from '../parts.js';
import { NO_STORAGE, noRoutes, type GatewayPlugin } from '../plugin.js';

/**
 * Listens for robots; hands their telemetry to the ingest and its receipts back, records link
 * conflicts, keeps the set of robots online. Its quiesce ends every robot stream (robots stop
 * sending before the parts that serve them stop).
 */
export function robotLinkPlugin(ctx: GatewayContext): GatewayPlugin {
  return {
    name: 'robotlink',
    dependsOn: ['events', 'telemetry', 'metrics', 'stream'],
    storage: NO_STORAGE,
    start: async () => {
      const { opts, tunables: t, parts } = ctx;
      const server = parts.provide(
        'linkServer',
        await startRobotLinkServer({
          store: parts.get('store'),
          host: opts.host,
          port: opts.grpcPort,
          tls: ctx.tls.grpc,
          keepaliveTimeMs: t.robotKeepaliveMs,
          keepaliveTimeoutMs: t.robotKeepaliveTimeoutMs,
          linkConflict: { clearAfterMs: t.linkConflictClearMs },
          log: ctx.logFor('robotlink'),
        }),
      );
      // Every robot link joins this set; what listens here hears robots on any link.
      const link = parts.provide('link', new LinkSet());
      link.add(server.link);
      const ingest = parts.get('ingest');
      const foxglove = parts.get('foxglove');
      // Before anything else listens, so a conflict is on record before any command reacts to it.
      recordLinkConflicts(parts.get('events'), link);
      link.listen({ telemetrySink: (robotId, fleetId) => ingest.sinkFor(robotId, fleetId) });
      // Acknowledged telemetry: durable points become receipts to the robots.
      ingest.onDurable((robotId, epoch, seq) => link.telemetryDurable(robotId, epoch, seq));
      link.setTelemetryDurableSource((robotId) => ingest.durableOf(robotId));
      const online = new Set<string>();
      parts.provide('online', online);
      link.listen({ onOnline: (robotId) => online.add(robotId), onOffline: (robotId) => online.delete(robotId) });
      link.listen({ onOnline: (robotId, info) => foxglove.robotOnline(robotId, info.fleetId), onOffline: (robotId) => foxglove.robotOffline(robotId) });
      ingest.onBackpressure((paused) => link.setReadPaused(paused));
    },
    routes: noRoutes,
    quiesce: async () => {
      await ctx.parts.peek('linkServer')?.close({ restartHoldMs: ctx.opts.restartHoldMs ?? 0 });
    },
    stop: () => {
      // After a graceful close this is a no-op; it drops whatever a close that failed left open.
      ctx.parts.peek('linkServer')?.forceClose();
      return Promise.resolve();
    },
  };
}
