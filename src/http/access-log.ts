/**
 * The access log: one line per HTTP request, written by a {@link RequestObserver} on the adapter's
 * completion hook. It names the route template, never the raw path (ids, and whatever a caller pasted
 * into it) nor the query string (stream tickets travel there), and the key's id, never a credential.
 */
import type { Logger } from 'pino';
import type { RequestDoneInfo, RequestObserver } from './request-done.js';

/** An observer that writes each finished request as one `info` line on `log`. */
export function accessLog(log: Logger): RequestObserver {
  return (info: RequestDoneInfo): void => {
    if (!log.isLevelEnabled('info')) return;
    log.info(
      {
        method: info.method,
        route: info.route,
        status: info.status,
        // 0.1 ms is finer than anything an operator acts on, and keeps the line short.
        durationMs: Math.round(info.durationMs * 10) / 10,
        keyId: info.keyId,
        requestId: info.requestId,
        ...(info.traceId !== null ? { traceId: info.traceId } : {}),
        ...(info.aborted ? { aborted: true } : {}),
      },
      `${info.method} ${info.route ?? '(no route)'} ${info.status}`,
    );
  };
}
