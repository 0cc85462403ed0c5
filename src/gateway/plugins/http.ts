/** The HTTP server: every route, the live stream and Foxglove endpoints, `GET /metrics` (src/http, src/api). */
import { REMOVED_ROUTES } from '../../api/removed-routes.js';
import { accessLog } from '../../http/access-log.js';
import { AuthThrottle } from '../../http/auth-throttle.js';
import { registerMetricsEndpoint } from '../../http/metrics-endpoint.js';
import { RateLimiter } from '../../http/rate-limit.js';
import { createRouter } from '../../http/router.js';
import { startHttpServer } from '../../http/uws-adapter.js';
import { registerFoxgloveEndpoint } from '../../telemetry/foxglove/foxglove-ws.js';
import { registerTelemetryStream } from '../../telemetry/live/stream-ws.js';
import { loadApiDocsAssets } from '../api-docs-assets.js';
import { loadDashboardAssets } from '../dashboard-assets.js';
import { LateMcp, mcpSessionLimits } from '../mcp.js';
import type { GatewayContext } from '../parts.js';
import { NO_STORAGE, noRoutes, type GatewayPlugin } from '../plugin.js';
import { API_INFO } from '../api-info.js';
import { composeServedRoutes } from '../served-routes.js';

const HTTP_DRAIN_MS = 5000;

/**
 * Starts last of the parts that serve: it depends on every plugin that declares routes, so each one's
 * routes and services are there before the port opens.
 */
export function httpPlugin(ctx: GatewayContext): GatewayPlugin {
  let stopped: (() => Promise<void>) | undefined;
  return {
    name: 'http',
    dependsOn: [
      'auth', 'registry', 'events', 'idempotency', 'metrics', 'stream', 'alerts', 'webhooks', 'usage', 'telemetry', 'robotlink', 'faults',
      'commands', 'field-rules', 'catalog', 'missions', 'objects', 'floor-plans', 'robots',
    ],
    storage: NO_STORAGE,
    // Its own routes (the document, health, MCP) are part of the list it composes (served-routes.ts).
    routes: noRoutes,
    start: async () => {
      const { opts, tunables: t, parts } = ctx;
      const apiLog = ctx.logFor('api');
      const hub = parts.get('hub');
      const metrics = parts.get('metrics');
      const scrapeAuth = parts.get('scrapeAuth');
      let httpUrl = '';
      // The API reference is a convenience: a broken docs bundle must not keep the gateway (and its stops) down.
      const apiDocs = await loadApiDocsAssets().catch((err: unknown) => {
        apiLog.warn({ err }, `GET /docs is not served: ${(err as Error).message}`);
        return undefined;
      });
      // Likewise the dashboard: a checkout built without it still serves the API and the robots.
      const dashboard = await loadDashboardAssets().catch((err: unknown) => {
        apiLog.warn({ err }, `GET / (dashboard) is not served: ${(err as Error).message}`);
        return undefined;
      });
      // The MCP endpoint's tools dispatch through the router, which serves the MCP route: built after it.
      const lateMcp = new LateMcp();
      const { routes } = composeServedRoutes({
        groups: ctx.routes.take('http'),
        idempotency: parts.get('idempotency'),
        httpUrl: () => httpUrl,
        // Readiness starts after the server listens: until then, not ready.
        ready: () => parts.peek('readiness')?.ready() ?? false,
        degraded: () => parts.peek('readiness')?.status() === 'degraded',
        ...(apiDocs ? { apiDocs } : {}),
        ...(dashboard ? { dashboard } : {}),
        mcp: lateMcp,
        log: apiLog,
      });
      const router = createRouter(routes, {
        auth: parts.get('keys'),
        rateLimiter: new RateLimiter({ ratePerSecond: t.rateLimitPerSecond, burst: t.rateLimitBurst }),
        authThrottle: new AuthThrottle(),
        log: ctx.logFor('http'),
        removed: REMOVED_ROUTES,
        corsOrigins: opts.corsOrigins ?? [],
      });
      const mcp = lateMcp.start(routes, router, API_INFO.version, ctx.logFor('mcp'), mcpSessionLimits(t));
      // Released when the gateway closes: its exit-flush hook must not outlive it (a process that goes on).
      const access = accessLog(ctx.logFor('http'), opts.logBytes);
      stopped = async () => {
        await mcp.close();
        access.release();
      };
      const http = parts.provide(
        'http',
        await startHttpServer({
          host: opts.host,
          port: opts.httpPort,
          tls: ctx.tls.files,
          handle: router,
          maxBodyBytes: t.maxBodyBytes,
          configure: (app) => {
            registerTelemetryStream(app, hub);
            registerFoxgloveEndpoint(app, { foxglove: parts.get('foxglove'), tickets: parts.get('tickets'), maxBufferedBytes: hub.maxBufferedBytes });
            registerMetricsEndpoint(app, {
              allows: (authorization) => scrapeAuth.allows(authorization),
              render: async () => ({ text: await metrics.render(), contentType: metrics.contentType }),
              log: ctx.logFor('http'),
            });
          },
          log: ctx.logFor('http'),
          onRequestDone: [access, (done) => metrics.httpRequest(done), ...(opts.onRequestDone ?? [])],
        }),
      );
      httpUrl = http.url;
    },
    quiesce: () => {
      ctx.parts.peek('http')?.stopListening();
      return Promise.resolve();
    },
    // Runs after the robot link's quiesce: robots stopped first, then in-flight requests finish.
    stop: async () => {
      const http = ctx.parts.peek('http');
      if (http !== undefined) {
        const deadline = Date.now() + HTTP_DRAIN_MS;
        while (http.inFlight() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
        http.close();
      }
      await stopped?.();
    },
  };
}
