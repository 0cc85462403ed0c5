/**
 * `GET /metrics` on the gateway's uWS app (added through the HTTP server's `configure(app)` hook,
 * like the telemetry WebSocket): the Prometheus text exposition, for a scraper holding the metrics
 * bearer token. It is operational, not part of the REST contract: not in /openapi.json, not
 * authenticated by API keys (an API key belongs to one organization; metrics sum up all of them).
 * docs/operations.md, "Metrics and health".
 *
 * Wrong or missing token: 401 with the catalog's `unauthorized` body and `WWW-Authenticate: Bearer`;
 * nothing else is said. The token is a 256-bit secret compared in constant time, so guessing it is
 * not a concern the failed-authentication throttle needs to cover.
 */
import { STATUS_CODES } from 'node:http';
import type * as uws from './uws.js';
import { apiError } from '../errors/catalog.js';
import { errorResponse } from './router.js';
import type { PlainResponse } from './types.js';
import type { Logger } from 'pino';

export const METRICS_PATH = '/metrics';

export interface MetricsEndpointOptions {
  /** True when the Authorization header carries the metrics token. */
  allows(authorization: string | undefined): boolean;
  /** The exposition text and its content type. */
  render(): Promise<{ text: string; contentType: string }>;
  log?: Logger;
}

/** Adds `GET`/`HEAD /metrics` to `app` (other methods get 405). */
export function registerMetricsEndpoint(app: uws.TemplatedApp, opts: MetricsEndpointOptions): void {
  app.any(METRICS_PATH, (res, req) => {
    let aborted = false;
    res.onAborted(() => {
      aborted = true;
    });
    const method = req.getCaseSensitiveMethod();
    const write = (out: PlainResponse): void => {
      if (aborted) return;
      res.cork(() => {
        res.writeStatus(`${out.status} ${STATUS_CODES[out.status] ?? ''}`);
        for (const k in out.headers) res.writeHeader(k, out.headers[k]!);
        if (method === 'HEAD') {
          res.writeHeader('content-length', String(Buffer.byteLength(out.body)));
          res.endWithoutBody();
        } else {
          res.end(out.body);
        }
      });
    };
    if (method !== 'GET' && method !== 'HEAD') {
      const err = apiError('method_not_allowed', { method: /^[A-Za-z]{1,16}$/.test(method) ? method : '?', path: METRICS_PATH }, { headers: { allow: 'GET, HEAD' } });
      write(errorResponse(err));
      return;
    }
    if (!opts.allows(req.getHeader('authorization') || undefined)) {
      const out = errorResponse(apiError('unauthorized'));
      write({ ...out, headers: { ...out.headers, 'www-authenticate': 'Bearer realm="fleetgw-metrics"' } });
      return;
    }
    opts.render().then(
      ({ text, contentType }) => write({ status: 200, headers: { 'content-type': contentType, 'cache-control': 'no-store' }, body: text }),
      (e: unknown) => {
        opts.log?.error({ err: e }, 'metrics: rendering failed');
        write(errorResponse(apiError('internal')));
      },
    );
  });
}
