/** The Prometheus registry behind `GET /metrics` (src/metrics). */
import { join } from 'node:path';
import { COMMAND_ACTIONS } from '../../commands/types.js';
import { certificateExpirySeconds } from '../../metrics/cert-expiry.js';
import { GatewayMetrics } from '../../metrics/gateway-metrics.js';
import { DELIVERY_OUTCOMES } from '../../webhooks/index.js';
import { loadScrapeToken } from '../../metrics/scrape-token.js';
import { BOUND_REASONS } from '../../telemetry/sample/index.js';
import { REJECT_REASONS } from '../../vda5050/inbound/index.js';
import type { GatewayContext } from '../parts.js';
import { NO_STORAGE, nothing, type GatewayPlugin } from '../plugin.js';

/**
 * The registry reads its sources only when scraped; the HTTP server that serves the scrape starts
 * after every source's plugin, so each source is there by then (`get` would name one that is not).
 */
export function metricsPlugin(ctx: GatewayContext): GatewayPlugin {
  let unsubscribe = (): void => {};
  return {
    name: 'metrics',
    dependsOn: ['store'],
    storage: NO_STORAGE,
    start: async () => {
      const p = ctx.parts;
      const file = ctx.opts.metricsTokenFile ?? join(ctx.opts.dataDir, 'metrics-token');
      p.provide('scrapeAuth', await loadScrapeToken(file, ctx.opts.metricsTokenFile === undefined));
      const metrics = p.provide(
        'metrics',
        new GatewayMetrics({
          telemetry: () => p.get('ingest').stats(),
          boundReasons: BOUND_REASONS,
          robotsOnline: () => p.peek('online')?.size ?? 0,
          commandsPending: () => p.peek('commands')?.stats().pending ?? 0,
          stream: () => ({ sockets: p.get('hub').socketCount, droppedSamples: p.get('hub').droppedTotal + p.get('foxglove').droppedTotal }),
          schedulesArmed: () => p.peek('missions')?.scheduler.stats().armed ?? 0,
          readiness: () => p.peek('readiness')?.results() ?? {},
          alertsUnresolved: () => p.peek('alerts')?.service.unresolvedCount ?? 0,
          storeUp: () => p.peek('storeHealth')?.reachable ?? false,
          commandActions: COMMAND_ACTIONS,
          webhooks: { outcomeNames: DELIVERY_OUTCOMES, read: () => p.peek('webhooks')?.stats() ?? { outcomes: {}, queued: 0, deadLettersDropped: 0 } },
          vda5050Inbound: { reasons: REJECT_REASONS, read: () => p.peek('vda5050Inbound')?.stats() ?? { accepted: 0, rejected: [], headerResets: 0 } },
          ...expiryOf(ctx.tls.pem),
        }),
      );
      // Writes a module issues without awaiting them (the store's BackgroundWrites) are counted here.
      unsubscribe = p.get('store').writes.onFailure((failure) => metrics.storeWriteFailed(failure.owner));
    },
    quiesce: nothing,
    stop: () => {
      unsubscribe();
      return Promise.resolve();
    },
  };
}

/**
 * The served certificate's notAfter for the expiry gauge. The metrics start before the HTTP server
 * loads the pair: a file that is no certificate gets no gauge here, and the HTTP server's start then
 * fails naming both files (what an operator needs), instead of a bare OpenSSL error from this parse.
 */
function expiryOf(pem: { cert: Buffer } | null): { certificateExpirySeconds?: number } {
  if (pem === null) return {};
  try {
    return { certificateExpirySeconds: certificateExpirySeconds(pem.cert) };
  } catch {
    return {};
  }
}
